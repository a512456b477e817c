"""Lone surrogates in input text are read as U+FFFD, counted, and warned about once per file
(issue 37, item 5): the readers' rule under answers, gold, questions and datasets."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import DataError
from citegraph.io import (
    JsonlIndex,
    JsonlRules,
    SurrogateTally,
    TextWarning,
    iter_unique,
    without_surrogates,
)

HIGH, LOW = "\ud800", "\udfff"


def test_without_surrogates_replaces_them_everywhere_and_says_where_the_first_was() -> None:
    value = {"id": "a", "knowledge": [["Q1", "r", f"x{HIGH}"]], f"k{LOW}": [LOW], "n": 1.5}
    cleaned, where = without_surrogates(value)
    assert cleaned == {"id": "a", "knowledge": [["Q1", "r", "x\ufffd"]], "k\ufffd": ["\ufffd"],
                       "n": 1.5}  # fmt: skip
    assert where == "knowledge[0][2]"
    assert without_surrogates({f"k{LOW}": "v"})[1] == "k\ufffd"  # a key
    assert without_surrogates([f"q{HIGH}", []], names=("question", "entities"))[1] == "question"
    assert without_surrogates([1, [{"spouse": HIGH}]], names=("question", "entities"))[1] == (
        'entities[0]["spouse"]'
    )


def test_text_without_surrogates_is_returned_as_it_is() -> None:
    value = {"answer": "é 😀 \ufffd", "list": [None, True, 3]}
    cleaned, where = without_surrogates(value)
    assert cleaned is value and where is None


def _parse(obj: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    return obj


def _id(obj: dict[str, Any]) -> str:
    return str(obj["id"])


_RULES = JsonlRules(_parse, _id, empty="none")


def _write(path: Path, *records: str) -> Path:
    path.write_text("".join(f"{r}\n" for r in records), encoding="utf-8")
    return path


def test_a_checked_file_warns_once_with_the_count_and_the_first_line_and_field(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / "answers.jsonl",
        '{"id": "a", "answer": "fine"}',
        '{"id": "b", "answer": "x\\ud800y", "question": "\\udfff"}',
        '{"id": "c", "answer": "z", "question": "q\\udfff"}',
        '{"id": "d", "answer": "pair \\ud83d\\ude00 stays"}',
    )
    with pytest.warns(TextWarning) as caught:
        index = JsonlIndex(path, _RULES)
    assert len(caught) == 1
    assert str(caught[0].message) == (
        f"{path}: 2 lines held text UTF-8 cannot encode (a lone surrogate, such as JSON's "
        "\\ud800 escape), read with U+FFFD in its place; the first: line 2, field 'answer'"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading again: the same text, no second warning
        records = index.read(range(4))
    assert [r.get("answer") for r in records] == ["fine", "x\ufffdy", "z", "pair 😀 stays"]
    assert records[2]["question"] == "q\ufffd"


def test_ids_are_compared_after_the_replacement(tmp_path: Path) -> None:
    path = _write(tmp_path / "gold.jsonl", '{"id": "a\\ud800"}', '{"id": "a\\udfff"}')
    with pytest.raises(DataError, match="duplicate id 'a\ufffd' \\(first on line 1\\)"):
        list(iter_unique(path, _RULES))


def test_a_clean_file_gives_no_warning(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", json.dumps({"id": "a", "answer": "é 😀"}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r for _, _, r in iter_unique(path, _RULES)] == [{"id": "a", "answer": "é 😀"}]


def test_a_tally_of_entries(tmp_path: Path) -> None:
    tally = SurrogateTally(tmp_path / "d.json", unit="entry", names=("question", "entities"))
    assert tally.clean(["q", []], 0) == ["q", []]
    assert tally.clean(["q", [{"qid": "Q1", "x": f"v{LOW}"}]], 1) == [
        "q",
        [{"qid": "Q1", "x": "v\ufffd"}],
    ]
    with pytest.warns(TextWarning, match="1 entry held .* the first: entry 1, field "):
        tally.warn()
