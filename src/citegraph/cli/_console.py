"""Console helpers for the CLI: one rich console, error reporting, progress bars."""

from __future__ import annotations

import functools
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from citegraph.errors import CitegraphError

console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Turn citegraph's own errors and invalid option values into red messages, exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except CitegraphError as exc:
            err_console.print(
                f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
            )
            sys.exit(2)
        except ValidationError as exc:  # a config model refused an option value
            for problem in exc.errors():
                where = "--" + "-".join(str(p).replace("_", "-") for p in problem["loc"])
                err_console.print(
                    f"[bold red]error:[/] {where}: {problem['msg']} (got {problem.get('input')!r})",
                    highlight=False,
                    soft_wrap=True,
                )
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


#: Seconds between the plain progress lines written when stderr is not a terminal.
PLAIN_PROGRESS_EVERY = 60.0


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def progress_line(step: str, done: int, total: int, elapsed: float) -> str:
    """One plain progress line: ``step: done/total (pct), rate, elapsed, ETA``."""
    share = f" ({done / total:.0%})" if total else ""
    line = f"{step}: {done}/{total}{share}, elapsed {_clock(elapsed)}"
    if done and total and elapsed > 0:
        line += f", {done / elapsed * 60:.1f}/min, ETA {_clock(elapsed * (total - done) / done)}"
    return line


@contextmanager
def progress_bar(
    description: str, *, out: Console | None = None, every: float | None = None
) -> Iterator[Callable[..., None]]:
    """A rich progress bar with rate and ETA; yields ``update(done, total, step=None)``
    (``step``, when given, replaces the description: a multi-step command's current step).

    When ``out`` (default: stderr) is not a terminal (``nohup``, CI logs), where a live bar
    shows nothing until the end, a plain :func:`progress_line` is written every ``every``
    seconds (default :data:`PLAIN_PROGRESS_EVERY`) and at each step change instead."""
    target = out or err_console
    every = PLAIN_PROGRESS_EVERY if every is None else every
    shown_step, shown_at = description, -float("inf")
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=target,
        transient=False,
    ) as progress:
        task = progress.add_task(description, total=None, rate="")

        def update(done: int, total: int, step: str | None = None) -> None:
            nonlocal shown_step, shown_at
            elapsed = progress.tasks[0].elapsed or 0.0
            rate = f"{done / elapsed:.1f}/s" if elapsed > 0 and done else ""
            if step is not None:
                progress.update(task, description=step)
            progress.update(task, completed=done, total=total, rate=rate)
            if target.is_terminal:
                return
            now = time.monotonic()
            changed = step is not None and step != shown_step
            if changed or now - shown_at >= every:
                shown_step, shown_at = step or shown_step, now
                line = progress_line(shown_step, done, total, elapsed)
                target.print(line, highlight=False, markup=False, soft_wrap=True)

        yield update


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
    """Print ``label: path`` in the house style."""
    click.echo(f"{label}: {path}")


def command_line() -> str:
    """The command being run, shell-quoted, as run directories record it."""
    return " ".join(shlex.quote(a) for a in ["citegraph", *sys.argv[1:]])
