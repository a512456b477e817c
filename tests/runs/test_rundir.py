"""Run directories: resume, torn last line, refusal to mix configurations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.errors import ConfigError
from citegraph.runs import RunDir


def test_append_and_resume(tmp_path: Path) -> None:
    config = {"mode": "paper", "nli": "lexical"}
    with RunDir.open(tmp_path, config, data={"answers": "abc"}) as run:
        run.append({"id": "a", "score": 1})
        run.append({"id": "b", "score": 0})
    again = RunDir.open(tmp_path, config, data={"answers": "abc"})
    assert again.done == {"a", "b"}
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["config"] == config and info["versions"]["python"]


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    config = {"mode": "paper"}
    with RunDir.open(tmp_path, config) as run:
        run.append({"id": "a"})
    with (tmp_path / "samples.jsonl").open("a") as fh:
        fh.write('{"id": "b", "sco')  # killed mid-write
    run = RunDir.open(tmp_path, config)
    assert run.done == {"a"}
    run.append({"id": "b"})
    run.close()
    lines = (tmp_path / "samples.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["a", "b"]


def test_a_dropped_torn_line_is_counted_in_run_json(tmp_path: Path) -> None:
    """Issue 17, item 5: the dropped line is counted on the RunDir and, for every later
    reader, in run.json (the line itself is gone from samples.jsonl)."""
    config = {"mode": "paper"}
    with RunDir.open(tmp_path, config) as run:
        run.append({"id": "a"})
    assert run.torn_dropped == 0 and "torn_lines_dropped" not in run.info
    with (tmp_path / "samples.jsonl").open("a") as fh:
        fh.write('{"id": "b", "sco')
    run = RunDir.open(tmp_path, config)
    assert run.torn_dropped == 1 and run.info["torn_lines_dropped"] == 1
    run.close()
    again = RunDir.open(tmp_path, config)
    assert again.torn_dropped == 0
    assert json.loads((tmp_path / "run.json").read_text())["torn_lines_dropped"] == 1
    assert again.info["torn_lines_dropped"] == 1


def test_other_config_is_refused_unless_overwrite(tmp_path: Path) -> None:
    RunDir.open(tmp_path, {"mode": "paper"}).close()
    with pytest.raises(ConfigError, match=r"differs in: config.mode"):
        RunDir.open(tmp_path, {"mode": "reference"})
    run = RunDir.open(tmp_path, {"mode": "reference"}, overwrite=True)
    assert run.done == set()


@pytest.mark.parametrize(
    ("content", "says"),
    [(b'{"run_id": ', "invalid JSON"), (b"\x91\x92", "not UTF-8"), (b"[1]", "JSON object")],
    ids=["torn", "not-utf8", "not-object"],
)
def test_a_corrupt_run_json_is_named(tmp_path: Path, content: bytes, says: str) -> None:
    from citegraph.errors import DataError
    from citegraph.runs import read_run_info

    (tmp_path / "run.json").write_bytes(content)
    for read in (lambda: RunDir.open(tmp_path, {"a": 1}), lambda: read_run_info(tmp_path)):
        with pytest.raises(DataError, match=says) as caught:
            read()
        assert str(tmp_path / "run.json") in str(caught.value)
