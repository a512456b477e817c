"""The ``citegraph`` command: one click group per module, each a thin shell over the library."""

from __future__ import annotations

import click

from citegraph import __version__
from citegraph.cli._ask import ask_command
from citegraph.cli._caqa import caqa_group
from citegraph.cli._conner import conner_group
from citegraph.cli._data import data_group
from citegraph.cli._demo import demo
from citegraph.cli._exit import EXIT_CODES_HELP
from citegraph.cli._kalma import kalma_group
from citegraph.cli._models import models_command
from citegraph.cli._run import build_command, run_command
from citegraph.cli._runs import runs_group
from citegraph.cli._view import report_command, view_command
from citegraph.cli._warnings import warnings_as_lines


@click.group(epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="citegraph")
@click.pass_context
def main(ctx: click.Context) -> None:
    """citegraph: verifiable generation grounded in knowledge graphs."""
    ctx.with_resource(warnings_as_lines())


main.add_command(ask_command)
main.add_command(data_group)
kalma_group.add_command(run_command)
kalma_group.add_command(build_command)
main.add_command(kalma_group)
main.add_command(caqa_group)
main.add_command(conner_group)
main.add_command(demo)
main.add_command(models_command)
main.add_command(runs_group)
main.add_command(view_command)
main.add_command(report_command)

__all__ = ["main"]
