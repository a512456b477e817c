"""A ``--base-url`` with credentials (issue 27, item 10): the run works against the real URL,
and no file of the run directory nor any line printed holds the secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.testing import FakeOpenAIServer, FakeReply

SECRETS = ("pw-s3cret", "q-s3cret")
COMMAND = ["kalma", "run", "--model", "vllm/fake-model", "--limit", "4", "--allow-failures"]


def half_refused(body: dict[str, object]) -> str | FakeReply:
    text = str(body.get("messages"))
    if "Crane" in text:  # one question fails, with the server's own message
        return FakeReply(status=400, text="the key q-s3cret is not allowed here")
    return "An answer [NA]."


def test_credentials_in_base_url_are_stored_nowhere(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=half_refused) as server:
        host = server.base_url.split("://", 1)[1]
        url = f"http://alice:pw-s3cret@{host}?api-key=q-s3cret"
        result = CliRunner().invoke(
            main,
            [*COMMAND, "--base-url", url, "--data-dir", str(data_dir), "--out", str(out)],
        )
        paths = {r.path for r in server.received}
    assert result.exit_code == 0, result.output
    assert paths == {"/v1/chat/completions?api-key=q-s3cret"}  # the real URL, route first
    stored = {p.name: p.read_text() for p in out.iterdir() if p.is_file()}
    assert {"run.json", "samples.jsonl", "metrics.json"} <= set(stored)
    assert "***@" in stored["run.json"] and "api-key=***" in stored["run.json"]
    assert "the key *** is not allowed here" in stored["samples.jsonl"]  # the reason, scrubbed
    for secret in SECRETS:
        assert secret not in result.output
        for name, text in stored.items():
            assert secret not in text, (name, secret)
