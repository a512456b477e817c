"""A JSONL file of records with unique ids, checked in one pass and read again line by line.

Scoring 10,000 answers must not hold 10,000 parsed answers (and their gold) for the whole run:
:class:`JsonlIndex` checks every line once, as the readers always have (same errors, naming the
file, line and field), and keeps only each record's id, line number and byte offset. The work
reads the lines of one batch again when it needs them. A file changed after the check is refused
rather than read at the wrong offsets.

These files are a user's inputs (answers, gold, questions): a lone surrogate in their text is read
as U+FFFD, with one :class:`~citegraph.io._text.TextWarning` per file from the check
(:class:`~citegraph.io._text.SurrogateTally`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from citegraph.errors import DataError
from citegraph.io._jsonl import iter_jsonl_at, parse_jsonl_line
from citegraph.io._text import (
    SurrogateTally,
    check_unchanged,
    file_stamp,
    read_line_at,
    without_surrogates,
)

T = TypeVar("T")

Parse = Callable[[dict[str, Any], Path, int], T]
"""Builds one record from a line's JSON object (the file and line for its errors)."""


@dataclass(frozen=True)
class JsonlRules(Generic[T]):
    """How a JSONL file of records with unique ids is read, by :func:`iter_unique` and
    :class:`JsonlIndex` alike.

    Args:
        parse: Builds (and checks) one record.
        key: A record's id.
        empty: The message when the file holds no record.
        max_line_bytes: A longer line is refused without being read whole (``None``: no cap).
        cap_hint: Added to that refusal (how to raise the cap).
    """

    parse: Parse[T]
    key: Callable[[T], str]
    empty: str
    max_line_bytes: int | None = None
    cap_hint: str = ""


def iter_unique(path: str | Path, rules: JsonlRules[T]) -> Iterator[tuple[int, int, T]]:
    """``(line, byte offset, record)`` for each non-blank line of a JSONL file whose records have
    unique ids, read by ``rules`` (:class:`JsonlRules`).

    A lone surrogate in a line's text is read as U+FFFD; the file gets one
    :class:`~citegraph.io._text.TextWarning` when the pass ends.

    Raises:
        DataError: a line is malformed (from ``parse``) or longer than ``max_line_bytes``, an
            id repeats (names both lines), or the file holds no record.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    tally = SurrogateTally(path)
    lines = iter_jsonl_at(path, max_line_bytes=rules.max_line_bytes, cap_hint=rules.cap_hint)
    for lineno, offset, obj in lines:
        record = rules.parse(tally.clean(obj, lineno), path, lineno)
        sid = rules.key(record)
        if sid in seen:
            raise DataError(
                f"duplicate id {sid!r} (first on line {seen[sid]})", path=path, line=lineno
            )
        seen[sid] = lineno
        yield lineno, offset, record
    if not seen:
        raise DataError(rules.empty, path=path)
    tally.warn()


class JsonlIndex(Generic[T]):
    """Where each record of a checked JSONL file is (:func:`iter_unique`'s rules), without the
    records: ``ids`` in file order, and :meth:`read` for the records at some positions."""

    def __init__(self, path: str | Path, rules: JsonlRules[T]) -> None:
        """Check every line of ``path`` once, read by ``rules``, and note where each record is.

        Raises:
            DataError: as :func:`iter_unique`.
        """
        self.path = Path(path)
        self._parse = rules.parse
        self._key = rules.key
        self.ids: list[str] = []
        self._lines = array("q")
        self._offsets = array("q")
        for lineno, offset, record in iter_unique(self.path, rules):
            self.ids.append(rules.key(record))
            self._lines.append(lineno)
            self._offsets.append(offset)
        self._positions = {sid: i for i, sid in enumerate(self.ids)}
        self._stamp = file_stamp(self.path)

    def __len__(self) -> int:
        return len(self.ids)

    def position(self, sid: str) -> int | None:
        """Where the record of ``sid`` is in the file order, or None when the file has none."""
        return self._positions.get(sid)

    def line(self, position: int) -> int:
        """The line the record at ``position`` is on."""
        return self._lines[position]

    def read(self, positions: Sequence[int]) -> list[T]:
        """The records at ``positions`` (file order), read again from the file.

        Raises:
            DataError: the file changed since it was checked (it is part of the run's identity),
                or a line no longer holds the record it held.
        """
        check_unchanged(self.path, self._stamp)
        out: list[T] = []
        with self.path.open("rb") as handle:
            for position in positions:
                lineno = self._lines[position]
                text = read_line_at(handle, self.path, self._offsets[position], lineno)
                obj, _ = without_surrogates(parse_jsonl_line(text, self.path, lineno))
                record = self._parse(obj, self.path, lineno)
                if self._key(record) != self.ids[position]:
                    raise DataError(
                        f"expected the record of {self.ids[position]!r} on this line; the file "
                        "changed while the run was using it",
                        path=self.path,
                        line=lineno,
                    )
                out.append(record)
        return out
