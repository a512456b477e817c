"""Line-numbered JSONL reading: every error names the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from citegraph.errors import DataError
from citegraph.io._json_file import parse_json
from citegraph.io._text import BOM, iter_lines_at, not_utf8_error, regular_file


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    The file is UTF-8 (a byte-order mark tolerated); lines end in ``\\n`` or ``\\r\\n``.

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: the path is a directory or not a regular file (a device such as
            ``/dev/zero``: never read), or a line is not UTF-8 (names the byte offset), not
            valid JSON, or not a JSON object (names the file and line).
    """
    for lineno, _, obj in iter_jsonl_at(path):
        yield lineno, obj


def iter_jsonl_at(
    path: str | Path, *, max_line_bytes: int | None = None, cap_hint: str = ""
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """:func:`iter_jsonl` with each line's byte offset: ``(line_number, offset, object)``.

    ``max_line_bytes`` (and ``cap_hint``): as for :func:`~citegraph.io._text.iter_lines_at`,
    a longer line is refused without being read whole.

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: as :func:`iter_jsonl`, or a line is longer than ``max_line_bytes``.
    """
    path = regular_file(Path(path))
    for lineno, offset, line in iter_lines_at(path, max_bytes=max_line_bytes, cap_hint=cap_hint):
        if line.strip():
            yield lineno, offset, parse_jsonl_line(line, path, lineno)


def parse_jsonl_line(line: str, path: Path, lineno: int) -> dict[str, Any]:
    """The JSON object on one line of a JSONL file.

    Raises:
        DataError: not valid JSON, or not a JSON object (names the file and line).
    """
    obj = parse_json(line, path, line=lineno)
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {_json_type(obj)}", path=path, line=lineno)
    return obj


class JsonlLine(NamedTuple):
    """One record of a JSONL file and where its line is: ``offset`` (bytes from the start of the
    file) and ``length`` (bytes, without the ``\\n``), so the record can be read again alone;
    ``line`` is its line number (1-based; 0 when unknown), for errors."""

    offset: int
    length: int
    record: dict[str, Any]
    line: int = 0


class TolerantScan:
    """One streaming pass over an append-only JSONL file written by citegraph, tolerating a torn
    last line (see :func:`read_jsonl_tolerant`): iterate it for the :class:`JsonlLine` of each
    record, in file order, holding one line at a time.

    After the pass, ``torn`` is the number of dropped trailing lines (0 or 1) and ``end`` the
    byte offset where the kept part of the file ends (the start of the torn line, else the size
    read).

    Raises (while iterating):
        DataError: a line other than the last is not UTF-8 or not valid JSON, or a line is valid
            JSON but not an object (names the file and line).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.torn = 0
        self.end = 0

    def __iter__(self) -> Iterator[JsonlLine]:
        self.torn = self.end = 0
        if not self.path.exists():
            return
        with self.path.open("rb") as handle:
            yield from self._scan(handle)

    def _scan(self, handle: BinaryIO) -> Iterator[JsonlLine]:
        skip = len(BOM) if handle.read(len(BOM)) == BOM else 0
        handle.seek(skip)
        held: tuple[int, int, bytes] | None = None  # (line number, file offset, raw line)
        position = skip
        for lineno, raw in enumerate(handle, start=1):
            if held is not None:
                # the held line is the last one when only trailing blanks (no newline) follow
                yield from self._parse(
                    *held, skip, last=not raw.endswith(b"\n") and not raw.strip()
                )
                if self.torn:
                    return
            held = (lineno, position, raw)
            position += len(raw)
        self.end = position
        if held is not None and (held[2].endswith(b"\n") or held[2].strip()):
            yield from self._parse(*held, skip, last=True)

    def _parse(
        self, lineno: int, offset: int, raw: bytes, skip: int, *, last: bool
    ) -> Iterator[JsonlLine]:
        """The line's record; nothing for a blank line or a torn last line (counted)."""
        body = raw.removesuffix(b"\n")
        if not body.strip():
            return
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            if last:
                self.torn, self.end = 1, offset
                return
            where = offset - skip  # as the error has always said: after a byte-order mark
            raise not_utf8_error(
                body, exc.start, self.path, line=lineno, line_offset=where
            ) from None
        try:
            record = parse_jsonl_line(text, self.path, lineno)
        except DataError as err:
            if last and isinstance(err.__cause__, json.JSONDecodeError):
                self.torn, self.end = 1, offset
                return
            raise
        yield JsonlLine(offset, len(body), record, lineno)


def read_jsonl_tolerant(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Read an append-only JSONL file written by citegraph, tolerating a torn last line.

    A run killed mid-write can leave a partial last line (cut anywhere, even inside a multi-byte
    character); it is dropped (and counted) so the run resumes from the last complete record. A
    bad line elsewhere is real corruption and raises. Only ``\\n`` ends a record: U+2028 and the
    other Unicode line breaks stay inside the JSON strings that hold them. :class:`TolerantScan`
    reads the same file one line at a time.

    Returns:
        The records and the number of dropped trailing lines (0 or 1).

    Raises:
        DataError: a line other than the last is not UTF-8 or not valid JSON, or a line is valid
            JSON but not an object (names the file and line).
    """
    scan = TolerantScan(path)
    records = [line.record for line in scan]
    return records, scan.torn


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
