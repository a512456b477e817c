"""Which run directories the viewer may show, and how a URL names one.

A run is named by ``"<root>/<relative path>"``: the index of one of the directories given to
``citegraph view`` and the run's path below it (``"0/kalma-run"``; ``"0/."`` when the root is
itself a run). :meth:`Catalog.resolve` is the one gate between a URL and the file system: it
refuses (returns ``None`` for) anything that is not a run directory inside a root, so ``../``,
absolute paths and symlinks out of a root are never read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from citegraph.runs import RUN_FILE

#: How deep below a root the catalog looks for run directories.
MAX_DEPTH = 4
_SKIP = {"export", "__pycache__", "node_modules"}


@dataclass(frozen=True)
class RunEntry:
    """A run directory found under a root."""

    ref: str
    path: Path


class Catalog:
    """The run directories under the roots given to the viewer."""

    def __init__(self, roots: Sequence[str | Path]) -> None:
        self.roots = [Path(r).resolve() for r in roots]

    def runs(self) -> list[RunEntry]:
        """Every run directory under the roots (a fresh scan: new runs appear on reload)."""
        found = []
        for index, root in enumerate(self.roots):
            for path in _run_dirs(root, 0):
                ref = f"{index}/{path.relative_to(root).as_posix() or '.'}"
                resolved = self.resolve(ref)  # None behind a symlink that leads out of the root
                if resolved is not None:
                    found.append(RunEntry(ref=ref, path=resolved))
        return found

    def resolve(self, ref: str | None) -> Path | None:
        """The run directory named by ``ref``, or None when ``ref`` names nothing the viewer may
        read (not a run, outside the roots, malformed)."""
        if not ref or "\x00" in ref:
            return None
        head, _, rel = ref.partition("/")
        if not (head.isascii() and head.isdigit()) or int(head) >= len(self.roots):
            return None  # "²" is a digit to str.isdigit, not to int()
        root = self.roots[int(head)]
        if os.path.isabs(rel) or "\\" in rel:
            return None
        try:
            path = (root / (rel or ".")).resolve()
            path.relative_to(root)
            is_run = (path / RUN_FILE).is_file()
        except (ValueError, OSError):  # outside the root; a name too long, a loop of links
            return None
        return path if is_run else None

    def ref_of(self, path: Path) -> str | None:
        """The reference of a run directory under a root, or None."""
        path = path.resolve()
        for index, root in enumerate(self.roots):
            try:
                rel = path.relative_to(root).as_posix() or "."
            except ValueError:
                continue
            return f"{index}/{rel}"
        return None


def _run_dirs(path: Path, depth: int) -> Iterator[Path]:
    if (path / RUN_FILE).is_file():
        yield path
    if depth >= MAX_DEPTH:
        return
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir())
    except OSError:
        return
    for child in children:
        if child.name.startswith(".") or child.name in _SKIP:
            continue
        yield from _run_dirs(child, depth + 1)
