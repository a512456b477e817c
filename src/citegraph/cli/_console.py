"""Console helpers for the CLI: one rich console, error reporting, progress bars."""

from __future__ import annotations

import functools
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
from pydantic import ValidationError
from rich.console import Console
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
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
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


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[..., None]]:
    """A rich progress bar with rate and ETA; yields ``update(done, total, step=None)``
    (``step``, when given, replaces the description: a multi-step command's current step)."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    ) as progress:
        task = progress.add_task(description, total=None, rate="")

        def update(done: int, total: int, step: str | None = None) -> None:
            elapsed = progress.tasks[0].elapsed or 0.0
            rate = f"{done / elapsed:.1f}/s" if elapsed > 0 and done else ""
            if step is not None:
                progress.update(task, description=step)
            progress.update(task, completed=done, total=total, rate=rate)

        yield update


def echo_path(label: str, path: object) -> None:
    """Print ``label: path`` in the house style."""
    click.echo(f"{label}: {path}")


def command_line() -> str:
    """The command being run, shell-quoted, as run directories record it."""
    return " ".join(shlex.quote(a) for a in ["citegraph", *sys.argv[1:]])
