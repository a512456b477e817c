"""``citegraph runs``: merge shards of a run, re-aggregate a run's metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from citegraph.cli._console import console, reports_errors
from citegraph.errors import ConfigError
from citegraph.runs import RunDir, merge_runs, read_run_info


@click.group("runs")
def runs_group() -> None:
    """Run directories: merge shards, recompute metrics."""


@runs_group.command("merge")
@click.argument(
    "shards", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Merged run directory.")
@click.option("--overwrite", is_flag=True, help="Replace what --out holds.")
@reports_errors
def merge_command(shards: tuple[Path, ...], out: Path, overwrite: bool) -> None:
    """Merge the shard directories of one run (--shard i/N) and compute its metrics."""
    run = merge_runs(shards, out, overwrite=overwrite)
    console.print(f"Merged {len(run.records)} samples from {len(shards)} shards into {out}")
    _finalize(run)


@runs_group.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@reports_errors
def report_command(run_dir: Path) -> None:
    """Recompute metrics.json from samples.jsonl (no model needed) and print it."""
    info = read_run_info(run_dir)
    run = RunDir.open(run_dir, info["config"], data=info.get("data"))
    _finalize(run)


def _finalize(run: RunDir) -> None:
    task = run.info["config"].get("task")
    metrics: dict[str, Any]
    if task == "kalma.run":
        from citegraph.cli._kalma import print_metrics
        from citegraph.kalma import finalize_run

        metrics = finalize_run(run)
        print_metrics(metrics)
    else:
        raise ConfigError(f"{run.path}: no report for runs of task {task!r}")
    console.print(f"Wrote {run.path / 'metrics.json'}")
