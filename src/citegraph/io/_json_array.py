"""Where each entry of a JSON file holding one array is, found without parsing the file whole.

A dataset file such as BioKaLMA's is one JSON array of entries. :class:`JsonArrayIndex` finds the
byte span of each entry in one streaming pass over the file (1 MiB at a time: only strings and
brackets are looked at), so that an entry can be parsed alone, when it is needed, and a run over
10,000 entries never holds them all. The bytes between entries are checked too (a missing or
doubled comma is an error naming the line), so the file is accepted exactly when it is valid
JSON, up to what :meth:`JsonArrayIndex.entry` finds inside an entry when it parses it.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from citegraph.errors import DataError
from citegraph.io._json_file import parse_json
from citegraph.io._text import BOM, check_unchanged, decode_text, file_stamp, regular_file

_CHUNK = 1 << 20
# a run of text and whole strings between brackets, a bracket, or a string left open (by the
# end of the chunk, or of the file)
# (possessive: text or a whole string per repeat, never given back, so no backtracking)
_TOKEN = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")++|[\[\]{}]|"', re.DOTALL)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = frozenset(b"[]{}")
_OPEN = frozenset(b"[{")
_SPACE = re.compile(rb"[ \t\r\n]*")
_GAPS = {  # (before the first entry, after the last): what may lie there
    (True, True): re.compile(rb"[ \t\r\n]*\[[ \t\r\n]*\][ \t\r\n]*"),
    (True, False): re.compile(rb"[ \t\r\n]*\[[ \t\r\n]*"),
    (False, True): re.compile(rb"[ \t\r\n]*\][ \t\r\n]*"),
    (False, False): re.compile(rb"[ \t\r\n]*,[ \t\r\n]*"),
}


class JsonArrayIndex:
    """The byte span of each entry of a JSON array file; entries must be arrays, objects or
    strings (what datasets hold)."""

    def __init__(self, path: str | Path, *, what: str = "a JSON list") -> None:
        """Find every entry of ``path`` and check the bytes between them.

        Args:
            path: The file.
            what: What the file should hold, for the error message (``a JSON list of
                [question, [entity, ...]] entries``).

        Raises:
            DataNotFoundError: the file does not exist.
            DataError: the path is a directory or not a regular file (never read), or the file
                does not hold one JSON array of such entries (names the line).
        """
        self.path = regular_file(Path(path))
        self._what = what
        self._starts = array("q")
        self._ends = array("q")
        with self.path.open("rb") as handle:
            self._find(handle)
            self._check_gaps(handle)
        self._stamp = file_stamp(self.path)

    def __len__(self) -> int:
        return len(self._starts)

    def entry(self, index: int) -> Any:
        """Entry ``index`` parsed.

        Raises:
            DataError: as :meth:`read`.
        """
        return self.read([index])[0]

    def read(self, indices: Sequence[int]) -> list[Any]:
        """The entries at ``indices`` parsed, through one open file.

        Raises:
            DataError: an entry is not valid JSON (names the file's line), or the file changed
                since it was indexed.
        """
        check_unchanged(self.path, self._stamp)
        with self.path.open("rb") as handle:
            return [self._parse(index, handle) for index in indices]

    def entries(self) -> Iterator[Any]:
        """Every entry parsed, in file order, one at a time.

        Raises:
            DataError: as :meth:`read`.
        """
        check_unchanged(self.path, self._stamp)
        with self.path.open("rb") as handle:
            for index in range(len(self)):
                yield self._parse(index, handle)

    def _parse(self, index: int, handle: BinaryIO) -> Any:
        start = self._starts[index]
        handle.seek(start)
        raw = handle.read(self._ends[index] - start)
        try:
            return parse_json(decode_text(raw, self.path), self.path)
        except DataError as err:
            line = (err.line or 1) - 1 + self._line_of(handle, start)
            raise DataError(f"entry {index}: {err.reason}", path=self.path, line=line) from err

    def _find(self, handle: BinaryIO) -> None:
        """Record the span of each entry: one pass over the brackets, each run of text and
        strings between two brackets taken as one token (looked into only at the list's own
        level, where a string is an entry)."""
        self._depth, self._closed = 0, False
        chunk = handle.read(len(BOM))
        base = len(chunk) if chunk == BOM else 0  # the file offset of ``chunk[0]``
        chunk = chunk[base:]
        while True:
            data = handle.read(_CHUNK)
            chunk += data
            carry = self._tokens(handle, chunk, base, final=not data)
            if not data:
                break
            base += carry
            chunk = chunk[carry:]
        if not self._closed:
            self._fail(handle, base + len(chunk), "the file ends inside the list")

    def _tokens(self, handle: BinaryIO, chunk: bytes, base: int, *, final: bool) -> int:
        """Read the tokens of ``chunk`` (at file offset ``base``); returns where the part to read
        again with the next chunk starts (a run or a string the chunk may have cut)."""
        for match in _TOKEN.finditer(chunk):
            token, at = match.group(), base + match.start()
            if token[0] not in _BRACKETS:  # a run of text and strings, or an unclosed string
                if not final and (token == b'"' or match.end() == len(chunk)):
                    return match.start()
                if token == b'"':
                    self._fail(handle, at, "the file ends inside a string")
                if self._closed and token.strip():
                    self._fail(handle, at, "more after the list's end")
                if self._depth == 0 and token.strip():
                    self._fail(handle, at, f"expected {self._what}")
                if self._depth == 1:
                    for string in _STRING.finditer(token):  # string entries
                        self._starts.append(at + string.start())
                        self._ends.append(at + string.end())
                continue
            if self._closed:
                self._fail(handle, at, "more after the list's end")
            if token[0] in _OPEN:
                if self._depth == 0 and token != b"[":
                    self._fail(handle, at, f"expected {self._what}")
                self._depth += 1
                if self._depth == 2:
                    self._starts.append(at)
            else:
                self._depth -= 1
                if self._depth < 0:
                    self._fail(handle, at, "unmatched closing bracket")
                if self._depth == 1:
                    self._ends.append(at + 1)
                self._closed = self._depth == 0
        return len(chunk)

    def _check_gaps(self, handle: BinaryIO) -> None:
        """The bytes before the first entry, between entries and after the last are JSON's own:
        ``[``, commas and white space; anything else (a number entry, a missing comma) fails."""
        size = os.fstat(handle.fileno()).st_size
        handle.seek(0)
        head = handle.read(len(BOM))
        skip = len(BOM) if head == BOM else 0
        start, n = skip, len(self)
        for k in range(n + 1):
            end = self._starts[k] if k < n else size
            handle.seek(start)
            gap = handle.read(end - start)
            first, last = k == 0, k == n
            ok = _GAPS[first, last].fullmatch(gap)
            if not ok:
                text = gap.strip().decode("utf-8", "replace")[:40]
                at = start + len(_SPACE.match(gap).group())  # type: ignore[union-attr]
                where = "between entries" if not (first or last) else "around the list"
                self._fail(handle, at, f"expected {self._what}; found {text!r} {where}")
            if k < n:
                start = self._ends[k]

    def _fail(self, handle: BinaryIO, offset: int, message: str) -> None:
        raise DataError(message, path=self.path, line=self._line_of(handle, offset))

    @staticmethod
    def _line_of(handle: BinaryIO, offset: int) -> int:
        """The line (1-based) byte ``offset`` is on (counted only when an error needs it)."""
        handle.seek(0)
        lines, left = 1, offset
        while left > 0 and (data := handle.read(min(_CHUNK, left))):
            lines += data.count(b"\n")
            left -= len(data)
        return lines
