"""answers.jsonl / gold.jsonl readers: errors name the file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.datasets import read_answers, read_gold
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


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x"}', r"a.jsonl:2, field 'answer': missing field"),
        ('{"answer": "x"}', r"a.jsonl:2, field 'id'"),
        ('{"id": "x", "answer": 3}', r"a.jsonl:2, field 'answer': must be a string or null"),
        ('{"id": "x", "answer": "y"', r"a.jsonl:2: not valid JSON"),
        ('["x"]', r"a.jsonl:2: expected a JSON object"),
        ('{"id": "ok", "answer": "again"}', r"a.jsonl:2: duplicate id 'ok' \(first on line 1\)"),
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
