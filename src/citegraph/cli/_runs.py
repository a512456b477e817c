"""``citegraph runs``: merge shards of a run, re-aggregate a run's metrics, export its tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from citegraph.cli._console import console, note_progress, reports_errors
from citegraph.cli._options import EXISTING_DIR
from citegraph.runs import (
    EXPORT_FORMATS,
    Presenter,
    RunDir,
    export_run,
    finalize,
    merge_runs,
    read_run_info,
    task_of_run,
)


@click.group("runs")
def runs_group() -> None:
    """Run directories: merge shards, recompute metrics, compare, export tables."""


@runs_group.command("merge")
@click.argument("shards", nargs=-1, required=True, type=EXISTING_DIR)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Merged run directory.")
@click.option("--overwrite", is_flag=True, help="Replace what --out holds.")
@reports_errors
def merge_command(shards: tuple[Path, ...], out: Path, overwrite: bool) -> None:
    """Merge the shard directories of one run (--shard i/N) and compute its metrics.

    Works for the runs of every task: the task named in run.json recomputes metrics.json (and
    its other output files, such as a built benchmark's splits) from the merged records.
    """
    run = merge_runs(shards, out, overwrite=overwrite)
    console.print(f"Merged {len(run.records)} samples from {len(shards)} shards into {out}")
    _finalize(run)


@runs_group.command("report")
@click.argument("run_dir", type=EXISTING_DIR)
@reports_errors
def report_command(run_dir: Path) -> None:
    """Recompute metrics.json from samples.jsonl (no model needed) and print it.

    Works for the runs of every task (kalma, caqa, conner): the task named in run.json
    aggregates the records, as at the end of the run.
    """
    info = read_run_info(run_dir)
    run = RunDir.open(run_dir, info["config"], data=info.get("data"))
    _finalize(run)


@runs_group.command("export")
@click.argument("run_dir", type=EXISTING_DIR)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default=EXPORT_FORMATS[0],
    show_default=True,
    help="parquet needs pyarrow: pip install 'citegraph[export]'.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the files.  [default: RUN_DIR/export]",
)
@reports_errors
def export_command(run_dir: Path, fmt: str, out: Path | None) -> None:
    """Write a run's records as flat tables for pandas, polars or DuckDB.

    samples.<ext> has one row per sample (id, status, title, tags, one score_<name> column per
    score, the record's other top-level fields); each table the task adds (kalma: citations,
    sentences; conner score: metrics, sentences; caqa: facts) is one more file. The run's own
    files are only read. docs/export.md describes the columns.
    """

    def written(name: str, path: Path, rows: int) -> None:
        console.print(f"Wrote {path} ({rows} rows)", highlight=False, soft_wrap=True)

    export_run(run_dir, out if out is not None else run_dir / "export", fmt, on_table=written)


def _finalize(run: RunDir) -> None:
    task = task_of_run(run.info, where=run.path)
    metrics = finalize(task, run)
    if task.name.startswith("kalma.") and "details" in metrics:
        from citegraph.cli._kalma import print_metrics

        print_metrics(metrics)  # with the progress note
    else:
        print_summary(task.name, metrics)
        note_progress(metrics)
    console.print(f"Wrote {run.path / 'metrics.json'}")


def print_summary(task: str, metrics: dict[str, Any]) -> None:
    """The scalar figures of any task's ``metrics.json`` as a two-column table."""
    from rich.table import Table

    table = Table(title=f"{task}: metrics.json")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, value in scalar_figures(metrics).items():
        table.add_row(name, _number(value))
    console.print(table)


def scalar_figures(metrics: dict[str, Any], kind: str = "micro") -> dict[str, float | int | None]:
    """The headline numbers of a ``metrics.json``, as the viewer's generic metrics table reads
    them (:meth:`citegraph.runs.Presenter.metrics`): top-level numbers, and for a metric that is
    a dict, its ``kind`` (micro / macro), ``mean``, ``value`` or ``f1`` entry. Setup, config and
    bookkeeping sections are left out."""
    out: dict[str, float | int | None] = {}
    for row in Presenter.metrics(metrics, {}).metrics:
        value = metrics[row.name]
        if _is_number(value):
            out[row.name] = value
        elif kind == "macro" and isinstance(value, dict) and "macro" in value:
            out[row.name] = row.macro
        else:
            out[row.name] = row.value
    return out


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: float | int | None) -> str:
    if value is None:
        return "unmeasured"
    return str(value) if isinstance(value, int) else f"{value:.4g}"


_COMPARE = ("alignment", "correctness", "precision", "recall", "f1", "na_precision", "na_recall")


@runs_group.command("compare")
@click.argument("run_dirs", nargs=-1, required=True, type=EXISTING_DIR)
@click.option("--kind", type=click.Choice(["micro", "macro"]), default="micro", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@reports_errors
def compare_command(run_dirs: tuple[Path, ...], kind: str, as_json: bool) -> None:
    """Side-by-side table of finished runs of any task.

    KaLMA runs (Tables 5 and 7, Figures 4 and 5 of the paper): the citation metrics, [NA]
    metrics and text-quality means, with what differs between the runs (split, model, removed
    facts, retrieval accuracy). Runs of other tasks (caqa judge, conner score...): the headline
    figures of each metrics.json (micro or macro where a metric has both, else its mean).
    """
    import json

    rows = []
    for path in run_dirs:
        metrics_file = path / "metrics.json"
        if not metrics_file.is_file():
            raise click.BadParameter(f"{path} has no metrics.json (run `citegraph runs report`)")
        task = task_of_run(read_run_info(path), where=path).name
        rows.append((path, task, json.loads(metrics_file.read_text(encoding="utf-8"))))
    if all(task.startswith("kalma.") for _, task, _ in rows):
        _compare_kalma([(p, m) for p, _, m in rows], kind, as_json)
        return
    figures = [(p, t, scalar_figures(m, kind)) for p, t, m in rows]
    names = list(dict.fromkeys(name for _, _, f in figures for name in f))
    if as_json:
        out = [{"run": str(p), "task": t} | {n: f.get(n) for n in names} for p, t, f in figures]
        click.echo(json.dumps(out, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"{kind} where a metric has micro and macro; '-' where a run lacks it")
    for column in ("run", "task", *names):
        table.add_column(column, justify="left" if column in ("run", "task") else "right")
    for path, task, f in figures:
        table.add_row(str(path), task, *(_number(f[n]) if n in f else "-" for n in names))
    console.print(table)


def _compare_kalma(rows: list[tuple[Path, dict[str, Any]]], kind: str, as_json: bool) -> None:
    import json

    from rich.table import Table

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
