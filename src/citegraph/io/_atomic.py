"""Atomic file writes: write a sibling temporary file, then rename it over the target.

A reader never sees a half-written file, and a crash leaves the old file (or none) in place.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) in one rename."""
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data, encoding="utf-8")
    tmp.replace(path)


def atomic_write_lines(path: Path, lines: Iterable[bytes]) -> None:
    """Replace ``path`` with ``lines`` (written as they come, not joined in memory) in one
    rename."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        handle.writelines(lines)
    tmp.replace(path)
