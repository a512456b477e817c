"""Console helpers for the CLI: one rich console, error reporting, progress bars."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from citegraph.cli._streams import command_line as command_line
from citegraph.cli._streams import console as console
from citegraph.cli._streams import err_console as err_console
from citegraph.runs import Completion

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Wrap a command: citegraph's own errors and invalid option values become red messages,
    Ctrl-C stops a run gracefully (the second at once), failed items and ``--fail-under`` gates
    set the exit status; see :mod:`citegraph.cli._exit` for the table."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from citegraph.cli._exit import guarded

        return guarded(func, args, kwargs)

    return wrapper  # type: ignore[return-value]


#: Seconds between the plain progress lines written when stderr is not a terminal.
PLAIN_PROGRESS_EVERY = 60.0


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def rate_text(per_second: float) -> str:
    """A rate in the unit that shows it best: ``12.5/s``, ``4.8/min`` or ``2.0/h``."""
    if per_second >= 1:
        return f"{per_second:.1f}/s"
    if per_second * 60 >= 1:
        return f"{per_second * 60:.1f}/min"
    return f"{per_second * 3600:.1f}/h"


def _rate_and_eta(done: int, total: int, start_done: int, working: float) -> tuple[str, str]:
    """Rate and ETA from the ``done - start_done`` items finished in ``working`` seconds (this
    process's own work); empty before the first of them (and no ETA once all are done)."""
    new = done - start_done
    if new <= 0 or working <= 0:
        return "", ""
    per_second = new / working
    eta = _clock((total - done) / per_second) if total and total > done else ""
    return rate_text(per_second), eta


def progress_line(
    step: str,
    done: int,
    total: int,
    elapsed: float,
    *,
    start_done: int = 0,
    working: float | None = None,
) -> str:
    """One plain progress line: ``step: done/total (pct), elapsed, rate, ETA``.

    Rate and ETA count only the items done by this process: the ``done - start_done`` done
    in ``working`` seconds (default: ``elapsed``), never those a resumed run found finished
    (``start_done``).
    """
    share = f" ({done / total:.0%})" if total else ""
    line = f"{step}: {done}/{total}{share}, elapsed {_clock(elapsed)}"
    working = elapsed if working is None else working
    rate, eta = _rate_and_eta(done, total, start_done, working)
    if rate:
        line += f", {rate}"
    if eta:
        line += f", ETA {eta}"
    return line


@contextmanager
def progress_bar(
    description: str,
    *,
    out: Console | None = None,
    every: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Callable[..., None]]:
    """A rich progress bar with rate and ETA; yields ``update(done, total, step=None)``
    (``step``, when given, replaces the description: a multi-step command's current step).

    Rate and ETA count from the first update of a step (the engine's, at the start, gives the
    items a resumed run found done): the items done after it, in the time since; a new
    ``step``, or ``done`` going down, starts them afresh. When ``out`` (default: stderr) is
    not a terminal (``nohup``, CI logs), where a live bar shows nothing until the end, there is
    no bar: a plain :func:`progress_line` is written every ``every`` seconds (default
    :data:`PLAIN_PROGRESS_EVERY`), at each step change and once at the end.
    """
    target = out or err_console
    every = PLAIN_PROGRESS_EVERY if every is None else every
    began = clock()
    step_name = description
    start_done, step_start, last = 0, began, (-1, 0)
    shown_at, shown = -float("inf"), (description, -1, 0)
    with Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[eta]}"),
        console=target,
        transient=False,
        disable=not target.is_terminal,
    ) as progress:
        task = progress.add_task(description, total=None, rate="", eta="")

        def plain(now: float) -> None:
            nonlocal shown_at, shown
            done, total = last
            line = progress_line(
                step_name,
                done,
                total,
                now - began,
                start_done=start_done,
                working=now - step_start,
            )
            target.print(line, highlight=False, markup=False, soft_wrap=True)
            shown_at, shown = now, (step_name, done, total)

        def update(done: int, total: int, step: str | None = None) -> None:
            nonlocal step_name, start_done, step_start, last
            now = clock()
            changed = step is not None and step != step_name
            if changed or last[0] < 0 or done < last[0]:
                start_done, step_start = done, now  # a step starts: what it found done
            step_name = step or step_name
            last = (done, total)
            if target.is_terminal:
                rate, eta = _rate_and_eta(done, total, start_done, now - step_start)
                progress.update(
                    task,
                    description=step_name,
                    completed=done,
                    total=total,
                    rate=rate,
                    eta=f"ETA {eta}" if eta else "",
                )
            elif changed or now - shown_at >= every:
                plain(now)

        yield update
        if not target.is_terminal and last[0] >= 0 and shown != (step_name, *last):
            plain(clock())


def completion_note(metrics: Mapping[str, Any]) -> str | None:
    """What the ``progress`` of a ``metrics.json`` says of a run that did every item its own
    ``--limit`` asked for, fewer than its items: ``finished (limit 20 of 1085): ...``; else
    ``None``."""
    progress = metrics.get("progress")
    if not isinstance(progress, Mapping):
        return None
    completion = Completion.of_progress(progress)
    finished = completion.finished_text
    if finished is None:
        return None
    return (
        f"{finished}: the metrics cover those {completion.n_done} items; raise --limit or drop "
        "it to do more (the run resumes)"
    )


def progress_note(metrics: Mapping[str, Any]) -> str | None:
    """What the ``progress`` of a ``metrics.json`` says a reader must be warned of, or ``None``
    when the metrics cover all the run asked for (or predate ``progress``): the metrics cover
    fewer items than the run asked for (``n_done / n_asked``: failed items, or a run stopped
    before its limit), the total is unknown, torn last lines were dropped."""
    progress = metrics.get("progress")
    if not isinstance(progress, Mapping):
        return None
    completion = Completion.of_progress(progress)
    done, failed, scope = completion.n_done, completion.n_failed, completion.scope
    parts = []
    if completion.partial:
        asked = f" ({scope})" if scope else ""
        failures = f", {failed} failed" if failed else ""
        parts.append(
            f"partial run: {completion.counts} items done{asked}{failures}; the metrics cover "
            f"those {done} only (re-run the command to do the rest)"
        )
    elif completion.n_total is None:
        parts.append(
            f"{done} items done of an unknown total (run.json does not record it: written "
            "before citegraph did); the metrics cover those"
        )
    torn = progress.get("torn_lines_dropped")
    if torn:
        parts.append(
            f"{torn} torn last line{'s' if torn != 1 else ''} of samples.jsonl dropped (a run "
            "killed mid-write; the item is done again on resume)"
        )
    return "; ".join(parts) or None


def note_progress(metrics: Mapping[str, Any]) -> None:
    """Print :func:`completion_note` of ``metrics``, then :func:`progress_note` in yellow,
    when there is one."""
    finished = completion_note(metrics)
    if finished:
        console.print(finished, markup=False, highlight=False, soft_wrap=True)
    warn(progress_note(metrics))


def note_failed(n_failed: int, what: str) -> None:
    """When ``n_failed`` of a run's ``what`` (items, samples...) failed, say so in yellow: they
    are left out of the metrics and tried again when the command is re-run."""
    if n_failed:
        console.print(
            f"{n_failed} {what} failed (left out; re-run the command to retry)", style="yellow"
        )


def warn(line: str | None) -> None:
    """Print ``warning: <line>`` in yellow, once; nothing for ``None``."""
    if line:
        console.print(
            f"warning: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True
        )


def echo_path(label: str, path: object) -> None:
    """Print ``label: path`` in the house style (the path :func:`shown`, unwrapped)."""
    console.print(f"{label}: {path}", highlight=False, soft_wrap=True)
