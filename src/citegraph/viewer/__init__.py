"""See runs in a browser: the local web viewer (``citegraph view``) and the self-contained HTML
report (``citegraph report``).

Both render what a run's task presenter (:class:`citegraph.runs.Presenter`, found through the
run registry) makes of its records and metrics, so they work for the runs of every task
without knowing any paper. The web app needs the ``viewer`` extra (Starlette, uvicorn, Jinja2,
matplotlib); without it these functions raise :class:`~citegraph.errors.MissingDependency`
naming the extra. What one request may cost (runs per compare page, records read for figures,
pages drawn at once, JSON file sizes) is bounded by the constants here
(:mod:`citegraph.viewer._limits`).
"""

from citegraph.viewer._app import create_app, open_port, require_viewer, serve
from citegraph.viewer._catalog import Catalog
from citegraph.viewer._limits import (
    HEAVY_RENDERS,
    HEAVY_WAITING,
    MAX_COMPARE_RUNS,
    MAX_FIGURE_BYTES,
    MAX_JSON_BYTES,
)
from citegraph.viewer._plots import chart_svg
from citegraph.viewer._report import write_report
from citegraph.viewer._samples import SampleIndex
from citegraph.viewer._site import Site

__all__ = [
    "HEAVY_RENDERS",
    "HEAVY_WAITING",
    "MAX_COMPARE_RUNS",
    "MAX_FIGURE_BYTES",
    "MAX_JSON_BYTES",
    "Catalog",
    "SampleIndex",
    "Site",
    "chart_svg",
    "create_app",
    "open_port",
    "require_viewer",
    "serve",
    "write_report",
]
