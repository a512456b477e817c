"""``citegraph report``: one self-contained HTML file (inline CSS, JS and SVG; opens from disk
with no server) with each run's metrics, the papers' figures recomputed from the runs, and a
sample of answers rendered as in the viewer."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citegraph import __version__
from citegraph.errors import ConfigError, DataError
from citegraph.io import atomic_write
from citegraph.runs import RUN_FILE, Chart, Presenter, RunData
from citegraph.viewer._plots import chart_svg
from citegraph.viewer._render import assets, environment
from citegraph.viewer._site import (
    UNSHOWABLE,
    Site,
    placement_lines,
    presented,
    presenter_of,
    unreadable,
)


def write_report(run_dirs: Sequence[str | Path], out: str | Path, *, samples: int = 5) -> Path:
    """Write the HTML report of ``run_dirs`` to ``out``.

    Args:
        run_dirs: Run directories (folders holding a ``run.json``).
        out: The HTML file to write (atomically).
        samples: Samples shown per run (the first ones, in run order).

    Returns:
        ``out``.

    Raises:
        ConfigError: a directory is not a run directory.
        DataError: a run's files cannot be read or shown: names the file (and line).
        MissingDependency: Jinja2 or matplotlib is not installed (the ``viewer`` extra).
    """
    paths = [Path(p).resolve() for p in run_dirs]
    for path in paths:
        if not (path / RUN_FILE).is_file():
            raise ConfigError(f"{path} is not a run directory (it holds no {RUN_FILE})")
    site = Site([p.parent for p in paths])
    out = Path(out)
    anchors: dict[str, str] = {}
    runs = []
    data_by_task: dict[str, list[RunData]] = {}
    presenters: dict[str, type[Presenter]] = {}
    for number, path in enumerate(paths):
        ref = site.catalog.ref_of(path) or f"{number}/."
        anchors.setdefault(ref, f"#run-{number}")
        try:
            data, task, presenter, section = _section(site, ref, path, out, samples)
        except UNSHOWABLE as exc:
            raise DataError(f"this run cannot be shown ({unreadable(exc)})", path=path) from exc
        data_by_task.setdefault(task, []).append(data)
        presenters[task] = presenter
        runs.append({"index": number, **section})
    figures: list[tuple[str, Chart, str]] = []
    for task, of_task in data_by_task.items():
        try:
            figures.extend((task, c, chart_svg(c)) for c in presenters[task].charts(of_task))
        except (DataError, *UNSHOWABLE) as exc:
            if isinstance(exc, DataError) and exc.path is not None:
                raise
            where = ", ".join(str(d.path) for d in of_task)
            msg = f"the {task} figures of {where} cannot be drawn ({unreadable(exc)})"
            raise DataError(msg) from exc
    html = (
        environment()
        .get_template("report.html")
        .render(
            base=".",
            inline=True,
            assets=assets(),
            runs=runs,
            figures=figures,
            written=time.strftime("%Y-%m-%d %H:%M"),
            version=__version__,
            **_report_urls(anchors),
        )
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, html)
    return out


def _section(
    site: Site, ref: str, path: Path, out: Path, samples: int
) -> tuple[RunData, str, type[Presenter], dict[str, Any]]:
    """One run's data, task, presenter and section of the report.

    Raises:
        DataError: a line of its ``samples.jsonl`` is not a record (the first such line, named
            as ``runs report`` names it), or its run.json or metrics.json cannot be shown.
    """
    data = site.run_data(path)
    task, presenter = presenter_of(data.info)
    index = site.index(path, presenter)
    summaries = index.summaries()
    if index.damage:  # a line that is no record, or a record its task cannot show
        raise index.damage[0]
    shown = presented(presenter, data.metrics, data.info, path)
    section = {
        "where": where_from(out, path),
        "run": site.overview_of(ref, path, data.info, data.metrics, shown),
        "models": placement_lines(data.info),
        "shown": shown,
        "samples": [
            {"summary": summary, "blocks": presenter.sample(record, data.info)}
            for summary, record in zip(summaries[:samples], data.records[:samples], strict=True)
        ],
    }
    return data, task, presenter, section


def where_from(report: Path, run_dir: Path) -> str:
    """How the report names a run directory: its path relative to the report's folder
    (``runs/scored`` beside ``report.html``), so a report moved or shared with its runs says
    nothing of the machine it was written on; the folder's name where no relative path exists
    (another drive)."""
    try:
        return Path(os.path.relpath(run_dir, report.resolve().parent)).as_posix()
    except ValueError:
        return run_dir.name


def _report_urls(anchors: dict[str, str]) -> dict[str, Any]:
    """Links in a report stay inside the file: a run link goes to the run's section."""

    def run_url(ref: str, params: dict[str, Any] | None = None) -> str:
        return anchors.get(ref, "#")

    def sample_url(ref: str, sample_id: str) -> str:
        return "#"

    return {"run_url": run_url, "sample_url": sample_url}
