"""Atomic file writes: write a sibling temporary file, then rename it over the target.

A reader never sees a half-written file, and a crash leaves the old file (or none) in place.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from citegraph.io._text import encodable


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` in one rename. Text is written as UTF-8, a lone surrogate
    in it as U+FFFD (:func:`~citegraph.io.encodable`; JSON goes through
    :func:`~citegraph.io.json_text`, which keeps it)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data if isinstance(data, bytes) else encodable(data).encode("utf-8"))
    tmp.replace(path)


def atomic_write_lines(path: Path, lines: Iterable[bytes]) -> None:
    """Replace ``path`` with ``lines`` (written as they come, not joined in memory) in one
    rename."""
    with AtomicLines(path, binary=True) as target:
        target.writelines(lines)


class AtomicLines:
    """A file written piece by piece that replaces ``path`` in one rename when the ``with``
    block ends without an error (on an error the temporary file is removed, ``path`` kept).

    Args:
        path: The file to replace.
        binary: Write bytes instead of UTF-8 text.
    """

    def __init__(self, path: Path, *, binary: bool = False) -> None:
        self.path = path
        self.tmp = path.with_name(path.name + ".tmp")
        self.binary = binary

    def __enter__(self) -> IO[Any]:
        self._handle: IO[Any] = (
            self.tmp.open("wb") if self.binary else self.tmp.open("w", encoding="utf-8")
        )
        return self._handle

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self._handle.close()
        if kind is None:
            self.tmp.replace(self.path)
        else:
            self.tmp.unlink(missing_ok=True)
