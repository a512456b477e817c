"""A run's state comes from the run itself: a finished run copied with fresh file times is still
finished; records appended after metrics.json make it in progress."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from citegraph.runs import (
    METRICS_FILE,
    SAMPLES_FILE,
    Record,
    RunDir,
    Runtime,
    Task,
    register_task,
    run_state,
    run_sync,
    run_task_async,
    samples_fingerprint,
)


def _finished_run(path: Path) -> Path:
    """A run of two records whose metrics.json was written after them (as the engine does)."""
    with RunDir.open(path, {"task": "testing.state"}) as run:
        run.append({"id": "a", "value": 1})
        run.append({"id": "b", "value": 2})
    run.write_metrics({"n": 2, "progress": {"n_done": 2, "n_failed": 0}})
    return path


def _copied_with_fresh_times(source: Path, target: Path) -> Path:
    """``cp -r`` then touch: samples.jsonl ends up newer than metrics.json (a checkout does
    this too), which the old mtime comparison read as 'in progress'."""
    shutil.copytree(source, target)
    os.utime(target / METRICS_FILE, ns=(1_000_000_000, 1_000_000_000))
    os.utime(target / SAMPLES_FILE, ns=(2_000_000_000, 2_000_000_000))
    return target


def test_metrics_record_the_samples_file_they_were_computed_from(tmp_path: Path) -> None:
    run = _finished_run(tmp_path / "run")
    metrics = json.loads((run / METRICS_FILE).read_text(encoding="utf-8"))
    data = (run / SAMPLES_FILE).read_bytes()
    # two lines: '{"id": "a", "value": 1}\n' and '{"id": "b", "value": 2}\n', 24 bytes each
    assert len(data) == 48
    assert metrics["samples_file"] == samples_fingerprint(run / SAMPLES_FILE)
    assert metrics["samples_file"]["bytes"] == 48
    assert metrics["samples_file"]["lines"] == 2
    assert metrics["n"] == 2


def test_a_copied_run_is_finished_until_records_are_appended(tmp_path: Path) -> None:
    copy = _copied_with_fresh_times(_finished_run(tmp_path / "run"), tmp_path / "copy")
    assert (copy / SAMPLES_FILE).stat().st_mtime > (copy / METRICS_FILE).stat().st_mtime
    state = run_state(copy)
    assert state.finished and state.state == "finished"
    with (copy / SAMPLES_FILE).open("a", encoding="utf-8") as fh:
        fh.write('{"id": "c", "value": 3}\n')
    state = run_state(copy)
    assert state.state == "in_progress"
    assert "changed after metrics.json" in state.reason


def test_same_size_other_content_is_in_progress(tmp_path: Path) -> None:
    run = _finished_run(tmp_path / "run")
    data = (run / SAMPLES_FILE).read_bytes()
    (run / SAMPLES_FILE).write_bytes(data.replace(b'"value": 2', b'"value": 7'))
    assert not run_state(run).finished


def test_no_metrics_yet_is_in_progress(tmp_path: Path) -> None:
    with RunDir.open(tmp_path / "run", {"task": "testing.state"}) as run:
        run.append({"id": "a"})
    assert run_state(tmp_path / "run").state == "in_progress"


def test_an_old_run_without_the_record_is_judged_by_counts(tmp_path: Path) -> None:
    """metrics.json of an older citegraph has no samples_file: its progress counted 2 samples
    (n_done 2 + n_failed 0), samples.jsonl holds 2 ids -> finished, whatever the file times;
    a third id appended -> 3 != 2 -> in progress. A retried id (a second record of 'a') is
    still 2 distinct samples -> finished."""
    copy = _copied_with_fresh_times(_finished_run(tmp_path / "run"), tmp_path / "copy")
    metrics = json.loads((copy / METRICS_FILE).read_text(encoding="utf-8"))
    del metrics["samples_file"]
    (copy / METRICS_FILE).write_text(json.dumps(metrics), encoding="utf-8")
    assert run_state(copy).finished
    with (copy / SAMPLES_FILE).open("a", encoding="utf-8") as fh:
        fh.write('{"id": "a", "value": 5}\n')
    assert run_state(copy).finished
    with (copy / SAMPLES_FILE).open("a", encoding="utf-8") as fh:
        fh.write('{"id": "c", "value": 3}\n')
    state = run_state(copy)
    assert not state.finished
    assert state.reason == "samples.jsonl holds 3 samples, metrics.json counted 2"
    assert run_state(copy, n_samples=2).finished  # the viewer's own count is used when given


class _RewriteConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = 3


@register_task
class _RewritingTask(Task[int, None]):
    """Rewrites samples.jsonl in its outputs, as conner select does (one canonical file)."""

    name: ClassVar[str] = "testing.state-rewrite"

    def __init__(self, config: _RewriteConfig) -> None:
        self.config = config

    def items(self) -> Sequence[tuple[str, int]]:
        return [(f"r-{i}", i) for i in range(self.config.n)]

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[None]:
        yield None

    def open(self, runtime: Runtime) -> Any:
        return self._open()

    async def work(self, batch: Sequence[int], models: None) -> list[Record]:
        return [{"id": f"r-{i}", "value": i} for i in batch]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(records)}

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        lines = "".join(
            json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records
        )
        (path / SAMPLES_FILE).write_text(lines, encoding="utf-8")


def test_a_task_that_rewrites_its_samples_is_still_finished(tmp_path: Path) -> None:
    """The engine records samples.jsonl again after the task's outputs replaced it."""
    outcome = run_sync(run_task_async(_RewritingTask(_RewriteConfig()), tmp_path / "run"))
    assert (tmp_path / "run" / SAMPLES_FILE).read_text().startswith('{"id":"r-0","value":0}')
    assert outcome.metrics["samples_file"] == samples_fingerprint(tmp_path / "run" / SAMPLES_FILE)
    assert run_state(tmp_path / "run").finished
