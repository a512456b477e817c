"""The CLI's two rich consoles (stdout for results, stderr for errors and progress) and the
command line as run directories record it; :mod:`citegraph.cli._console` gives them to commands."""

from __future__ import annotations

import shlex
import sys

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def command_line() -> str:
    """The command being run, shell-quoted, as run directories record it."""
    return " ".join(shlex.quote(a) for a in ["citegraph", *sys.argv[1:]])
