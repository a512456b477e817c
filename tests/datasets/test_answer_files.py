"""answers.jsonl / gold.jsonl readers: errors name the file, line and field."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from citegraph.datasets import index_answers, index_gold, read_answers, read_gold
from citegraph.errors import DataError
from citegraph.kg import Triple


def _write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_answers_with_null_and_question(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "a.jsonl",
        '{"id": "specific-0", "answer": "Crane [Q206534, name: Stephen Crane]."}',
        "",
        '{"id": "specific-1", "answer": null, "question": "Who?"}',
    )
    records = read_answers(path)
    assert [(r.id, r.line) for r in records] == [("specific-0", 1), ("specific-1", 3)]
    assert records[1].answer is None and records[1].question == "Who?"


def test_reads_own_ids_and_entities(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "a.jsonl",
        '{"id": "my question 7", "question": "Who?", "answer": "x", '
        '"entities": [" ex:MarieCurie", "Pierre Curie"]}',
    )
    [record] = read_answers(path)
    assert record.id == "my question 7"
    assert record.entities == ("ex:MarieCurie", "Pierre Curie")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x"}', r"a.jsonl:2, field 'answer': missing field"),
        ('{"answer": "x"}', r"a.jsonl:2, field 'id'"),
        ('{"id": "x", "answer": 3}', r"a.jsonl:2, field 'answer': must be a string or null"),
        ('{"id": "x", "answer": "y"', r"a.jsonl:2: not valid JSON"),
        ('["x"]', r"a.jsonl:2: expected a JSON object"),
        ('{"id": "ok", "answer": "again"}', r"a.jsonl:2: duplicate id 'ok' \(first on line 1\)"),
        ('{"id": "x", "answer": "y", "entities": "Q1"}', r"a.jsonl:2, field 'entities': must be"),
        ('{"id": "x", "answer": "y", "entities": []}', r"a.jsonl:2, field 'entities': must be"),
        ('{"id": "x", "answer": "y", "entities": ["Q1", " "]}', r"a.jsonl:2, field 'entities'"),
    ],
)
def test_bad_answer_lines_name_file_line_field(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path / "a.jsonl", '{"id": "ok", "answer": "fine"}', line)
    with pytest.raises(DataError, match=message):
        read_answers(path)


def test_reads_gold_with_absent(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "g.jsonl",
        '{"id": "s-0", "knowledge": [["Q1", "father", "A, B"]], "absent": [["Q1", "mother", "C"]]}',
    )
    gold = read_gold(path)["s-0"]
    assert gold.knowledge == (Triple(subject="Q1", relation="father", value="A, B"),)
    assert gold.absent == (Triple(subject="Q1", relation="mother", value="C"),)


def test_bad_gold_triple_names_item(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", '{"id": "s-0", "knowledge": [["Q1", "father"]]}')
    with pytest.raises(DataError, match=r"g.jsonl:1, field 'knowledge': item 0 must be"):
        read_gold(path)


def test_index_answers_holds_places_and_reads_them_back(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "a.jsonl",
        '{"id": "specific-0", "answer": "one"}',
        "",
        '{"id": "specific-1", "answer": null, "question": "Who?"}',
        '{"id": "specific-2", "answer": "three \\u2028 with a line separator"}',
    )
    index = index_answers(path)
    assert index.ids == ["specific-0", "specific-1", "specific-2"]
    assert [index.line(p) for p in range(3)] == [1, 3, 4]
    assert index.position("specific-2") == 2 and index.position("specific-9") is None
    assert index.read([2, 0]) == [read_answers(path)[2], read_answers(path)[0]]


def test_index_checks_every_line_as_the_reader_does(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", '{"id": "ok", "answer": "fine"}', '{"id": "ok"}')
    with pytest.raises(DataError, match=r"a.jsonl:2, field 'answer': missing field"):
        index_answers(path)
    path = _write(
        tmp_path / "g.jsonl", '{"id": "s", "knowledge": []}', '{"id": "s", "knowledge": []}'
    )
    with pytest.raises(DataError, match=r"g.jsonl:2: duplicate id 's' \(first on line 1\)"):
        index_gold(path)
    with pytest.raises(DataError, match="no answers"):
        index_answers(_write(tmp_path / "e.jsonl", "", " "))


def test_index_refuses_a_file_changed_after_the_check(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", '{"id": "a", "answer": "x"}', '{"id": "b", "answer": "y"}')
    index = index_answers(path)
    _write(path, '{"id": "b", "answer": "y"}', '{"id": "a", "answer": "x"}')
    os.utime(path, ns=(1, 1))
    with pytest.raises(DataError, match="the file changed"):
        index.read([0])


def test_index_gold_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "s-0", "knowledge": [["Q1", "father", "A"]]}\n')
    index = index_gold(path)
    assert index.read([0]) == [read_gold(path)["s-0"]]
