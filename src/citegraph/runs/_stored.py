"""Records read from ``samples.jsonl`` on demand: a run's records as a sequence that holds only
where each line is, so that metrics over 10,000 records stream them instead of holding them all.

:class:`StoredRecords` is what :attr:`RunDir.records` and :meth:`RunDir.newest` return: indexing
reads one line, iterating reads the lines in the sequence's order through one open file. Each
pass parses the lines again, so a consumer that needs a record twice keeps what it needs of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, overload

Record = dict[str, Any]


class Stored(NamedTuple):
    """Where the newest record of one id is in ``samples.jsonl``, and whether it failed."""

    id: str
    offset: int
    length: int
    failed: bool


class StoredRecords(Sequence[Record]):
    """Records of one ``samples.jsonl``, read from their lines when asked for.

    Args:
        path: The ``samples.jsonl`` file.
        lines: Where each record is, in the sequence's order.
    """

    def __init__(self, path: Path, lines: Sequence[Stored]) -> None:
        self.path = path
        self.lines = list(lines)

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> StoredRecords: ...

    def __getitem__(self, index: int | slice) -> Record | StoredRecords:
        if isinstance(index, slice):
            return StoredRecords(self.path, self.lines[index])
        return next(iter(StoredRecords(self.path, [self.lines[index]])))

    def __iter__(self) -> Iterator[Record]:
        for raw in self.raw():
            record: Record = json.loads(raw)
            yield record

    def raw(self) -> Iterator[bytes]:
        """Each record's line as it is in the file (without its newline), in order."""
        if not self.lines:
            return
        with self.path.open("rb") as handle:
            for line in self.lines:
                handle.seek(line.offset)
                yield handle.read(line.length)

    def __repr__(self) -> str:
        return f"StoredRecords({str(self.path)!r}, {len(self.lines)} records)"

    @property
    def ids(self) -> list[str]:
        """The records' ids, in order (read from the index, not the file)."""
        return [line.id for line in self.lines]

    @property
    def n_failed(self) -> int:
        """Records whose ``status`` is failed (from the index, not the file)."""
        return sum(1 for line in self.lines if line.failed)

    def __add__(self, other: StoredRecords) -> StoredRecords:
        if not isinstance(other, StoredRecords) or other.path != self.path:
            return NotImplemented
        return StoredRecords(self.path, self.lines + other.lines)

    def sorted(self, key: Callable[[Record], Any]) -> StoredRecords:
        """These records ordered by ``key`` (stable, as :func:`sorted`): one pass over the file
        that keeps only the keys."""
        keys = [key(record) for record in self]
        order = sorted(range(len(keys)), key=keys.__getitem__)
        return StoredRecords(self.path, [self.lines[i] for i in order])

    def sorted_by_id(self, key: Callable[[str], Any]) -> StoredRecords:
        """These records ordered by ``key`` of their ids (stable): from the index alone, no
        record is read."""
        return StoredRecords(self.path, sorted(self.lines, key=lambda line: key(line.id)))


def sorted_records(records: Sequence[Record], key: Callable[[Record], Any]) -> Sequence[Record]:
    """``records`` ordered by ``key``, stable: stored records stay on disk (only the keys are
    held), other sequences are sorted in memory."""
    if isinstance(records, StoredRecords):
        return records.sorted(key)
    return sorted(records, key=key)
