"""Issue 37 in the run directory: a record of another task's shape is refused everywhere (resume,
report, merge, export) naming its line; records without their run.json are not adopted; an
edited ``task`` is refused on resume and a count edited out of shape is named; ``runs report``
does not write beside a running writer; CSV cells hold no raw control characters."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_export import ExportConfig, ExportTask  # tests/runs, on sys.path as pytest collects it

from citegraph.cli import main
from citegraph.errors import DataError
from citegraph.io import formula_safe
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import MockChat
from citegraph.runs import (
    RunBusy,
    RunDir,
    RunFileWarning,
    Runtime,
    export_run,
    finalize,
    merge_runs,
    run_sync,
    run_task_async,
    task_of_run,
)

SRC = Path(__file__).resolve().parents[2] / "src"
#: A process that holds a run directory's lock until it reads a line.
HOLDER = (
    "import sys; from pathlib import Path; from citegraph.runs._lock import lock_run_dir; "
    "lock_run_dir(Path(sys.argv[1])); print('locked', flush=True); sys.stdin.readline()"
)
#: A line of another task's shape (a CAQA judge's), as the issue's probe appended it.
FOREIGN = {"id": "specific-2", "label": "supportive"}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _kalma(
    data_dir: Path, out: Path, limit: int = 2, model: MockChat | None = None, **config: Any
) -> Any:
    return run_kalma(
        out,
        KalmaRunConfig(model="mock", **config),
        runtime=Runtime(limit=limit),
        data_dir=data_dir,
        model=model or MockChat("I cannot say [NA]."),
    )


def _append(path: Path, record: dict[str, Any]) -> None:
    with (path / "samples.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def _edit(out: Path, **changes: Any) -> None:
    info = json.loads((out / "run.json").read_text())
    info.update(changes)
    (out / "run.json").write_text(json.dumps(info, indent=2))


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


# --- item 6: records of another task's shape ---------------------------------------------------

FOREIGN_LINE = r"samples.jsonl:3, field 'citations': record \"specific-2\" is not a record of task"


def test_a_foreign_record_is_refused_by_a_resume_before_any_model_call(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    _append(out, FOREIGN)
    model = MockChat("I cannot say [NA].")
    with pytest.raises(DataError, match=FOREIGN_LINE + r" 'kalma.run'.*remove the line"):
        _kalma(data_dir, out, limit=4, model=model)
    assert model.calls == 0  # refused before any work, not after it
    assert len((out / "samples.jsonl").read_text().splitlines()) == 3  # nothing appended


def test_a_foreign_record_is_refused_by_report_and_export_naming_its_line(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    _append(out, FOREIGN)
    for command in (["runs", "report", str(out)], ["runs", "export", str(out), "--format", "csv"]):
        result = _invoke(*command)
        assert result.exit_code == 2, (command, result.output)
        assert "samples.jsonl:3, field 'citations'" in " ".join(result.output.split())
        assert "Traceback" not in result.output
    assert not (out / "export").exists()  # no row written as status ok
    with pytest.raises(DataError, match=FOREIGN_LINE):
        export_run(out, tmp_path / "exported", "jsonl")


def test_a_foreign_record_in_a_shard_is_not_merged(data_dir: Path, tmp_path: Path) -> None:
    shard = tmp_path / "s0"
    _kalma(data_dir, shard)
    _append(shard, FOREIGN)
    with pytest.raises(DataError, match=r"s0/" + FOREIGN_LINE):
        merge_runs([shard], tmp_path / "merged")
    assert not (tmp_path / "merged" / "samples.jsonl").exists()
    result = _invoke("runs", "merge", str(shard), "--out", str(tmp_path / "merged2"))
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_failed_record_of_any_shape_is_still_retried(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    _append(out, {"id": "specific-2", "status": "failed", "error": "server down"})
    again = _kalma(data_dir, out, limit=3)
    assert (again.n_resumed, again.n_done_now, again.n_failed) == (2, 1, 0)


# --- item 7: orphaned records ------------------------------------------------------------------


def test_records_without_their_run_json_are_not_adopted(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    (out / "run.json").unlink()
    (out / "metrics.json").unlink()
    model = MockChat("x [NA].")
    with pytest.raises(DataError, match=r"samples.jsonl: holds records but .*run.json is missing"):
        _kalma(data_dir, out, limit=3, model=model, temperature=0.1)
    assert model.calls == 0 and not (out / "run.json").exists()
    with pytest.raises(DataError, match=r"restore run.json .*or rerun with --overwrite"):
        RunDir.open(out, {"m": 1})
    fresh = run_kalma(  # --overwrite starts afresh
        out,
        KalmaRunConfig(model="mock", temperature=0.1),
        runtime=Runtime(limit=3, overwrite=True),
        data_dir=data_dir,
        model=model,
    )
    assert (fresh.n_resumed, fresh.n_done_now) == (0, 3)


def test_an_empty_or_torn_samples_file_without_run_json_is_no_orphan(tmp_path: Path) -> None:
    (tmp_path / "samples.jsonl").write_text('{"id": "a", "v"')  # a torn line only
    with RunDir.open(tmp_path, {"m": 1}) as run:
        assert run.ids == []
    assert json.loads((tmp_path / "run.json").read_text())["config"] == {"m": 1}


# --- item 8: run.json edited by hand -------------------------------------------------------------


def test_an_edited_task_is_refused_on_resume_not_restored(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    _edit(out, task="caqa.judge")
    model = MockChat("I cannot say [NA].")
    with pytest.raises(DataError, match=r"run.json: names task \"caqa.judge\", but .*restore"):
        _kalma(data_dir, out, limit=3, model=model)
    assert model.calls == 0
    assert json.loads((out / "run.json").read_text())["task"] == "caqa.judge"  # left as found


def test_a_run_json_without_task_gets_it_on_resume(tmp_path: Path) -> None:
    with RunDir.open(tmp_path, {"m": 1}) as run:
        run.append({"id": "a"})
    with RunDir.open(tmp_path, {"m": 1}, task="demo.task") as run:
        assert run.info["task"] == "demo.task"


@pytest.mark.parametrize("value", [-5, "12", True, 2.5])
def test_a_count_edited_out_of_shape_is_named_and_left_out(
    data_dir: Path, tmp_path: Path, value: object
) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    info = json.loads((out / "run.json").read_text())
    _edit(out, runtime=info["runtime"] | {"n_total": value})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metrics = finalize(task_of_run(info), RunDir.read(out))
    named = [str(w.message) for w in caught if w.category is RunFileWarning]
    assert len(named) == 1 and "run.json, field 'runtime.n_total'" in named[0]
    assert "is not a count" in named[0]
    assert metrics["progress"]["n_total"] is None  # never negative
    result = _invoke("runs", "report", str(out))
    assert result.exit_code == 0, result.output
    assert "warning: " in result.output and "field 'runtime.n_total'" in result.output


def test_negative_counts_of_shards_give_no_negative_total(tmp_path: Path) -> None:
    for shard in ("s0", "s1"):
        runtime = {"shard": f"{shard[1]}/2", "n_total_unsharded": -5, "limit": -1}
        with RunDir.open(tmp_path / shard, {"m": 1}, runtime=runtime) as run:
            run.append({"id": shard})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        merged = merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "merged")
    named = " ".join(str(w.message) for w in caught if w.category is RunFileWarning)
    assert "s0/run.json, field 'runtime.n_total_unsharded': -5 is not a count" in named
    assert "s1/run.json, field 'runtime.limit': -1 is not a count" in named
    assert "n_total" not in merged.info["runtime"] and "limit" not in merged.info["runtime"]


# --- item 12: runs report beside a writer; control characters in CSV cells -----------------------


def test_runs_report_does_not_write_while_another_process_holds_the_lock(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    _kalma(data_dir, out)
    before = (out / "metrics.json").read_bytes()
    (out / "metrics.json").unlink()
    env = {"PYTHONPATH": str(SRC)}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        result = _invoke("runs", "report", str(out))
        assert result.exit_code == 2, result.output
        text = " ".join(result.output.split())
        assert f"is being written by pid {child.pid}" in text and "runs report after" in text
        assert not (out / "metrics.json").exists()  # nothing written beside the writer
        with pytest.raises(RunBusy):
            RunDir.reopen(out)
    finally:
        child.communicate("\n", timeout=30)
    result = _invoke("runs", "report", str(out))  # once it is done: reported
    assert result.exit_code == 0, result.output
    assert (
        json.loads((out / "metrics.json").read_bytes())["n_answers"]
        == json.loads(before)["n_answers"]
    )
    assert not (out / ".lock").exists()  # the report gave the lock back


def test_control_characters_are_visible_escapes_in_csv_cells(tmp_path: Path) -> None:
    hostile = "a\x1b]8;;http://evil\x07link\x1b]8;;\x07 \x1b[2J\x00\x9b b"
    assert formula_safe(hostile) == (
        "a\\x1b]8;;http://evil\\x07link\\x1b]8;;\\x07 \\x1b[2J\\x00\\x9b b"
    )
    assert formula_safe("keeps\ttabs\nand lines\r\n") == "keeps\ttabs\nand lines\r\n"
    assert formula_safe("\x1b=1") == "\\x1b=1"
    out = tmp_path / "run"
    run_sync(run_task_async(ExportTask(ExportConfig(n=1), set()), out))
    _append(out, {"id": "h", "question": hostile, "note": hostile})
    written = export_run(out, tmp_path / "out", "csv")["samples"]
    raw = written.read_bytes()
    assert b"\x1b" not in raw and b"\x07" not in raw and b"\x00" not in raw
    with written.open(encoding="utf-8", newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["id"] == "h")
    assert row["note"] == row["title"] == formula_safe(hostile)
