"""Model-server URLs and answers on the command line (issue 37, items 2 and 4): a malformed
``--base-url`` exits 2 before any work with the secret masked; the recorded command and the
Ctrl-C resume hint hide credentials, however malformed; ``--max-response-mb`` caps a server's
answer (exit 3 with the reason) and is recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _cli_helpers import CHAT_COMMANDS
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.cli._exit import resume_command
from citegraph.cli._streams import command_line
from citegraph.runs import Runtime
from citegraph.testing import FakeOpenAIServer, FakeReply

SECRET = "S3CRETPASS"
RUN = ["kalma", "run", "--model", "vllm/fake-model", "--limit", "1"]
MALFORMED = [
    "alice:S3CRETPASS@127.0.0.1:8000/v1",
    "http:/alice:S3CRETPASS@127.0.0.1:8000/v1",
    "http://alice:S3CRETPASS@[::1/v1",
    "http://alice:S3CRETPASS@127.0.0.1:P/v1",
    "http://127.0.0.1:8000/v1 x?api-key=S3CRETPASS",
    "http://127.0.0.1:8000/v1#api-key=S3CRETPASS",
    "http://127.0.0.1:8000/v1?mode=1;api-key=S3CRETPASS",
]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_base_url_exits_2_before_any_work(
    url: str, tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "run"
    args = [*RUN, "--base-url", url, "--data-dir", str(data_dir), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "--base-url" in result.output and "Traceback" not in result.output
    assert SECRET not in result.output and "alice" not in result.output
    assert not out.exists()  # nothing written, nothing to leak


def test_a_malformed_scorer_url_exits_2_too(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    args = ["kalma", "score", str(answers), "--kg", str(tmp_path / "kg.ttl"), "--nli"]
    args += ["vllm/nli", "--nli-base-url", MALFORMED[0], "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "--nli-base-url" in result.output and SECRET not in result.output


def test_ask_refuses_a_malformed_base_url(data_dir: Path) -> None:
    args = ["ask", "Where was Stephen Crane born?", "--model", "vllm/m"]
    args += ["--base-url", MALFORMED[1], "--data-dir", str(data_dir)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "base URL" in result.output and SECRET not in result.output


def test_the_recorded_command_hides_a_key_after_a_space(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "http://127.0.0.1:8000/v1 x?api-key=S3CRETPASS"
    monkeypatch.setattr(sys, "argv", ["citegraph", *RUN, "--base-url", url])
    assert SECRET not in command_line()
    assert SECRET not in (Runtime(command=command_line()).command or "")
    assert "api-key=***" in command_line()


@pytest.mark.parametrize(
    "url",
    ["http://alice:S3CRETPASS@127.0.0.1:8000/v1", "http://h/v1?api-key=S3CRETPASS", MALFORMED[0]],
)
def test_the_resume_hint_hides_credentials(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["citegraph", *RUN, f"--base-url={url}", "--overwrite"])
    hint = resume_command()
    assert SECRET not in hint and "alice" not in hint and "--overwrite" not in hint
    assert hint.startswith("citegraph kalma run") and "***" in hint


@pytest.mark.parametrize("command", CHAT_COMMANDS, ids=" ".join)
def test_every_chat_command_takes_the_response_cap(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--max-response-mb MIB" in result.output


def test_a_body_past_the_cap_fails_the_item_with_exit_3(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    reply = FakeReply(text="An answer [NA].", filler=3 * 2**20)
    with FakeOpenAIServer(lambda _b: reply) as server:
        args = [*RUN, "--base-url", server.base_url, "--max-response-mb", "1"]
        result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir), "--out", str(out)])
    assert result.exit_code == 3, result.output
    info = json.loads((out / "run.json").read_text())
    assert info["runtime"]["max_response_mb"] == 1.0
    (record,) = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert record["status"] == "failed"
    assert "more than the 1 MiB" in json.dumps(record)
    assert len((out / "samples.jsonl").read_bytes()) < 10_000
