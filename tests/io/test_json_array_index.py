"""JsonArrayIndex: the byte span of each entry of a JSON array file, found in one streaming pass,
and the file refused exactly where it is not one JSON array."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

import citegraph.io._json_array as json_array
from citegraph.errors import DataError
from citegraph.io import JsonArrayIndex


def _write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


TRICKY = [
    ['q with "quotes" and [brackets] {braces}', [{"qid": "Q1", "name": "A]"}]],
    ["back\\slash at the end\\", []],
    "a string entry, with a comma",
    {"key": ["nested", ["deeper", {"x": "}"}]]},
    ["Ünïcödé — 名前", [{"qid": "Q2"}]],
]


def test_entries_read_back_as_json_parses_them(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.json", json.dumps(TRICKY, ensure_ascii=False, indent=2))
    index = JsonArrayIndex(path)
    assert len(index) == 5
    assert list(index.entries()) == TRICKY
    assert index.entry(3) == TRICKY[3]


def test_strings_cut_by_the_read_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of 7 bytes cuts strings, escapes and multi-byte characters everywhere."""
    monkeypatch.setattr(json_array, "_CHUNK", 7)
    path = _write(tmp_path / "d.json", json.dumps(TRICKY, ensure_ascii=False))
    assert list(JsonArrayIndex(path).entries()) == TRICKY


def test_bom_blanks_and_empty_list(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.json", b"\xef\xbb\xbf \n[ [1] ,\n [2] ]\n")
    assert list(JsonArrayIndex(path).entries()) == [[1], [2]]
    assert len(JsonArrayIndex(_write(tmp_path / "e.json", " [ ] "))) == 0


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[["a"]\n ["b"]]', 2, r"found '\[\"b\"\]'|between entries"),  # missing comma
        ('[["a"],,\n["b"]]', 1, "between entries"),  # doubled comma
        ('[["a"],\n 3]', 1, r"found ',\\n 3\]' around the list"),  # a number entry, last
        ('[["a"], 3, ["b"]]', 1, "between entries"),
        ('[["a"]] ["b"]', 1, "more after the list's end"),
        ('{"a": [1]}', 1, "expected a JSON list"),
        ('"text"', 1, "expected a JSON list"),
        ('[["a"],\n["b"', 2, "ends inside the list"),
        ('[["a"]]]', 1, "more after the list's end"),
        ("\n]", 2, "unmatched closing bracket"),
        ("[]x", 1, "more after the list's end"),
        ('\n[["a\\"]', 2, "ends inside a string"),
        ("", 1, "ends inside the list"),
    ],
)
def test_malformed_files_name_the_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = _write(tmp_path / "d.json", text)
    with pytest.raises(DataError, match=message) as info:
        JsonArrayIndex(path)
    assert info.value.line == line and info.value.path == str(path)


def test_bad_json_inside_an_entry_names_the_entry_and_the_file_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.json", '[\n["ok"],\n["a",\n tru]\n]')
    index = JsonArrayIndex(path)
    assert index.entry(0) == ["ok"]
    with pytest.raises(DataError, match=r"d.json:4: entry 1: invalid JSON") as info:
        index.entry(1)
    assert info.value.line == 4


def test_a_file_changed_after_indexing_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.json", '[["a"], ["b"]]')
    index = JsonArrayIndex(path)
    _write(path, '[["b"], ["a"], ["c"]]')
    os.utime(path, ns=(1, 1))
    with pytest.raises(DataError, match="the file changed"):
        index.entry(0)


def test_random_files_read_back_as_json_parses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded random entries (nested lists, objects, strings with quotes, backslashes, brackets
    and multi-byte characters), written compactly or indented, read through chunks of 3 to 64
    bytes: every entry is the one json.loads finds."""
    rng = random.Random(7)
    alphabet = ['"', "\\", "[", "]", "{", "}", ",", " ", "\n", "a", "é", "名", "\u2028", ":"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))

    def value(depth: int) -> object:
        kind = rng.randint(0, 5 if depth < 3 else 2)
        if kind == 0:
            return text()
        if kind == 1:
            return rng.choice([1, -2.5, True, None])
        if kind == 2:
            return text()
        if kind in (3, 4):
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {text(): value(depth + 1) for _ in range(rng.randint(0, 3))}

    for case in range(40):
        entries = [
            rng.choice([[value(1) for _ in range(rng.randint(0, 3))], {text(): value(1)}, text()])
            for _ in range(rng.randint(0, 6))
        ]
        dumped = json.dumps(entries, ensure_ascii=case % 2 == 0, indent=None if case % 3 else 1)
        path = _write(tmp_path / f"r{case}.json", dumped)
        monkeypatch.setattr(json_array, "_CHUNK", rng.randint(3, 64))
        assert list(JsonArrayIndex(path).entries()) == entries, dumped


def test_an_unclosed_string_after_long_text_fails_at_once(tmp_path: Path) -> None:
    """No backtracking: 300 KB of text and brackets, then a string that never closes."""
    body = '[["' + "x " * 150_000 + '"], ["open \\" still open'
    path = _write(tmp_path / "d.json", body)
    with pytest.raises(DataError, match="ends inside a string"):
        JsonArrayIndex(path)
