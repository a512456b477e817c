"""Issue 18, item 4: a run directory holds where its records are, not the records; they are read
from ``samples.jsonl`` as they are used (``StoredRecords``), and what the engine returns holds
counts, not records."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

from citegraph.io import TolerantScan
from citegraph.runs import (
    RunDir,
    RunOutcome,
    StoredRecords,
    in_id_order,
    merge_runs,
    sorted_records,
)


class _Record(dict[str, object]):
    """A record that can be watched with a weak reference."""


def _run(path: Path) -> RunDir:
    run = RunDir.open(path, {"mode": "paper"})
    for record in (
        {"id": "q-10", "v": 1},
        {"id": "q-2", "status": "failed"},
        {"id": "q-1", "v": 3},
        {"id": "q-2", "v": 4, "text": "é ☃ \u2028 \\n"},
    ):
        run.append(record)
    return run


def test_a_run_dir_keeps_offsets_and_reads_the_newest_records_on_demand(tmp_path: Path) -> None:
    run = _run(tmp_path)
    appended = _Record(id="q-3", v=5)
    gone = weakref.ref(appended)
    run.append(appended)
    del appended
    gc.collect()
    assert gone() is None  # the run directory does not hold the record it wrote
    records = run.newest(run.ids[:3])
    assert isinstance(records, StoredRecords)
    assert list(records) == [
        {"id": "q-10", "v": 1},
        {"id": "q-2", "v": 4, "text": "é ☃ \u2028 \\n"},
        {"id": "q-1", "v": 3},
    ]
    assert records.ids == ["q-10", "q-2", "q-1"] == run.ids[:3]
    assert records[1]["v"] == 4 and list(records[1:]) == list(records)[1:]
    assert [r["id"] for r in run.newest(["q-1", "nope", "q-10"])] == ["q-1", "q-10"]
    assert run.done == {"q-10", "q-2", "q-1", "q-3"}
    run.append({"id": "q-1", "status": "failed"})
    assert run.done == {"q-10", "q-2", "q-3"} and run.records.n_failed == 1
    run.close()
    again = RunDir.open(tmp_path, {"mode": "paper"})  # the index rebuilt from the file
    assert list(again.records) == list(run.records) and again.done == run.done


def test_stored_records_sort_from_the_index_or_one_pass(tmp_path: Path) -> None:
    run = _run(tmp_path)
    by_id = in_id_order(run.records)
    assert isinstance(by_id, StoredRecords)
    assert by_id.ids == ["q-1", "q-2", "q-10"]
    by_value = sorted_records(run.records, lambda r: -r["v"])
    assert isinstance(by_value, StoredRecords) and by_value.ids == ["q-2", "q-1", "q-10"]
    as_list = list(run.records)
    assert sorted_records(as_list, lambda r: -r["v"]) == list(by_value)
    assert in_id_order(as_list) == list(by_id)


def test_the_outcome_holds_counts_and_reads_its_records_back(tmp_path: Path) -> None:
    assert "records" not in RunOutcome.model_fields
    run = _run(tmp_path)
    run.close()
    outcome: RunOutcome[int] = RunOutcome(
        out=tmp_path,
        info=run.info,
        metrics={},
        items=[1, 2],
        ids=["q-1", "q-2"],
        n_resumed=0,
        n_done_now=2,
        n_failed=0,
    )
    assert [r["id"] for r in outcome.records()] == ["q-1", "q-2"]


def test_the_scan_gives_each_line_s_offset_past_a_bom_and_drops_a_torn_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\r\n\n{"id": "b", "x": "\xc3\xa9"}\n{"id": "c", "sc')
    scan = TolerantScan(path)
    lines = list(scan)
    assert [line.record["id"] for line in lines] == ["a", "b"]
    assert scan.torn == 1 and path.read_bytes()[scan.end :] == b'{"id": "c", "sc'
    data = path.read_bytes()
    for line in lines:
        assert json.loads(data[line.offset : line.offset + line.length]) == line.record


def test_merge_keeps_each_shard_s_lines_as_written(tmp_path: Path) -> None:
    shards = [tmp_path / "s0", tmp_path / "s1"]
    firsts: list[dict[str, object]] = [{"id": "b", "z": 1, "a": 2}, {"id": "a", "status": "failed"}]
    for shard, record in zip(shards, firsts, strict=True):
        with RunDir.open(shard, {"mode": "paper"}) as run:
            run.append(record)
    with RunDir.open(shards[1], {"mode": "paper"}) as run:
        run.append({"id": "a", "v": 1})
    merged = merge_runs(shards, tmp_path / "m")
    lines = (tmp_path / "m" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == ['{"id": "b", "z": 1, "a": 2}', '{"id": "a", "v": 1}']
    assert merged.done == {"a", "b"}
