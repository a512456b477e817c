"""The viewer's pages as data: what each page shows, read from run directories through the run
registry (a run's task, found from ``run.json``, says how its samples and metrics are shown).

:class:`Site` is shared by the web app and the HTML report; it holds one
:class:`~citegraph.viewer._samples.SampleIndex` per run so that pages are served from offsets
and cached sample-list rows, never by re-reading a whole run.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from citegraph.errors import CitegraphError, DataError
from citegraph.io import json_text
from citegraph.runs import (
    METRICS_FILE,
    RUN_FILE,
    Chart,
    Completion,
    Presenter,
    RunData,
    RunPresentation,
    check_run_identity,
    differing_settings,
    migrate_run_info,
    run_settings,
    run_state,
    task_of_run,
    token_table,
)
from citegraph.viewer._catalog import Catalog
from citegraph.viewer._limits import mib
from citegraph.viewer._listing import (
    RunOverview,
    SampleFilter,
    SamplePage,
    facets_of,
    model_of,
    page_of,
    read_json,
    settings_of,
)
from citegraph.viewer._samples import UNSHOWABLE, SampleIndex

#: What reading or showing one damaged or hostile run directory may raise: the run is listed as
#: unreadable, with the reason, and its pages answer with the reason, never a server error.
UNREADABLE = (CitegraphError, OSError, *UNSHOWABLE)


def unreadable(exc: BaseException) -> str:
    """The short reason a run cannot be shown (the file and line, when known)."""
    text = str(exc) if isinstance(exc, CitegraphError | OSError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:300]


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a hand-edited run.json)."""
    return value if isinstance(value, dict) else {}


def placement_lines(info: dict[str, Any]) -> list[str]:
    """One line per local model of ``run.json`` ``models``: where it ran, its dtype and size
    (``nli: hf:x on cuda:0, bfloat16, 435M parameters, 0.87 GB``); none for a malformed
    entry."""
    models = info.get("models")
    lines: list[str] = []
    if not isinstance(models, dict):
        return lines
    for role, placed in models.items():
        if not isinstance(placed, dict):
            continue
        try:
            n = float(placed.get("n_params") or 0)
            size = float(placed.get("weight_bytes") or 0) / 1e9
        except (TypeError, ValueError):
            continue
        count = f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"
        lines.append(
            f"{role}: {placed.get('name', '?')} on {placed.get('device', '?')}, "
            f"{placed.get('dtype', '?')}, {count} parameters, {size:.2f} GB"
        )
    return lines


def presenter_of(info: dict[str, Any]) -> tuple[str, type[Presenter]]:
    """The task name and presenter of a run from its ``run.json`` (the task presenter's
    :meth:`~citegraph.runs.Presenter.for_run` variant); the generic presenter when the run names
    no registered task (a run of another tool, or of a removed task)."""
    try:
        task = task_of_run(info)
    except CitegraphError:
        name = info.get("task") or mapping(info.get("config")).get("task")
        return (str(name) if name else "unknown"), Presenter
    return task.name, task.presenter.for_run(info)


def presented(
    presenter: type[Presenter],
    metrics: dict[str, Any],
    info: dict[str, Any],
    run_dir: Path | None = None,
) -> RunPresentation:
    """The run's metrics as its presenter shows them; an empty table before ``metrics.json``
    exists.

    Raises:
        DataError: ``metrics.json`` holds values of a shape its task cannot show (names it).
    """
    if not metrics:
        return RunPresentation(metrics=[])
    try:
        shown = presenter.metrics(metrics, info)
        tokens = token_table(metrics)  # every task's chat-call token totals
        if tokens is not None:
            shown = shown.model_copy(update={"blocks": [*shown.blocks, tokens]})
        return shown
    except CitegraphError:
        raise
    except UNSHOWABLE as exc:
        where = run_dir / METRICS_FILE if run_dir is not None else METRICS_FILE
        why = f"metrics this run's task cannot show ({unreadable(exc)})"
        raise DataError(why, path=where) from exc


#: Fields of ``run.json`` and the JSON type every reader of a run expects of them.
_RUN_FIELDS = {"task": str, "created": str, "config": dict, "runtime": dict, "data": dict}


def run_info(run_dir: Path) -> dict[str, Any]:
    """``run.json`` of ``run_dir`` in the current layout (empty when missing or not JSON, as
    before a run starts).

    Raises:
        DataError: a field has the wrong JSON type (a hand-edited or damaged file): names the
            file and the field; or its config and data no longer hash to its ``run_id`` (an
            edited file); or it was written by a newer citegraph.
    """
    info = read_json(run_dir / RUN_FILE)
    for key, kind in _RUN_FIELDS.items():
        value = info.get(key)
        if value is not None and not isinstance(value, kind):
            what = "an object" if kind is dict else "text"
            raise DataError(
                f"should be {what}, not {type(value).__name__}; the file was edited or damaged",
                path=run_dir / RUN_FILE,
                field=key,
            )
    if "run_id" in info:  # re-hashed: an edited file would show settings not used
        check_run_identity(info, run_dir / RUN_FILE)
    return migrate_run_info(info, run_dir / RUN_FILE) if info else info  # the current layout


def skipped_lines(index: SampleIndex) -> str | None:
    """The note on the lines of ``samples.jsonl`` that cannot be shown (not records, or records
    the run's task cannot show), or None."""
    damage = index.damage
    if not damage:
        return None
    return f"{len(damage)} line(s) of samples.jsonl not shown: {damage[0]}"[:300]


def unreadable_overview(ref: str, run_dir: Path, exc: BaseException) -> RunOverview:
    """The run list's line of a run that cannot be read: its ref and why."""
    return RunOverview(
        ref=ref,
        path=run_dir,
        task="?",
        created="",
        model="-",
        settings={},
        metrics=[],
        n_samples=0,
        n_failed=0,
        n_unmeasured=0,
        finished=True,
        completion=Completion(n_done=0),
        torn=False,
        problem=f"unreadable: {unreadable(exc)}",
    )


class Site:
    """The runs under the viewer's roots, with a sample index per run."""

    def __init__(self, roots: list[str | Path]) -> None:
        self.catalog = Catalog(roots)
        self._indexes: dict[Path, SampleIndex] = {}
        self._lock = threading.Lock()

    def info(self, run_dir: Path) -> dict[str, Any]:
        """``run.json`` of ``run_dir`` (:func:`run_info`), once the files of the run this site
        reads are checked (:meth:`Catalog.check_files`): every page reads a run through here
        first.

        Raises:
            DataError: a file of the run leads outside the roots, is no regular file or is too
                large; or run.json is damaged (names the file).
        """
        self.catalog.check_files(run_dir)
        return run_info(run_dir)

    def index(self, run_dir: Path, presenter: type[Presenter]) -> SampleIndex:
        """The (cached) sample index of ``run_dir``."""
        with self._lock:
            index = self._indexes.get(run_dir)
            if index is None or index.presenter is not presenter:
                index = self._indexes[run_dir] = SampleIndex(run_dir, presenter)
            return index

    def warm(self) -> None:
        """Index every run and make its sample-list rows (what the first page view would do)."""
        for entry in self.catalog.runs():
            try:
                self.overview(entry.ref, entry.path)
            except UNREADABLE:
                continue

    def overviews(self) -> list[RunOverview]:
        """Every run under the roots, newest first; a run that cannot be read is listed with
        the reason (``unreadable: ...``), never keeping the others from being listed."""
        rows = []
        for entry in self.catalog.runs():
            try:
                rows.append(self.overview(entry.ref, entry.path))
            except UNREADABLE as exc:
                rows.append(unreadable_overview(entry.ref, entry.path, exc))
        return sorted(rows, key=lambda r: r.created, reverse=True)

    def overview(self, ref: str, run_dir: Path) -> RunOverview:
        """One run's line in the run list."""
        return self.overview_of(ref, run_dir, self.info(run_dir))

    def overview_of(
        self,
        ref: str,
        run_dir: Path,
        info: dict[str, Any],
        metrics: dict[str, Any] | None = None,
        shown: RunPresentation | None = None,
    ) -> RunOverview:
        """One run's line from its ``run.json`` (``info``), and its metrics and their
        presentation when the caller has them already."""
        config = mapping(info.get("config"))
        task, presenter = presenter_of(info)
        if metrics is None:
            metrics = read_json(run_dir / METRICS_FILE)
        index = self.index(run_dir, presenter)
        try:
            rows, facets = index.listing()
            broken = None
        except UNREADABLE as exc:
            rows, facets, broken = [], facets_of([]), f"unreadable: {unreadable(exc)}"
        shown = shown or presented(presenter, metrics, info, run_dir)
        n_failed = facets.count("failed")
        completion = Completion.of_run(mapping(info.get("runtime")), len(rows) - n_failed, n_failed)
        return RunOverview(
            ref=ref,
            path=run_dir,
            task=task,
            created=str(info.get("created") or ""),
            model=model_of(config),
            settings=settings_of(config, info.get("data")),
            metrics=shown.metrics[:4],
            n_samples=len(rows),
            n_failed=n_failed,
            n_unmeasured=facets.count("unmeasured"),
            finished=run_state(run_dir, n_samples=None if broken else len(rows)).finished,
            completion=completion,
            torn=index.torn,
            problem=broken or skipped_lines(index),
        )

    def run_page(self, ref: str, run_dir: Path, query: dict[str, str]) -> dict[str, Any]:
        """The context of a run's page: overview, metrics table, run blocks, a page of
        samples."""
        info = self.info(run_dir)
        _, presenter = presenter_of(info)
        metrics = read_json(run_dir / METRICS_FILE)
        shown = presented(presenter, metrics, info, run_dir)
        chosen = SampleFilter.from_query(query)
        try:
            page = int(query.get("page", "1"))
        except ValueError:
            page = 1
        rows, facets = self.index(run_dir, presenter).listing()
        listing: SamplePage = page_of(rows, chosen, page, facets=facets)
        return {
            "ref": ref,
            "run": self.overview_of(ref, run_dir, info, metrics, shown),
            "info": info,
            "config_json": json_text(mapping(info.get("config")), indent=2),
            "models": placement_lines(info),
            "shown": shown,
            "filters": chosen,
            "listing": listing,
        }

    def sample_page(self, ref: str, run_dir: Path, sample_id: str) -> dict[str, Any] | None:
        """The context of one sample's page (reads that sample's line only), or None."""
        info = self.info(run_dir)
        task, presenter = presenter_of(info)
        index = self.index(run_dir, presenter)
        record = index.record(sample_id)
        if record is None:
            return None
        before, after = index.neighbours(sample_id)
        return {
            "ref": ref,
            "task": task,
            "path": run_dir,
            "sample_id": sample_id,
            "summary": presenter.summary(record),
            "blocks": presenter.sample(record, info),
            "before": before,
            "after": after,
        }

    def run_data(self, run_dir: Path) -> RunData:
        """A whole run (its records read through its index), for figures."""
        info = self.info(run_dir)
        _, presenter = presenter_of(info)
        records = self.index(run_dir, presenter).records()
        return RunData(
            path=run_dir, info=info, metrics=read_json(run_dir / METRICS_FILE), records=records
        )


def compare_context(
    runs: list[tuple[str, Path]], site: Site, *, max_figure_bytes: int | None = None
) -> dict[str, Any]:
    """Several runs side by side: the settings that differ, each metric per run, and the
    papers' figures from the runs of each task.

    Args:
        runs: ``(ref, run directory)`` of each run, each run once.
        site: The site the runs are read through.
        max_figure_bytes: The most bytes of records (all runs together) read for figures;
            beyond it no record is read and ``figures_note`` says why. None: no bound.
    """
    infos = [site.info(p) for _, p in runs]
    shown = []
    tasks = []
    for (_, path), info in zip(runs, infos, strict=True):
        task, presenter = presenter_of(info)
        tasks.append((task, presenter))
        metrics = read_json(path / METRICS_FILE)
        shown.append(presented(presenter, metrics, info, path))
    names = list(dict.fromkeys(row.name for s in shown for row in s.metrics))
    table = {
        name: [next((r for r in s.metrics if r.name == name), None) for s in shown]
        for name in names
    }
    by_task: dict[str, list[Path]] = {}
    presenters: dict[str, type[Presenter]] = {}
    for (task, presenter), (_, path) in zip(tasks, runs, strict=True):
        by_task.setdefault(task, []).append(path)
        presenters[task] = presenter
    pairs = zip(tasks, runs, strict=True)
    size = sum(site.index(p, presenter).record_bytes() for (_, presenter), (_, p) in pairs)
    note = None
    charts: list[tuple[str, Chart]] = []
    if max_figure_bytes is not None and size > max_figure_bytes:
        note = figures_left_out(size, max_figure_bytes)
    else:
        for task, paths in by_task.items():
            data = [site.run_data(p) for p in paths]
            charts.extend((task, chart) for chart in presenters[task].charts(data))
    return {
        "runs": runs,
        "tasks": [t for t, _ in tasks],
        "differ": differing_settings([run_settings(i) for i in infos]),
        "table": table,
        "charts": charts,
        "figures_note": note,
    }


def figures_left_out(size: int, bound: int) -> str:
    """Why a compare page shows no figures: its runs hold more records than a page reads."""
    return (
        f"Figures left out: these runs hold {mib(size)} of records, more than a page of the "
        f"viewer reads ({mib(bound)}). Draw them with `citegraph report` on "
        "these run directories, or start the viewer with a larger `--max-figure-mb`."
    )
