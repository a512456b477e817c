"""Line-numbered JSONL reading: every error names the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from citegraph.errors import DataError, DataNotFoundError
from citegraph.io._json_file import parse_json
from citegraph.io._text import BOM, iter_lines, not_utf8_error


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    The file is UTF-8 (a byte-order mark tolerated); lines end in ``\\n`` or ``\\r\\n``.

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: a line is not UTF-8 (names the byte offset), not valid JSON, or not a JSON
            object (names the file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError("file not found", path=path)
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        obj = parse_json(line, path, line=lineno)
        if not isinstance(obj, dict):
            raise DataError(
                f"expected a JSON object, got {_json_type(obj)}", path=path, line=lineno
            )
        yield lineno, obj


def read_jsonl_tolerant(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Read an append-only JSONL file written by citegraph, tolerating a torn last line.

    A run killed mid-write can leave a partial last line (cut anywhere, even inside a multi-byte
    character); it is dropped (and counted) so the run resumes from the last complete record. A
    bad line elsewhere is real corruption and raises. Only ``\\n`` ends a record: U+2028 and the
    other Unicode line breaks stay inside the JSON strings that hold them.

    Returns:
        The records and the number of dropped trailing lines (0 or 1).

    Raises:
        DataError: a line other than the last is not UTF-8 or not valid JSON, or a line is valid
            JSON but not an object (names the file and line).
    """
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    data = data[len(BOM) :] if data.startswith(BOM) else data
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()  # the empty string after the final newline (or trailing blanks)
    records: list[dict[str, Any]] = []
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        last = lineno == len(lines)
        line_offset, offset = offset, offset + len(raw) + 1
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if last:
                return records, 1
            raise not_utf8_error(
                raw, exc.start, path, line=lineno, line_offset=line_offset
            ) from None
        try:
            record = parse_json(text, path, line=lineno)
        except DataError as err:
            if last and isinstance(err.__cause__, json.JSONDecodeError):
                return records, 1
            raise
        if not isinstance(record, dict):
            raise DataError(
                f"expected a JSON object, got {_json_type(record)}", path=path, line=lineno
            )
        records.append(record)
    return records, 0


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
