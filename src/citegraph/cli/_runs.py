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


_COMPARE = ("alignment", "correctness", "precision", "recall", "f1", "na_precision", "na_recall")


@runs_group.command("compare")
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--kind", type=click.Choice(["micro", "macro"]), default="micro", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def compare_command(run_dirs: tuple[Path, ...], kind: str, as_json: bool) -> None:
    """Side-by-side table of finished runs (Tables 5 and 7, Figures 4 and 5 of the paper).

    Each row is one run's metrics.json: the citation metrics, [NA] metrics and text-quality
    means, with what differs between the runs (split, model, removed facts, retrieval accuracy).
    """
    import json

    from rich.table import Table

    rows = []
    for path in run_dirs:
        metrics_file = path / "metrics.json"
        if not metrics_file.is_file():
            raise click.BadParameter(f"{path} has no metrics.json (run `citegraph runs report`)")
        rows.append((path, json.loads(metrics_file.read_text(encoding="utf-8"))))
    if as_json:
        out = [
            {"run": str(p), "setting": _setting(m)} | {n: m.get(n, {}).get(kind) for n in _COMPARE}
            for p, m in rows
        ]
        click.echo(json.dumps(out, indent=2))
        return
    table = Table(title=f"{kind} metrics (%); text quality 1-5")
    for column in ("run", "setting", *_COMPARE, "coh", "con", "flu", "rel"):
        table.add_column(column, justify="left" if column in ("run", "setting") else "right")
    for path, m in rows:
        setting = _setting(m)
        cells = [_cell(m.get(name, {}).get(kind)) for name in _COMPARE]
        quality = m.get("text_quality") or {}
        judged = [
            _mean(quality.get(c)) for c in ("coherence", "consistency", "fluency", "relevance")
        ]
        table.add_row(str(path), setting, *cells, *judged)
    console.print(table)


def _setting(m: dict[str, Any]) -> str:
    """What tells runs apart: split, model, removed facts, retrieval accuracy."""
    exp = m.get("experiment") or {}
    parts = [m.get("config", {}).get("split"), (m.get("setup") or {}).get("model")]
    if exp.get("remove_knowledge"):
        parts.append(f"-{exp['remove_knowledge']} facts")
    if exp.get("retrieval_accuracy_requested", 100) < 100:
        parts.append(f"ret {exp['retrieval_accuracy_requested']}%")
    return " ".join(p for p in parts if p)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _mean(summary: dict[str, Any] | None) -> str:
    if not summary or summary.get("mean") is None:
        return "-"
    return f"{summary['mean']:.2f}"
