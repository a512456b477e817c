"""The sample index: reads appended bytes only, serves one record by offset, the newest record
of an id wins, a torn last line is left out, a replaced file is read afresh."""

from __future__ import annotations

import json
from pathlib import Path

from citegraph.runs import Presenter
from citegraph.viewer import SampleIndex


def _write(path: Path, records: list[dict], mode: str = "w", tail: str = "") -> None:
    with path.open(mode, encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) + tail)


def test_appends_are_read_incrementally(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    _write(samples, [{"id": "a", "scores": {"x": 1.0}}, {"id": "b", "question": "Qué?"}])
    index = SampleIndex(tmp_path, Presenter)
    assert index.ids == ["a", "b"]
    assert index.record("b") == {"id": "b", "question": "Qué?"}
    before = index._state.scanned
    assert before == samples.stat().st_size
    _write(samples, [{"id": "a", "status": "failed"}, {"id": "c"}], mode="a")
    assert index.ids == ["a", "b", "c"]
    assert index.record("a") == {"id": "a", "status": "failed"}  # newest wins
    rows = {r.id: r for r in index.summaries()}
    assert rows["a"].tags == ["failed"] and rows["b"].title == "Qué?"
    assert index.neighbours("b") == ("a", "c") and index.neighbours("zz") == (None, None)


def test_a_torn_last_line_is_left_out_until_completed(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    _write(samples, [{"id": "a"}], tail='{"id": "b", "ques')
    index = SampleIndex(tmp_path, Presenter)
    assert index.ids == ["a"] and index.torn
    with samples.open("a") as fh:
        fh.write('tion": "q"}\n')
    assert index.ids == ["a", "b"] and not index.torn
    assert index.record("b") == {"id": "b", "question": "q"}


def test_a_replaced_file_is_read_afresh(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    _write(samples, [{"id": "a"}, {"id": "b"}, {"id": "c"}])
    index = SampleIndex(tmp_path, Presenter)
    assert len(index.ids) == 3
    replacement = tmp_path / "new.jsonl"
    _write(replacement, [{"id": "z", "question": "new"}])
    replacement.replace(samples)
    assert index.ids == ["z"] and index.record("z") == {"id": "z", "question": "new"}


def test_ids_not_first_in_the_line_are_found(tmp_path: Path) -> None:
    (tmp_path / "samples.jsonl").write_text('{"x": 1, "id": "late"}\n{"id": "q\\"1"}\n')
    index = SampleIndex(tmp_path, Presenter)
    assert index.ids == ["late", 'q"1']
    assert index.record('q"1') == {"id": 'q"1'}


def test_no_samples_file_is_an_empty_run(tmp_path: Path) -> None:
    index = SampleIndex(tmp_path, Presenter)
    assert index.ids == [] and index.summaries() == [] and index.record("a") is None


def test_records_reads_every_newest_record_in_one_pass(tmp_path: Path) -> None:
    _write(tmp_path / "samples.jsonl", [{"id": "a", "v": 1}, {"id": "b"}, {"id": "a", "v": 2}])
    index = SampleIndex(tmp_path, Presenter)
    assert index.records() == [{"id": "a", "v": 2}, {"id": "b"}]
    assert SampleIndex(tmp_path / "none", Presenter).records() == []
