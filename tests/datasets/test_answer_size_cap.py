"""A cap on answer size (issue 27, item 12: a 208 MB answer took 9.4 GB in ``kalma score``):
an answer over ``max_answer_chars`` is a DataError naming the file, line and field, and a line
too long to hold one is refused without being read whole."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.datasets import MAX_ANSWER_CHARS, index_answers, read_answers
from citegraph.errors import DataError


def _write(path: Path, answers: list[str]) -> Path:
    rows = [{"id": f"specific-{i}", "answer": a} for i, a in enumerate(answers)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_the_default_cap_is_one_megabyte_of_text(tmp_path: Path) -> None:
    assert MAX_ANSWER_CHARS == 1_000_000
    path = _write(tmp_path / "a.jsonl", ["ok", "x" * MAX_ANSWER_CHARS])
    assert len(read_answers(path)) == 2  # at the cap: read
    _write(path, ["ok", "x" * (MAX_ANSWER_CHARS + 1)])
    with pytest.raises(DataError, match="over the cap of 1,000,000 per answer") as caught:
        read_answers(path)
    assert caught.value.line == 2 and caught.value.field == "answer"
    assert "a.jsonl" in str(caught.value) and "--max-answer-chars" in str(caught.value)


@pytest.mark.parametrize("reader", [read_answers, index_answers])
def test_an_answer_over_a_lowered_cap_names_file_line_and_field(tmp_path: Path, reader) -> None:
    path = _write(tmp_path / "a.jsonl", ["short", "y" * 2001, "z"])
    with pytest.raises(DataError, match="2,001 characters, over the cap of 2,000") as caught:
        reader(path, max_answer_chars=2000)
    assert (caught.value.line, caught.value.field) == (2, "answer")
    assert len(reader(path, max_answer_chars=2001)) == 3  # the option raises the cap


def test_an_oversized_line_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    # a 6 MB line with a 1,000-character cap: the line cap is 6 * 1,000 + 1 MiB bytes
    path = _write(tmp_path / "a.jsonl", ["short", "\u00e9" * 3_000_000])
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match="longer than 1,054,576 bytes") as caught:
            index_answers(path, max_answer_chars=1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.line == 2
    assert peak < size / 2  # never the whole line, let alone copies of it


def test_kalma_score_refuses_an_oversized_answer_with_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", ["short", "w" * 500])
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(path), "--out", str(tmp_path / "run"), "--max-answer-chars", "100"],
    )
    assert result.exit_code == 2, result.output
    stderr = " ".join(result.stderr.split())
    assert "a.jsonl" in stderr and "500 characters, over the cap of 100 per answer" in stderr
    assert "Traceback" not in result.output
