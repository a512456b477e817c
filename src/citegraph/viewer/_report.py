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
from citegraph.errors import ConfigError
from citegraph.io import atomic_write
from citegraph.runs import RUN_FILE, Presenter, RunData
from citegraph.viewer._plots import chart_svg
from citegraph.viewer._render import assets, environment
from citegraph.viewer._site import Site, placement_lines, presented, presenter_of


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
        data = site.run_data(path)
        task, presenter = presenter_of(data.info)
        data_by_task.setdefault(task, []).append(data)
        presenters[task] = presenter
        shown = presented(presenter, data.metrics, data.info)
        chosen = data.records[:samples]
        runs.append(
            {
                "index": number,
                "where": where_from(out, path),
                "run": site.overview_of(ref, path, data.info, data.metrics, shown),
                "models": placement_lines(data.info),
                "shown": shown,
                "samples": [
                    {"summary": presenter.summary(r), "blocks": presenter.sample(r, data.info)}
                    for r in chosen
                ],
            }
        )
    figures = [
        (task, chart, chart_svg(chart))
        for task, data in data_by_task.items()
        for chart in presenters[task].charts(data)
    ]
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
