"""Stopping a run on Ctrl-C (SIGINT) or SIGTERM like a Unix tool: the first signal stops it
gracefully, the second at once.

The command line installs the handlers with :func:`graceful_interrupts` (library code never
does: a program that calls :func:`~citegraph.runs.run_task_async` in its own loop gets the usual
:class:`KeyboardInterrupt` / :class:`asyncio.CancelledError`, and the records finished before it
stay in the run directory). With the handlers installed:

- **first signal**, while the engine works through items (:func:`draining`): no new item is
  started, the items in flight get :data:`GRACE_S` seconds to finish (their records are written),
  then they are cancelled (HTTP calls are cancelled, a local model stops generating within a
  token), and :func:`~citegraph.runs.run_task_async` raises :class:`RunInterrupted`. Outside that
  stretch (loading models, writing metrics) the signal raises :class:`KeyboardInterrupt` at once,
  as Python's default handler does.
- **second signal**: the process exits at once (:func:`os._exit`) with ``128 + signal``; every
  record finished so far is already on disk (each ``samples.jsonl`` line is flushed as its batch
  finishes).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any

#: Seconds the items in flight get to finish after the first signal before they are cancelled.
GRACE_S = 2.0
#: Signals handled: Ctrl-C and the polite kill.
HANDLED = (signal.SIGINT, signal.SIGTERM)


_FIRST_SIGNAL = (
    f"stopping: no new items; those in flight get {GRACE_S:g} s to finish (press Ctrl-C again "
    "to exit at once)\n"
).encode()
_SECOND_SIGNAL = (
    b"interrupted again: exiting at once (every finished record is on disk; the same command "
    b"resumes)\n"
)


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by the first Ctrl-C (or SIGTERM) after writing every finished record.

    A :class:`KeyboardInterrupt`, so code that catches :class:`Exception` lets it through.

    Attributes:
        out: The run directory (re-running the same command resumes it).
        signum: The signal that stopped it.
        n_done_now: Items finished (and written) in this call before the stop.
        n_left: Selected items not finished (to do on resume).
    """

    def __init__(self, out: str, signum: int, n_done_now: int, n_left: int) -> None:
        super().__init__(f"run in {out} interrupted ({signal.Signals(signum).name})")
        self.out = out
        self.signum = signum
        self.n_done_now = n_done_now
        self.n_left = n_left


class _State:
    """The process's interrupt state (one per process: signals are process-wide)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.installed = False
        self.signum: int | None = None
        self.draining = 0


_STATE = _State()


def stop_requested() -> int | None:
    """The signal that asked the running command to stop, or ``None`` (always ``None`` unless
    :func:`graceful_interrupts` is active)."""
    return _STATE.signum


def exit_status(signum: int) -> int:
    """The shell's exit status for a process stopped by ``signum``: 130 for SIGINT, 143 for
    SIGTERM."""
    return 128 + int(signum)


def _handle(signum: int, frame: FrameType | None) -> None:
    if _STATE.signum is not None:  # the second signal: leave now
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        with suppress(OSError):
            os.write(2, _SECOND_SIGNAL)
        os._exit(exit_status(_STATE.signum))
    _STATE.signum = signum
    if not _STATE.draining:  # nothing can stop gracefully right now: Python's default
        raise KeyboardInterrupt
    with suppress(OSError):
        os.write(2, _FIRST_SIGNAL)


@contextmanager
def graceful_interrupts() -> Iterator[None]:
    """Handle SIGINT and SIGTERM as described in this module while the block runs (the command
    line's wrapper; outside the main thread, or when already active, it does nothing)."""
    if threading.current_thread() is not threading.main_thread() or _STATE.installed:
        yield
        return
    previous: dict[int, Any] = {s: signal.getsignal(s) for s in HANDLED}
    for s in HANDLED:
        signal.signal(s, _handle)
    _STATE.installed, _STATE.signum = True, None
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _STATE.installed, _STATE.signum = False, None


@contextmanager
def draining() -> Iterator[None]:
    """Mark the block as able to stop gracefully: while it runs, a first signal only sets
    :func:`stop_requested` (the engine's loop over the items)."""
    with _STATE.lock:
        _STATE.draining += 1
    try:
        yield
    finally:
        with _STATE.lock:
            _STATE.draining -= 1
