"""Which run directories the viewer may show, and how a URL names one.

A run is named by ``"<root>/<relative path>"``: the index of one of the directories given to
``citegraph view`` and the run's path below it (``"0/kalma-run"``; ``"0/."`` when the root is
itself a run). :meth:`Catalog.resolve` is the one gate between a URL and the file system: it
refuses (returns ``None`` for) anything that is not a run directory inside a root, so ``../``,
absolute paths and symlinks out of a root are never read. :meth:`Catalog.check_files` is the
gate between a run directory and its files: every file of a run the viewer and the report read
is resolved first, and one that leads out of the roots (a symlinked ``samples.jsonl``), is no
regular file (a named pipe, a device) or is larger than they read is refused with the reason.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from citegraph.errors import DataError
from citegraph.runs import METRICS_FILE, RUN_FILE, SAMPLES_FILE
from citegraph.viewer._limits import MAX_JSON_BYTES, mib

#: How deep below a root the catalog looks for run directories.
MAX_DEPTH = 4
_SKIP = {"export", "__pycache__", "node_modules"}
#: The files of a run directory the viewer and the report read, and the largest each may be
#: (None: read in bounded blocks, any size).
RUN_FILES: dict[str, int | None] = {
    RUN_FILE: MAX_JSON_BYTES,
    METRICS_FILE: MAX_JSON_BYTES,
    SAMPLES_FILE: None,
}


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

    def check_files(self, run_dir: Path) -> None:
        """Check the files of ``run_dir`` the viewer reads (:data:`RUN_FILES`) before any is
        opened; a missing file is fine (a run not finished yet).

        Raises:
            DataError: a file resolves outside the roots (a symlink leading out), is not a
                regular file, or is larger than the viewer reads: names the file.
        """
        for name, largest in RUN_FILES.items():
            contained(run_dir / name, self.roots, largest)

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


def contained(path: Path, roots: Sequence[Path], largest: int | None = None) -> None:
    """Check that ``path``, when it exists, resolves inside one of ``roots`` (resolved) to a
    regular file of at most ``largest`` bytes.

    Raises:
        DataError: it leads outside the roots, is not a regular file, or is too large.
    """
    try:
        if not os.path.lexists(path):
            return
        real = path.resolve()
        found = real.stat() if real.exists() else None
    except (OSError, RuntimeError) as exc:  # a loop of links, a name too long
        raise DataError(f"cannot be resolved ({exc}): not read", path=path) from exc
    if not any(real.is_relative_to(root) for root in roots):
        raise DataError(
            "is a link leading outside the viewer's directories (those given to the viewer or "
            "report): not read",
            path=path,
        )
    if found is None:
        return
    if not stat.S_ISREG(found.st_mode):
        why = "is not a regular file (a named pipe, a device, a folder): not read"
        raise DataError(why, path=path)
    if largest is not None and found.st_size > largest:
        raise DataError(
            f"is {mib(found.st_size)}, larger than the viewer and report read ({mib(largest)}): "
            "not read",
            path=path,
        )


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
