"""One writer per run directory: an advisory lock held while a run writes it.

:meth:`RunDir.open <citegraph.runs.RunDir.open>` takes the lock (``fcntl.flock`` on ``.lock`` in
the directory, which holds the writer's pid and start time) before it touches any file, and
:meth:`RunDir.close <citegraph.runs.RunDir.close>` releases it. A second process that opens the
same directory is refused at once with :class:`RunBusy` ("run DIR is being written by pid N"):
two writers would pay every model call twice and interleave their records. The kernel drops the
lock of a process that dies (even by ``kill -9``), so a stale ``.lock`` file never blocks a
resume. Readers (the viewer, ``runs export``) do not take it; ``runs report`` does, as it
writes ``metrics.json`` (a run being written is refused, not reported over).

Within one process the lock is shared: run directories opened twice by the same program (a
notebook, a test) count their opens and the last close releases it (and removes ``.lock``; a
process killed while writing leaves it behind, unlocked). Where ``fcntl`` is missing
(Windows) or the file system refuses locks, runs are not locked (a warning says so).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import warnings
from pathlib import Path

from citegraph.errors import RunBusy

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"

#: Run directories this process holds the lock of: real path -> [file descriptor, opens].
_HELD: dict[str, list[int]] = {}
_GUARD = threading.Lock()


#: What a refused writer is told to do, unless its caller says otherwise.
WAIT_OR_MOVE = "wait for it or use another --out"


def lock_run_dir(path: Path, *, advice: str = WAIT_OR_MOVE) -> str | None:
    """Take the writer's lock of the run directory ``path`` (which exists).

    Args:
        path: The run directory.
        advice: What the :class:`RunBusy` error tells the user to do.

    Returns:
        The key to pass to :func:`unlock_run_dir`, or ``None`` when runs cannot be locked here.

    Raises:
        RunBusy: another process holds the lock (names its pid and start time).
    """
    if fcntl is None:  # pragma: no cover - Windows
        return None
    key = os.path.realpath(path)
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
            return key
        lock_file = Path(key) / LOCK_FILE
        fd = _locked_fd(path, lock_file, advice)
        if fd is None:
            return None
        stamp = {"pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        note = (json.dumps(stamp) + "\n").encode()
        try:  # written over the old note, then cut: a reader never sees an empty file
            os.pwrite(fd, note, 0)
            os.ftruncate(fd, len(note))
        except OSError:
            pass  # a full disk: the lock holds without its note
        _HELD[key] = [fd, 1]
        return key


def unlock_run_dir(key: str | None) -> None:
    """Release one hold of the lock :func:`lock_run_dir` took (the last one unlocks it)."""
    if key is None:
        return
    with _GUARD:
        held = _HELD.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del _HELD[key]
        # the file goes first (a waiting writer that opened it sees it is gone and opens
        # afresh), then closing the descriptor drops the flock
        with contextlib.suppress(OSError):
            os.unlink(Path(key) / LOCK_FILE)
        os.close(held[0])


def _locked_fd(path: Path, lock_file: Path, advice: str = WAIT_OR_MOVE) -> int | None:
    """A descriptor of ``lock_file`` holding its flock (``None``: the file system cannot lock).

    Retries when the file it locked was removed or replaced meanwhile (its holder released it),
    so two writers never hold locks on two different files, and when the holder that refused it
    released the lock before its note could be read.

    Raises:
        RunBusy: another process holds the lock.
    """
    assert fcntl is not None
    while True:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            note = _read_note(lock_file)
            if note is _RELEASED:  # the holder finished meanwhile: try again
                continue
            raise RunBusy(_busy_message(path, note, advice)) from None
        except OSError as exc:  # a file system without locks (some network mounts)
            os.close(fd)
            warnings.warn(
                f"{path}: cannot lock the run directory ({exc.strerror}); make sure no other "
                "process writes it at the same time",
                RuntimeWarning,
                stacklevel=4,
            )
            return None
        try:
            same = os.stat(lock_file).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # locked a file its holder just removed: take the new one


#: How long a refused writer waits for the holder's note (it is written just after the lock is
#: taken, so a writer refused in between would otherwise name "another process").
NOTE_WAIT_S = 0.5

#: What :func:`_read_note` returns when the lock file is gone: its holder released it.
_RELEASED = object()


def _read_note(lock_file: Path) -> object:
    """The holder's note (a dict, or whatever the file held after :data:`NOTE_WAIT_S`), or
    :data:`_RELEASED` when the file was removed (its holder finished)."""
    deadline = time.monotonic() + NOTE_WAIT_S
    while True:
        try:
            stamp = json.loads(lock_file.read_text(encoding="utf-8", errors="replace"))
        except FileNotFoundError:
            return _RELEASED
        except (OSError, ValueError):
            stamp = None
        if isinstance(stamp, dict) or time.monotonic() >= deadline:
            return stamp
        time.sleep(0.02)


def _busy_message(path: Path, stamp: object, advice: str = WAIT_OR_MOVE) -> str:
    """What the refused writer is told: who holds the run, since when, and what to do."""
    if isinstance(stamp, dict):
        who = f"pid {stamp.get('pid', 'unknown')} (started {stamp.get('started', 'unknown')})"
    else:
        who = "another process"
    return f"run {path} is being written by {who}; {advice}"
