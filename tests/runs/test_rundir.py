"""Run directories: resume, torn last line, refusal to mix configurations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, DataError
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
    with RunDir.open(tmp_path, {"mode": "paper"}) as first:
        first.append({"id": "a"})
    with pytest.raises(ConfigError, match=r"differs in: config.mode\) and finished records"):
        RunDir.open(tmp_path, {"mode": "reference"})
    run = RunDir.open(tmp_path, {"mode": "reference"}, overwrite=True)
    assert run.done == set()


def test_a_run_made_before_an_option_existed_resumes_while_the_option_is_unset(
    tmp_path: Path,
) -> None:
    """A field added to a task's config later (e.g. conner score's ``lm_base_url``) is None in a
    new call: the old run resumes as itself. Set to a value, it is another run."""
    with RunDir.open(tmp_path, {"lm": "local"}, data={"answers": "abc"}) as run:
        run.append({"id": "a"})
    old_id = json.loads((tmp_path / "run.json").read_text())["run_id"]
    again = RunDir.open(tmp_path, {"lm": "local", "lm_base_url": None}, data={"answers": "abc"})
    assert again.done == {"a"}
    assert again.info["run_id"] == old_id and again.info["config"] == {"lm": "local"}
    with pytest.raises(ConfigError, match=r"differs in: config.lm_base_url"):
        RunDir.open(
            tmp_path, {"lm": "local", "lm_base_url": "http://x/v1"}, data={"answers": "abc"}
        )
    with pytest.raises(ConfigError, match=r"differs in: config.lm, config.lm_base_url"):
        RunDir.open(tmp_path, {"lm": "hf:x", "lm_base_url": None}, data={"answers": "abc"})
    with pytest.raises(ConfigError, match=r"differs in: config.extra, data.answers"):
        RunDir.open(tmp_path, {"lm": "local", "extra": None}, data={"answers": "xyz"})


def test_a_run_json_whose_id_was_edited_is_refused(tmp_path: Path) -> None:
    with RunDir.open(tmp_path, {"mode": "paper"}) as first:
        first.append({"id": "a"})
    info = json.loads((tmp_path / "run.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps(info | {"run_id": "0" * 64}))
    with pytest.raises(DataError, match=r"run.json: was edited.*restore the file.*--overwrite"):
        RunDir.open(tmp_path, {"mode": "paper"})


@pytest.mark.parametrize("held", [[], [{"id": "a", "status": "failed"}]], ids=["empty", "failed"])
def test_another_config_over_no_finished_record_starts_over(
    tmp_path: Path, held: list[dict[str, str]]
) -> None:
    """A run that finished nothing (aborted at its first item, every item failed) is no
    result to protect: a new configuration replaces it, and says so, instead of demanding
    --overwrite."""
    with RunDir.open(tmp_path, {"u": 3}) as first:
        for record in held:
            first.append(record)
    old_id = first.info["run_id"]
    run = RunDir.open(tmp_path, {"u": 2})
    assert run.info["config"] == {"u": 2} and run.info["run_id"] != old_id
    assert run.ids == [] and (tmp_path / "samples.jsonl").exists() is False
    assert run.info["started_over"]["previous_run_id"] == old_id
    assert run.info["started_over"]["differs_in"] == ["config.u"]
    assert run.started_over == (
        f"{tmp_path} held a run of another configuration (differs in: config.u) with no "
        "finished record; started over with this one"
    )
    assert json.loads((tmp_path / "run.json").read_text())["started_over"]["differs_in"] == [
        "config.u"
    ]
    assert RunDir.open(tmp_path, {"u": 2}).started_over is None  # the same run resumes


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
