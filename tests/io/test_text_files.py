"""The shared readers on files that are not clean UTF-8: a clear DataError with the location,
and a UTF-8 byte-order mark accepted (issue 17, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.errors import DataError
from citegraph.io import iter_jsonl, load_json, numbered_rows, read_csv_file, read_jsonl_tolerant

BOM = b"\xef\xbb\xbf"


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_jsonl_not_utf8_names_line_and_byte_offset(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.jsonl", b'{"id": "a"}\n{"id": "b \x91quoted\x92"}\n')
    with pytest.raises(DataError) as info:
        list(iter_jsonl(path))
    err = info.value
    assert (err.path, err.line) == (str(path), 2)
    assert (
        "not UTF-8" in str(err) and "0x91" in str(err) and "byte offset 22, column 11" in str(err)
    )
    assert "expected UTF-8" in str(err)


def test_jsonl_binary_file(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.jsonl", bytes(range(128, 256)) + bytes(range(128)))
    with pytest.raises(DataError, match=r"a\.jsonl:1: not UTF-8"):
        list(iter_jsonl(path))


def test_jsonl_bom_accepted(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.jsonl", BOM + b'{"id": "a"}\r\n{"id": "b"}\r\n')
    assert list(iter_jsonl(path)) == [(1, {"id": "a"}), (2, {"id": "b"})]


def test_jsonl_deep_nesting_and_huge_integers_are_data_errors(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.jsonl", b"[" * 100_000 + b"\n")
    with pytest.raises(DataError, match=r"a\.jsonl:1: "):
        list(iter_jsonl(path))
    path = _bytes(tmp_path / "b.jsonl", b'{"id": ' + b"9" * 5000 + b"}\n")
    with pytest.raises(DataError, match=r"b\.jsonl:1: "):
        list(iter_jsonl(path))


def test_json_not_utf8_and_bom(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.json", b'{\n  "a": "\xff"\n}\n')
    with pytest.raises(DataError) as info:
        load_json(path)
    assert info.value.line == 2 and "0xff" in str(info.value)
    assert load_json(_bytes(tmp_path / "b.json", BOM + b'{"a": 1}')) == {"a": 1}
    with pytest.raises(DataError, match=r"b\.json"):
        load_json(_bytes(tmp_path / "b.json", b"[" * 100_000))


def test_csv_not_utf8_names_line(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.csv", b"id,label\nx,supportive\ny,\x91bad\n")
    with pytest.raises(DataError) as info:
        read_csv_file(path, lambda fh, p: list(numbered_rows(fh)), what="labels file")
    assert info.value.line == 3 and "0x91" in str(info.value)


def test_csv_bom_accepted(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.csv", BOM + b"id,label\r\nx,y\r\n")
    rows = read_csv_file(path, lambda fh, p: list(numbered_rows(fh)), what="labels file")
    assert rows == [(1, ["id", "label"]), (2, ["x", "y"])]


def test_tolerant_reader_not_utf8_mid_file(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "samples.jsonl", b'{"id": "\xff"}\n{"id": "b"}\n')
    with pytest.raises(DataError) as info:
        read_jsonl_tolerant(path)
    assert info.value.line == 1 and "not UTF-8" in str(info.value)


def test_tolerant_reader_torn_inside_a_multibyte_character(tmp_path: Path) -> None:
    whole = json.dumps({"id": "b", "text": "café"}, ensure_ascii=False).encode()
    torn = whole[: whole.index("é".encode()) + 1]  # killed between the two bytes of "é"
    path = _bytes(tmp_path / "samples.jsonl", b'{"id": "a"}\n' + torn)
    assert read_jsonl_tolerant(path) == ([{"id": "a"}], 1)


def test_tolerant_reader_keeps_unicode_line_separators_inside_records(tmp_path: Path) -> None:
    # RunDir.append writes ensure_ascii=False: U+2028 / U+0085 stay raw inside a JSON string.
    records = [{"id": "a", "text": "one\u2028two\x85three\x1cfour"}, {"id": "b"}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path = _bytes(tmp_path / "samples.jsonl", text.encode())
    assert read_jsonl_tolerant(path) == (records, 0)


def test_tolerant_reader_non_object_line_is_a_data_error(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "samples.jsonl", b'{"id": "a"}\n[1, 2]\n{"id": "b"}\n')
    with pytest.raises(DataError, match=r"samples\.jsonl:2: expected a JSON object"):
        read_jsonl_tolerant(path)


def test_malformed_csv_names_the_line(tmp_path: Path) -> None:
    path = _bytes(tmp_path / "a.csv", b"id,label\nx,y\n" + b"z," + b"w" * 200_000 + b"\n")
    with pytest.raises(DataError, match=r"a\.csv:3: malformed CSV: field larger"):
        read_csv_file(path, lambda fh, p: list(numbered_rows(fh)), what="labels file")
