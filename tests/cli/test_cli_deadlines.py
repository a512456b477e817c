"""``--timeout`` and ``--total-timeout`` (issue 27, item 9): on every command that takes a chat
model, recorded in run.json's runtime settings, and a hung server fails an item at the total
deadline with a reason naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_helpers import CHAT_COMMANDS
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.testing import FakeOpenAIServer, FakeReply


@pytest.mark.parametrize("command", CHAT_COMMANDS, ids=" ".join)
def test_every_chat_command_takes_both_deadlines(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--timeout SECONDS" in result.output and "--total-timeout SECONDS" in result.output


RUN = ["kalma", "run", "--model", "vllm/fake-model", "--limit", "1"]
RUN += ["--timeout", "0.3", "--total-timeout", "1"]


def hanging(body: object) -> FakeReply:
    return FakeReply(delay=60)


def test_a_hung_server_fails_the_item_at_the_total_deadline(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=hanging) as server:
        result = CliRunner().invoke(
            main,
            [*RUN, "--base-url", server.base_url, "--data-dir", str(data_dir), "--out", str(out)],
        )
    assert result.exit_code == 3, result.output  # a model failure, said on stderr
    info = json.loads((out / "run.json").read_text())
    assert info["runtime"]["timeout"] == 0.3 and info["runtime"]["total_timeout"] == 1.0
    (record,) = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert record["status"] == "failed"
    assert "total deadline of 1 s" in json.dumps(record)
