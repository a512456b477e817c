"""The engine on a small task whose records are checked by hand: resume, retry of failed items,
limit, shard + merge, batching and concurrency, refusal of another config, progress, registry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from citegraph.errors import ConfigError
from citegraph.runs import (
    FAILED,
    Completion,
    Record,
    RunDir,
    Runtime,
    Task,
    TaskResult,
    finalize,
    in_id_order,
    merge_runs,
    natural_key,
    recorded_config,
    register_task,
    run_bounded_async,
    run_sync,
    run_task_async,
    samples_fingerprint,
    task_of_run,
    task_type,
)


class SquareConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = 6
    offset: int = 0


class Calls:
    """What the task's model saw: batches, opens and closes, peak concurrency."""

    def __init__(self, fail: set[int] | None = None) -> None:
        self.batches: list[list[int]] = []
        self.opened = 0
        self.closed = 0
        self.fail = fail or set()
        self.in_flight = 0
        self.peak = 0


@register_task
class SquareTask(Task[int, Calls]):
    """Squares 0..n-1 (plus offset); a value in ``calls.fail`` gives a failed record."""

    name: ClassVar[str] = "testing.square"
    batch_size: ClassVar[int] = 2

    def __init__(self, config: SquareConfig, calls: Calls) -> None:
        self.config = config
        self.calls = calls

    def items(self) -> Sequence[tuple[str, int]]:
        return [(f"x-{i}", i) for i in range(self.config.n)]

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Calls]:
        self.calls.opened += 1
        try:
            yield self.calls
        finally:
            self.calls.closed += 1

    def open(self, runtime: Runtime) -> Any:
        return self._open()

    async def work(self, batch: Sequence[int], models: Calls) -> list[Record]:
        models.batches.append(list(batch))
        models.in_flight += 1
        models.peak = max(models.peak, models.in_flight)
        await asyncio.sleep(0.01)
        models.in_flight -= 1
        return [
            {"id": f"x-{i}", "status": FAILED}
            if i in models.fail
            else {"id": f"x-{i}", "value": (i + self.config.offset) ** 2}
            for i in batch
        ]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        done = [r for r in records if r.get("status") != FAILED]
        return {
            "n": len(done),
            "total": sum(r["value"] for r in done),
            "ids": [r["id"] for r in done],
        }

    @classmethod
    def order(cls, records: Sequence[Record]) -> list[Record]:
        return sorted(records, key=lambda r: int(r["id"].split("-")[1]))

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        (path / "report.txt").write_text(f"total {metrics['total']}\n", encoding="utf-8")


def run(out: Path, calls: Calls, runtime: Runtime | None = None, **config: int) -> Any:
    return run_sync(run_task_async(SquareTask(SquareConfig(**config), calls), out, runtime))


def whole(n_done: int, n_total: int | None = 6, **more: Any) -> dict[str, Any]:
    """A ``progress`` entry of ``metrics.json`` of a run without a limit."""
    partial = None if n_total is None else n_done < n_total
    return {
        "n_done": n_done,
        "n_failed": 0,
        "n_asked": n_total,
        "n_total": n_total,
        "limit": None,
        "shard": None,
        "partial": partial,
        "torn_lines_dropped": 0,
    } | more


def limited(n_done: int, limit: int, n_total: int | None = 6, **more: Any) -> dict[str, Any]:
    """A ``progress`` entry of ``metrics.json`` of an unsharded run with ``--limit limit``."""
    n_asked = limit if n_total is None else min(limit, n_total)
    asked = {"n_asked": n_asked, "limit": limit, "partial": n_done < n_asked}
    return whole(n_done, n_total) | asked | more


def test_a_run_writes_records_metrics_and_outputs(tmp_path: Path) -> None:
    calls = Calls()
    outcome = run(tmp_path, calls)
    # 0 + 1 + 4 + 9 + 16 + 25 = 55, in batches of the task's size 2
    assert outcome.metrics == {
        "n": 6,
        "total": 55,
        "ids": [f"x-{i}" for i in range(6)],
        "progress": whole(6),
        "samples_file": samples_fingerprint(tmp_path / "samples.jsonl"),
    }
    assert json.loads((tmp_path / "metrics.json").read_text()) == outcome.metrics
    assert sorted(calls.batches) == [[0, 1], [2, 3], [4, 5]]
    assert (calls.opened, calls.closed) == (1, 1)
    assert json.loads((tmp_path / "metrics.json").read_text())["total"] == 55
    assert (tmp_path / "report.txt").read_text() == "total 55\n"
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["task"] == "testing.square"
    assert info["config"] == {"n": 6, "offset": 0, "task": "testing.square"}
    assert (outcome.n_resumed, outcome.n_done_now, outcome.n_failed) == (0, 6, 0)


def test_limit_then_resume_does_only_the_rest(tmp_path: Path) -> None:
    first = run(tmp_path, Calls(), Runtime(limit=3))
    assert first.metrics["total"] == 0 + 1 + 4
    calls = Calls()
    second = run(tmp_path, calls, Runtime(batch_size=5))
    assert calls.batches == [[3, 4, 5]]
    assert (second.n_resumed, second.n_done_now) == (3, 3)
    assert second.metrics["total"] == 55


def test_metrics_cover_every_record_whatever_the_limit(tmp_path: Path) -> None:
    """Issue 17, item 4: a 6-item run re-run with limit 2 keeps its metrics over all 6 (the
    limit decides what more is done, not what is counted), in item order."""
    run(tmp_path, Calls())
    again = run(tmp_path, Calls(), Runtime(limit=2))
    assert [r["id"] for r in again.records()] == ["x-0", "x-1"]
    assert again.metrics["total"] == 55
    assert again.metrics["ids"] == [f"x-{i}" for i in range(6)]
    assert again.metrics["progress"] == limited(6, 2)
    assert not again.metrics["progress"]["partial"]
    assert Completion.of_progress(again.metrics["progress"]).finished_text is None  # all done
    assert json.loads((tmp_path / "metrics.json").read_text())["total"] == 55


def test_a_limited_run_that_did_its_limit_is_finished(tmp_path: Path) -> None:
    """Issue 17, item 5: n_total is the items the task has before the limit. Issue 36, defect
    7: a run that did every item its limit asked for is finished within its limit, not
    partial; a failed item makes it partial."""
    outcome = run(tmp_path, Calls(), Runtime(limit=2))
    assert outcome.metrics["progress"] == limited(2, 2)
    assert outcome.metrics["progress"]["partial"] is False
    completion = Completion.of_progress(outcome.metrics["progress"])
    assert completion.finished_text == "finished (limit 2 of 6)"
    runtime = json.loads((tmp_path / "run.json").read_text())["runtime"]
    assert (runtime["n_items"], runtime["n_total"]) == (2, 6)
    failed = run(tmp_path / "f", Calls(fail={1}))
    assert failed.metrics["progress"] == whole(5) | {"n_failed": 1, "partial": True}
    failed_in_limit = run(tmp_path / "g", Calls(fail={1}), Runtime(limit=3))
    assert failed_in_limit.metrics["progress"] == limited(2, 3, n_failed=1, partial=True)
    assert Completion.of_progress(failed_in_limit.metrics["progress"]).finished_text is None


def test_a_larger_limit_or_none_resumes_a_limited_run(tmp_path: Path) -> None:
    """Resuming a run finished within its limit with a larger limit, then none, does only the
    new items and says how much of the new limit is done."""
    run(tmp_path, Calls(), Runtime(limit=2))
    calls = Calls()
    larger = run(tmp_path, calls, Runtime(limit=4, batch_size=5))
    assert calls.batches == [[2, 3]] and (larger.n_resumed, larger.n_done_now) == (2, 2)
    assert larger.metrics["progress"] == limited(4, 4)
    assert Completion.of_progress(larger.metrics["progress"]).finished_text == (
        "finished (limit 4 of 6)"
    )
    calls = Calls()
    unlimited = run(tmp_path, calls, Runtime(batch_size=5))
    assert calls.batches == [[4, 5]] and unlimited.metrics["total"] == 55
    assert unlimited.metrics["progress"] == whole(6)


def test_a_smaller_limit_after_a_larger_one_says_how_many_are_done(tmp_path: Path) -> None:
    run(tmp_path, Calls(), Runtime(limit=4))
    again = run(tmp_path, Calls(), Runtime(limit=2))
    assert again.metrics["progress"] == limited(4, 2)
    completion = Completion.of_progress(again.metrics["progress"])
    assert completion.finished_text == "finished (limit 2 of 6, 4 items done)"


def test_a_run_stopped_before_its_limit_is_partial(tmp_path: Path) -> None:
    """A --limit 4 run with 2 records (killed before the rest; ``runs report`` then)."""
    run(tmp_path, Calls(), Runtime(limit=2))
    info = json.loads((tmp_path / "run.json").read_text())
    info["runtime"] |= {"limit": 4, "n_items": 4}  # the call that was stopped asked for 4
    (tmp_path / "run.json").write_text(json.dumps(info))
    metrics = finalize(SquareTask, RunDir.open(tmp_path, info["config"], data=info["data"]))
    assert metrics["progress"] == limited(2, 4)
    completion = Completion.of_progress(metrics["progress"])
    assert completion.partial and completion.counts == "2/4"
    assert completion.scope == "limit 4 of 6" and completion.finished_text is None


def test_records_of_ids_the_task_no_longer_lists_are_counted_last(tmp_path: Path) -> None:
    """Records whose ids the task's items no longer hold (a run written by an older version
    of the task) are counted, after the listed ones, as ``runs report`` counts them."""
    run(tmp_path, Calls())

    class Fewer(SquareTask):
        def items(self) -> Sequence[tuple[str, int]]:
            return [(f"x-{i}", i) for i in (3, 2, 1, 0)]

    outcome = run_sync(run_task_async(Fewer(SquareConfig(), Calls()), tmp_path))
    assert outcome.metrics["ids"] == ["x-3", "x-2", "x-1", "x-0", "x-4", "x-5"]
    assert outcome.metrics["total"] == 55
    assert outcome.metrics["progress"]["n_total"] == 4


def test_report_of_an_unfinished_run_says_how_much_is_done(tmp_path: Path) -> None:
    """Issue 17, item 5: finalize (``runs report``) marks the metrics partial and counts the
    torn last line it dropped."""
    run(tmp_path, Calls(), Runtime(limit=3))
    with (tmp_path / "samples.jsonl").open("a") as fh:
        fh.write('{"id": "x-3", "va')  # killed mid-write
    info = json.loads((tmp_path / "run.json").read_text())
    opened = RunDir.open(tmp_path, info["config"], data=info["data"])
    assert opened.torn_dropped == 1
    metrics = finalize(SquareTask, opened)
    assert metrics["progress"] == limited(3, 3, torn_lines_dropped=1)
    assert json.loads((tmp_path / "metrics.json").read_text())["progress"] == metrics["progress"]
    # the count stays after the line is gone
    later = finalize(SquareTask, RunDir.open(tmp_path, info["config"], data=info["data"]))
    assert later["progress"]["torn_lines_dropped"] == 1


def test_report_of_a_run_without_n_total_says_unknown(tmp_path: Path) -> None:
    run(tmp_path, Calls(), Runtime(limit=3))
    info = json.loads((tmp_path / "run.json").read_text())
    info["runtime"] = {"limit": 3, "n_items": 3}  # written before citegraph recorded n_total
    (tmp_path / "run.json").write_text(json.dumps(info))
    metrics = finalize(SquareTask, RunDir.open(tmp_path, info["config"], data=info["data"]))
    assert metrics["progress"] == limited(3, 3, n_total=None)
    assert Completion.of_progress(metrics["progress"]).finished_text is None  # total unknown


def test_failed_items_are_kept_and_retried_alone(tmp_path: Path) -> None:
    first = run(tmp_path, Calls(fail={2, 4}))
    assert first.n_failed == 2
    assert first.metrics["total"] == 55 - 4 - 16
    calls = Calls()
    second = run(tmp_path, calls, Runtime(batch_size=1))
    assert sorted(calls.batches) == [[2], [4]]
    assert second.n_failed == 0 and second.metrics["total"] == 55


def test_another_config_is_refused_naming_what_changed(tmp_path: Path) -> None:
    run(tmp_path, Calls(), Runtime(limit=1))
    with pytest.raises(ConfigError, match=r"config\.offset"):
        run(tmp_path, Calls(), offset=1)
    overwritten = run(tmp_path, Calls(), Runtime(overwrite=True), offset=1)
    assert overwritten.metrics["total"] == 1 + 4 + 9 + 16 + 25 + 36


def test_a_run_that_finished_nothing_starts_over_with_a_note(tmp_path: Path) -> None:
    run(tmp_path, Calls(fail={0, 1, 2, 3, 4, 5}))  # every item failed: nothing finished
    notes: list[str] = []
    again = run(tmp_path, Calls(), Runtime(notify=notes.append), offset=1)
    # 1 + 4 + 9 + 16 + 25 + 36 = 91: the new config's squares, none of the old failures
    assert again.metrics["total"] == 91 and again.n_failed == 0
    assert notes == [
        f"{tmp_path} held a run of another configuration (differs in: config.offset) with "
        "no finished record; started over with this one"
    ]


def test_shards_merge_into_the_unsharded_metrics(tmp_path: Path) -> None:
    whole_run = run(tmp_path / "whole", Calls())
    shard0 = run(tmp_path / "s0", Calls(), Runtime(shard="0/2"))
    shard1 = run(tmp_path / "s1", Calls(), Runtime(shard="1/2"))
    assert [i for i in shard0.items] == [0, 2, 4] and [i for i in shard1.items] == [1, 3, 5]
    assert shard0.metrics["total"] == 0 + 4 + 16
    assert shard0.metrics["progress"] == whole(3, 3, shard="0/2")  # all its share holds
    merged = merge_runs([tmp_path / "s1", tmp_path / "s0"], tmp_path / "merged")
    metrics = finalize(task_of_run(merged.info), merged)
    # the merged samples.jsonl holds the same lines in another order: the same fingerprint
    assert metrics == whole_run.metrics
    assert (tmp_path / "merged" / "report.txt").read_text() == "total 55\n"
    alone = merge_runs([tmp_path / "s0"], tmp_path / "alone")
    assert finalize(task_of_run(alone.info), alone)["progress"] == whole(3)


def test_limit_applies_before_the_shard(tmp_path: Path) -> None:
    outcome = run(tmp_path, Calls(), Runtime(limit=4, shard="1/2"))
    assert outcome.items == [1, 3]


def test_a_shard_of_a_limited_run_is_judged_against_its_own_share(tmp_path: Path) -> None:
    """--limit 4 over 6 items, shard 1/2: positions 1 and 3 of its share 1, 3, 5. Done, it is
    finished within its limit; merged with shard 0/2, the whole run is too."""
    shard1 = run(tmp_path / "s1", Calls(), Runtime(limit=4, shard="1/2"))
    progress = shard1.metrics["progress"]
    assert progress == whole(2, 3) | {"n_asked": 2, "limit": 4, "shard": "1/2", "partial": False}
    completion = Completion.of_progress(progress)
    assert completion.finished_text == "finished (limit 4, shard 1/2: 2 of 3)"
    stopped = Completion.of_run(shard1.info["runtime"], n_done=1, n_failed=0)
    assert stopped.partial and stopped.counts == "1/2" and stopped.finished_text is None
    merged = merge_runs([tmp_path / "s1"], tmp_path / "half")
    assert (merged.info["runtime"]["limit"], merged.info["runtime"]["n_items"]) == (4, 4)
    assert finalize(task_of_run(merged.info), merged)["progress"] == limited(2, 4)
    run(tmp_path / "s0", Calls(), Runtime(limit=4, shard="0/2"))
    both = merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "both")
    metrics = finalize(task_of_run(both.info), both)
    assert metrics["progress"] == limited(4, 4)
    assert Completion.of_progress(metrics["progress"]).finished_text == "finished (limit 4 of 6)"


def test_bad_shard_is_refused() -> None:
    with pytest.raises(ConfigError, match="i/N"):
        Runtime(shard="2")
    with pytest.raises(ConfigError, match="0 <= i < N"):
        Runtime(shard="2/2")


def test_concurrency_bounds_work_calls_in_flight(tmp_path: Path) -> None:
    calls = Calls()
    run(tmp_path / "one", calls, Runtime(batch_size=1, concurrency=1), n=8)
    assert calls.peak == 1
    calls = Calls()
    run(tmp_path / "three", calls, Runtime(batch_size=1, concurrency=3), n=8)
    assert calls.peak == 3


def test_progress_counts_resumed_and_new_items(tmp_path: Path) -> None:
    run(tmp_path, Calls(), Runtime(limit=2))
    seen: list[tuple[int, int]] = []
    run(tmp_path, Calls(), Runtime(progress=lambda d, t: seen.append((d, t))))
    assert seen[0] == (2, 6) and seen[-1] == (6, 6)


def test_models_are_closed_when_the_work_fails(tmp_path: Path) -> None:
    calls = Calls()

    class Broken(SquareTask):
        async def work(self, batch: Sequence[int], models: Calls) -> list[Record]:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_sync(run_task_async(Broken(SquareConfig(), calls), tmp_path))
    assert (calls.opened, calls.closed) == (1, 1)


def test_registry_finds_tasks_and_old_runs() -> None:
    assert task_type("testing.square") is SquareTask
    assert task_of_run({"config": {"task_name": "testing.square", "task": "nq"}}) is SquareTask
    with pytest.raises(ConfigError, match="no task named"):
        task_type("nothing.here")
    with pytest.raises(ConfigError, match="names no task"):
        task_of_run({"config": {}})


def test_run_sync_refuses_a_running_loop() -> None:
    async def inside() -> None:
        async def nothing() -> int:
            return 1

        with pytest.raises(RuntimeError, match="_async form"):
            run_sync(nothing())

    asyncio.run(inside())


class SquareResult(TaskResult):
    n_items: int

    @classmethod
    def own_fields(cls, outcome: Any) -> dict[str, Any]:
        return {"n_items": len(outcome.items)}


def test_a_task_result_reads_the_outcome(tmp_path: Path) -> None:
    run(tmp_path, Calls(fail={3}))
    outcome = run(tmp_path, Calls(fail={3}))
    result = SquareResult.of(outcome)
    assert (result.out, result.metrics) == (tmp_path, outcome.metrics)
    assert (result.n_failed, result.n_resumed, result.n_items) == (1, 5, 6)


def test_recorded_config_drops_what_run_config_added(tmp_path: Path) -> None:
    outcome = run(tmp_path, Calls(), n=3, offset=2)
    assert outcome.info["config"]["task"] == "testing.square"
    assert recorded_config(SquareConfig, outcome.info) == SquareConfig(n=3, offset=2)


def test_concurrency_for_prefers_the_runtime_then_the_model() -> None:
    class Limited:
        concurrency = 3

    assert Runtime(concurrency=5).concurrency_for(Limited(), 1) == 5
    assert Runtime().concurrency_for(Limited(), 1) == 3
    assert Runtime().concurrency_for(object(), 2) == 2


def test_run_bounded_keeps_order_bounds_concurrency_and_reports_progress() -> None:
    in_flight = peak = 0
    seen: list[tuple[int, int]] = []

    async def slow_square(x: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01 * (5 - x))
        in_flight -= 1
        return x * x

    squares = run_sync(
        run_bounded_async(
            [1, 2, 3, 4], slow_square, concurrency=2, progress=lambda d, t: seen.append((d, t))
        )
    )
    assert squares == [1, 4, 9, 16]
    assert peak == 2
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(ConfigError, match="concurrency"):
        run_sync(run_bounded_async([1], slow_square, concurrency=0))


def test_natural_id_order_numbers_digit_runs() -> None:
    ids = ["specific-10", "specific-2", "nq:11", "nq:9", "wow-seen:0", "specific-1"]
    ordered = [r["id"] for r in in_id_order([{"id": i} for i in ids])]
    assert ordered == ["nq:9", "nq:11", "specific-1", "specific-2", "specific-10", "wow-seen:0"]
    assert natural_key("q2") < natural_key("q10") < natural_key("qa")
