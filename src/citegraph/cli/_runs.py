"""``citegraph runs``: merge shards of a run, re-aggregate a run's metrics, export its tables."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from citegraph.cli._console import console, note_progress, reports_errors, warn
from citegraph.cli._options import EXISTING_DIR, outcome_options
from citegraph.cli._streams import shown
from citegraph.kalma.view import KalmaPresenter
from citegraph.runs import (
    EXPORT_FORMATS,
    FinishedRun,
    Presenter,
    RunDir,
    RunFileWarning,
    export_run,
    finalize,
    first_failure,
    merge_runs,
    note_finished,
    read_run_info,
    task_of_run,
)

if TYPE_CHECKING:
    from rich.console import Console


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
    with _run_file_warnings():
        merged = merge_runs(shards, out, overwrite=overwrite)
        console.print(f"Merged {len(merged.records)} samples from {len(shards)} shards into {out}")
        with RunDir.reopen(out) as run:  # its lock held while metrics.json is written
            _finalize(run)


@runs_group.command("report")
@click.argument("run_dir", type=EXISTING_DIR)
@outcome_options
@reports_errors
def report_command(run_dir: Path) -> None:
    """Recompute metrics.json from samples.jsonl (no model needed) and print it.

    Works for the runs of every task (kalma, caqa, conner): the task named in run.json
    aggregates the records, as at the end of the run. With --fail-under it gates the run in CI
    (exit 4 when a metric falls short), and a run with failed items exits 2 or 3 unless
    --allow-failures.
    """
    with _run_file_warnings(), RunDir.reopen(run_dir) as run:  # refused while a run writes it
        metrics = _finalize(run)
    records = run.records
    failure = first_failure(records) if records.n_failed else None
    note_finished(FinishedRun(run.path, metrics, len(records), records.n_failed, failure))


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


@contextmanager
def _run_file_warnings() -> Iterator[None]:
    """Show each :class:`~citegraph.runs.RunFileWarning` (a count of ``run.json`` edited out of
    shape) as a ``warning: ...`` line, once; other warnings as before."""
    with warnings.catch_warnings():  # restores showwarning and the filters afterwards
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *args: Any) -> None:
            if issubclass(category, RunFileWarning):
                warn(str(message))
            else:
                shown(message, category, *args)

        replaced: Any = show  # the same call, typed more loosely
        warnings.showwarning = replaced
        warnings.simplefilter("default", RunFileWarning)
        yield


def _finalize(run: RunDir) -> dict[str, Any]:
    task = task_of_run(run.info, where=run.path)
    metrics = finalize(task, run)
    if task.name.startswith("kalma.") and "details" in metrics:
        from citegraph.cli._kalma import print_metrics

        print_metrics(metrics)  # with the progress note
    else:
        print_summary(task.name, metrics)
        note_progress(metrics)
    console.print(f"Wrote {run.path / 'metrics.json'}")
    return metrics


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


_COMPARE_FORMATS = ("table", "markdown", "csv", "json")
_LAYOUTS = ("auto", "runs-as-rows", "runs-as-columns")


@dataclass
class _Comparison:
    """What ``runs compare`` shows, in every format: runs, differing settings, metrics."""

    paths: list[Path]
    labels: list[str]
    tasks: list[str]
    title: str
    #: setting -> each run's value as text (only the settings that differ)
    settings: dict[str, list[str]]
    #: metric -> each run's value as stored (None: unmeasured or absent)
    values: dict[str, list[Any]]
    #: metric -> each run's value as shown in a table
    cells: dict[str, list[str]]
    #: extra per-run fields of the JSON rows (kalma: the one-line "setting")
    extra: list[dict[str, Any]]


@runs_group.command("compare")
@click.argument("run_dirs", nargs=-1, required=True, type=EXISTING_DIR)
@click.option("--kind", type=click.Choice(["micro", "macro"]), default="micro", show_default=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_COMPARE_FORMATS),
    default=None,
    help="table (for the terminal), markdown, csv or json (one row per run).  [default: table]",
)
@click.option(
    "--layout",
    type=click.Choice(_LAYOUTS),
    default="auto",
    show_default=True,
    help="--format table: one row per run, or one column per run; auto: rows when they fit the "
    "terminal's width, else columns.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json (kept for scripts).")
@reports_errors
def compare_command(
    run_dirs: tuple[Path, ...], kind: str, fmt: str | None, layout: str, as_json: bool
) -> None:
    """Side-by-side table of finished runs of any task, with the settings that differ.

    Settings: the keys of run.json's config whose values differ between the runs (for KaLMA
    runs also split, model, removed facts and retrieval accuracy as metrics.json records them),
    and the input files whose SHA-256 in run.json's data differs ("answers (sha256)": its first
    12 hex digits); settings all runs share are left out. KaLMA runs (Tables 5 and 7, Figures 4
    and 5 of the paper): the citation metrics, [NA] metrics and text-quality means. Runs of
    other tasks (caqa judge, conner score...): the headline figures of each metrics.json (micro
    or macro where a metric has both, else its mean).
    """
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json is --format json; it cannot go with --format {fmt}")
    fmt = "json" if as_json else (fmt or "table")
    comparison = _comparison(run_dirs, kind)
    if fmt == "json":
        click.echo(_compare_json(comparison))
    elif fmt == "csv":
        click.echo(_compare_csv(comparison), nl=False)
    elif fmt == "markdown":
        click.echo(_compare_markdown(comparison))
    else:
        _print_comparison(comparison, console, layout)


def _comparison(run_dirs: Sequence[Path], kind: str) -> _Comparison:
    """Read each run's run.json and metrics.json into what every format shows."""
    import json

    from citegraph.runs import differing_settings, input_settings

    infos, metrics, tasks = [], [], []
    for path in run_dirs:
        metrics_file = path / "metrics.json"
        if not metrics_file.is_file():
            raise click.BadParameter(f"{path} has no metrics.json (run `citegraph runs report`)")
        info = read_run_info(path)
        tasks.append(task_of_run(info, where=path).name)
        infos.append(info)
        metrics.append(json.loads(metrics_file.read_text(encoding="utf-8")))
    kalma = all(task.startswith("kalma.") for task in tasks)
    configs = [
        (
            KalmaPresenter.compare_settings(i.get("config") or {}, m)
            if kalma
            else dict(i.get("config") or {})
        )
        | input_settings(i.get("data"))
        for i, m in zip(infos, metrics, strict=True)
    ]
    settings = differing_settings([{"task": t} | c for t, c in zip(tasks, configs, strict=True)])
    paths = list(run_dirs)
    common = dict.fromkeys(tasks)
    task_note = f"{', '.join(common)}: " if len(common) == 1 else ""
    if kalma:
        presented = KalmaPresenter.compare_figures(metrics, kind)
        values, cells, extra = presented.values, presented.cells, presented.extra
        title = f"{task_note}{presented.title}"
    else:
        figures = [scalar_figures(m, kind) for m in metrics]
        names = list(dict.fromkeys(name for f in figures for name in f))
        values = {n: [f.get(n) for f in figures] for n in names}
        cells = {n: [_number(f[n]) if n in f else "-" for f in figures] for n in names}
        title = f"{task_note}{kind} where a metric has micro and macro; '-' where a run lacks it"
        extra = [{} for _ in metrics]
    return _Comparison(paths, _labels(paths), tasks, title, settings, values, cells, extra)


def _labels(paths: Sequence[Path]) -> list[str]:
    """Short names for the runs: the fewest trailing path parts that tell them apart."""
    parts = [p.parts or (str(p),) for p in paths]
    for k in range(1, max(len(p) for p in parts) + 1):
        labels = [str(Path(*p[-k:])) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
    return [f"{i + 1}: {label}" for i, label in enumerate(str(p) for p in paths)]


def _compare_rows(c: _Comparison, cells: bool) -> tuple[list[str], list[list[Any]]]:
    """One row per run: run, task, the differing settings, the metrics (as shown or as
    stored)."""
    settings = [k for k in c.settings if k != "task"]
    figures = c.cells if cells else c.values
    header = ["run", "task", *settings, *figures]
    rows = [
        [str(path), c.tasks[i], *(c.settings[k][i] for k in settings)]
        + [figures[n][i] for n in figures]
        for i, path in enumerate(c.paths)
    ]
    return header, rows


def _compare_json(c: _Comparison) -> str:
    import json

    out = [
        {"run": str(path), "task": c.tasks[i]}
        | c.extra[i]
        | {"settings": {k: v[i] for k, v in c.settings.items() if k != "task"}}
        | {name: column[i] for name, column in c.values.items()}
        for i, path in enumerate(c.paths)
    ]
    return json.dumps(out, indent=2)


def _compare_csv(c: _Comparison) -> str:
    import csv
    import io

    header, rows = _compare_rows(c, cells=False)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([[_csv_value(v) for v in row] for row in rows])
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    """A compare cell for CSV: empty for null, text never read as a formula (formula_safe)."""
    from citegraph.io import formula_safe

    if value is None:
        return ""
    return formula_safe(value) if isinstance(value, str) else value


def _compare_markdown(c: _Comparison) -> str:
    from citegraph.io import markdown_table

    header, rows = _compare_rows(c, cells=True)
    escaped = [[shown(v).replace("|", "\\|") for v in row] for row in rows]
    return f"{shown(c.title)}\n\n{markdown_table(header, escaped)}"


def _print_comparison(c: _Comparison, out: Console, layout: str) -> None:
    """The rich table: runs as rows when they fit ``out``'s width (or ``layout`` says so), else
    runs as columns and settings and metrics as rows. Cells fold rather than end in "…"."""
    from rich.table import Table

    names = [*c.settings, *c.cells]
    columns = {"run": c.labels} | c.settings | c.cells
    wide = sum(max(len(n), *(len(v) for v in col)) + 3 for n, col in columns.items()) + 1
    as_rows = layout == "runs-as-rows" or (layout == "auto" and wide <= out.width)
    table = Table(title=c.title)
    if as_rows:
        for name in ("run", *names):
            right = name in c.cells
            table.add_column(name, justify="right" if right else "left", overflow="fold")
        for i, label in enumerate(c.labels):
            table.add_row(label, *(columns[n][i] for n in names))
    else:
        table.add_column("", overflow="fold")
        for label in c.labels:
            table.add_column(label, justify="right", overflow="fold")
        for n, name in enumerate(names):
            last_setting = n == len(c.settings) - 1
            table.add_row(name, *columns[name], end_section=last_setting)
    out.print(table)
    if not c.settings and len(c.paths) > 1:
        out.print(
            "Settings: the same in every run (run.json config and input files).", highlight=False
        )
    for label, path in zip(c.labels, c.paths, strict=True):
        if label != str(path):
            out.print(f"{label} = {path}", highlight=False, markup=False, soft_wrap=True)
