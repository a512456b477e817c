"""Untrusted text (a server's error, a model's reply, a path given on the command line) is
printed as text: rich markup in it is shown, not read (no MarkupError, no live hyperlink), and
terminal control characters (ESC sequences, C1 controls) and lone surrogates never reach the
terminal (issue 27, item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_helpers import _cache, invoke  # noqa: F401 (_cache: autouse fixture)

from citegraph.cli._streams import literal, markup_escaped, shown
from citegraph.testing import FakeOpenAIServer, FakeReply

#: Markup, an OSC 8 hyperlink, a title change, a cursor move, a C1 CSI, BEL and a lone surrogate.
HOSTILE = (
    "[link=http://evil]x[/link] [/] [bold]b "
    "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\ \x1b]0;pwned\x07 \x1b[2J\x1b[H \x9b31m"
)
#: With a lone surrogate too (what run directories store is another part of issue 27: the
#: runs that this file makes record no surrogate).
HOSTILE_SURROGATE = HOSTILE + " \ud800 end"


def assert_inert(text: str) -> None:
    """No ESC, no C1 control, no BEL, no lone surrogate in ``text``."""
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    assert "\ud800" not in text


def test_shown_neutralises_controls_and_surrogates_and_keeps_newline_and_tab() -> None:
    assert shown("a\tb\r\nc") == "a\tb\nc"
    assert shown("\x1b]8;;http://e\x1b\\x") == "\\x1b]8;;http://e\\x1b\\x"
    assert shown("\x9b\x07\x00\x7f\ud800") == "\\x9b\\x07\\x00\\x7f\ufffd"
    assert markup_escaped("[link=x]y[/link]") == "\\[link=x]y\\[/link]"
    assert literal("[/]").plain == "[/]"


def test_a_hostile_server_error_is_printed_literally(tmp_path: Path, data_dir: Path) -> None:
    def refused(body: object) -> FakeReply:
        return FakeReply(status=400, text=HOSTILE)

    with FakeOpenAIServer(reply=refused) as server:
        base = ["kalma", "run", "--model", "vllm/fake-model", "--base-url", server.base_url]
        base += ["--limit", "2", "--data-dir", str(data_dir)]
        failed = invoke(*base, "--out", tmp_path / "a")
        allowed = invoke(*base, "--out", tmp_path / "x[/]y", "--allow-failures")
    assert failed.exit_code == 3, failed.output
    stderr = " ".join(failed.stderr.split())
    # the markup is shown as written; a URL in a server's message is shown redacted (the
    # unreadable "http://evil]x[/link]" wholly), as every URL in a failure reason is
    assert "[link=http://*** [/] [bold]b" in stderr
    assert "\\x1b]8;;http://***" in stderr and "\\x9b31m" in stderr
    assert_inert(failed.output)
    assert allowed.exit_code == 0, allowed.output
    assert "x[/]y" in allowed.stdout and "2 questions have no answer" in allowed.stdout
    assert_inert(allowed.output)
    report = invoke("runs", "report", tmp_path / "x[/]y")
    assert report.exit_code == 3 and "[link=http://*** [/] [bold]b" in report.stderr
    assert_inert(report.output)


@pytest.mark.needs("spacy")
def test_a_hostile_model_reply_is_printed_literally_by_ask(data_dir: Path) -> None:
    with FakeOpenAIServer(reply=lambda body: FakeReply(text=HOSTILE_SURROGATE)) as server:
        args = ["ask", "Who was Stephen Crane?", "--model", "vllm/fake-model"]
        result = invoke(*args, "--base-url", server.base_url, "--data-dir", data_dir)
        as_json = invoke(*args, "--base-url", server.base_url, "--data-dir", data_dir, "--json")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "[link=http://evil]x[/link] [/] [bold]b" in out
    assert "\\x1b]8;;http://evil\\x1b\\click" in out and "\ufffd end" in out
    assert_inert(result.output)
    assert as_json.exit_code == 0, as_json.output
    assert "\\u001b]8;;http://evil" in as_json.stdout and "\\ud800" in as_json.stdout
    assert_inert(as_json.output)


def test_ask_refuses_a_question_that_is_not_utf8_with_a_usage_error() -> None:
    # sys.argv holds `citegraph ask $'\xff\xfe Who?'` as surrogateescape'd text
    result = invoke("ask", b"\xff\xfe Who?".decode("utf-8", "surrogateescape"), "--model", "mock")
    assert result.exit_code == 2, result.output
    assert "QUESTION" in result.output and "not UTF-8" in result.output
    assert "Traceback" not in result.output
    assert_inert(result.output)
