"""How a run is shown: the view model the viewer, the HTML report and ``runs export`` render.

A task's :attr:`~citegraph.runs.Task.presenter` turns what a run directory holds into plain data:

- :meth:`Presenter.summary`: one row of a run's sample list (title, status, scores, tags that
  the list filters on);
- :meth:`Presenter.sample`: the blocks of one sample's page (text with highlighted citations,
  tables with marked rows, fields, raw text);
- :meth:`Presenter.metrics`: the metrics table (value, micro / macro, unmeasured counts with
  their reasons, the model that decided each metric and whether it is a stand-in, how it was
  computed) and extra run-level blocks (a confusion matrix whose cells filter the list);
- :meth:`Presenter.charts`: the papers' figures recomputed from several runs of the task, as
  chart specifications (no plotting library here: the viewer draws them);
- :meth:`Presenter.tables`: flat per-sample sub-tables for ``runs export`` (one row per
  citation, per sentence...); :meth:`Presenter.export_columns`: per-sample columns of the export's
  ``samples`` table (the counts every metric is recomputed from, generation metadata), and
  :meth:`Presenter.export_schema` the types of these columns, so empty tables keep them.

Nothing here knows HTML or a paper: the defaults below work for any task, and a paper's
presenter (``kalma/_view.py``...) refines them. Model text goes into the view model as plain
strings; the renderers escape it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.io import json_text

Record = dict[str, Any]

# CSS classes a segment or cell may carry; the viewer colours them (a block's legend says what
# each means there).
Mark = Literal[
    "correct",  # a citation found in the KG, a verdict that agrees, a consistent sentence
    "wrong",  # a citation not in the KG, a disagreeing verdict, an inconsistent sentence
    "na",  # an [NA] marker (missing knowledge)
    "malformed",  # a citation the parser could not read
    "gold",  # a gold fact
    "cited",  # a fact the answer cited
    "absent",  # a fact removed from what the model was given
    "unknown",  # not verified / unmeasured
    "neutral",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Segment(_Frozen):
    """A run of text, optionally marked and with a tooltip (a citation and its triple)."""

    text: str
    mark: Mark | None = Field(default=None, description="How the text is highlighted.")
    tip: str | None = Field(default=None, description="Shown on hover or click (the triple).")
    link: dict[str, str] | None = Field(
        default=None,
        description="Sample-list filters this cell links to (``{'tag': 'cell:a|b'}``).",
    )


class TextBlock(_Frozen):
    """Paragraphs of marked segments: an answer with its citations highlighted."""

    kind: Literal["text"] = "text"
    title: str
    paragraphs: list[list[Segment]]
    legend: list[tuple[Mark, str]] = Field(
        default_factory=list,
        description="What each mark means here, shown above the text (``('wrong', 'not in "
        "the KG')``); a segment's tooltip says more on hover or click.",
    )


class TableBlock(_Frozen):
    """A table; each cell is a segment (marked, with tooltip or link); rows may be marked."""

    kind: Literal["table"] = "table"
    title: str
    columns: list[str]
    rows: list[list[Segment]]
    row_marks: list[Mark | None] | None = Field(
        default=None, description="One mark per row (a cited fact, a gold fact...)."
    )
    note: str | None = None


class FieldsBlock(_Frozen):
    """Name-value pairs (generation metadata, scores with their unmeasured reasons)."""

    kind: Literal["fields"] = "fields"
    title: str
    fields: list[tuple[str, str]]


class RawBlock(_Frozen):
    """Preformatted text: the raw model output, a JSON record."""

    kind: Literal["raw"] = "raw"
    title: str
    text: str
    open: bool = Field(default=False, description="Shown expanded.")


Block = TextBlock | TableBlock | FieldsBlock | RawBlock


class SampleSummary(_Frozen):
    """One row of a run's sample list."""

    id: str
    title: str = Field(description="What the sample is about (the question, the knowledge).")
    status: str = Field(description="``ok`` or ``failed``.")
    scores: dict[str, float | None] = Field(default_factory=dict)
    tags: list[str] = Field(
        default_factory=list,
        description="Filter facets: ``failed``, ``unmeasured``, ``has-na``, ``verdict:...``, "
        "``gold:...``, ``pred:...``, ``cell:gold|pred``.",
    )


class MetricRow(_Frozen):
    """One line of a run's metrics table."""

    name: str
    value: float | None = Field(default=None, description="The headline value (micro if both).")
    micro: float | None = None
    macro: float | None = None
    percent: bool = Field(default=False, description="A proportion shown as a percentage.")
    n_measured: int | None = Field(default=None, description="Samples that entered the value.")
    unmeasured: dict[str, int] = Field(
        default_factory=dict, description="Samples left out, counted per reason."
    )
    model: str | None = Field(default=None, description="What decided the metric.")
    stand_in: bool = Field(
        default=False, description="The model is a stand-in for the paper's (say so)."
    )
    how: str | None = Field(default=None, description="Mode, prompt version, method.")


class RunPresentation(_Frozen):
    """A run's page header: its metrics table and any run-level blocks."""

    metrics: list[MetricRow]
    blocks: list[Block] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="Warnings, modes, stand-ins.")


class Series(_Frozen):
    """One line, bar group or point cloud of a chart."""

    name: str
    x: list[float | str]
    y: list[float | None]
    err: list[float | None] | None = Field(default=None, description="Error bars (std).")


class Chart(_Frozen):
    """A figure to draw: a line or bar chart, a heatmap, a histogram or a scatter plot.

    Every number is computed by the presenter (so it can be checked by hand): a ``hist`` is
    pre-binned (each series' ``x`` the bin centres, ``y`` the counts), a ``bar`` series has one
    ``x`` label per group, a ``heatmap`` gives ``matrix``.
    """

    kind: Literal["line", "bar", "heatmap", "hist", "scatter"]
    title: str
    x_label: str = ""
    y_label: str = ""
    series: list[Series] = Field(default_factory=list)
    matrix: list[list[float]] | None = Field(
        default=None, description="Heatmap values, rows by ``y_ticks``, columns by ``x_ticks``."
    )
    x_ticks: list[str] | None = None
    y_ticks: list[str] | None = None
    note: str | None = Field(default=None, description="How the figure was computed.")


class RunData(BaseModel):
    """A run as the chart builders see it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    path: Path
    info: dict[str, Any]
    metrics: dict[str, Any]
    records: list[Record]


class Presenter:
    """How the runs of a task are shown. The defaults work for any task's records."""

    @classmethod
    def for_run(cls, info: Mapping[str, Any]) -> type[Presenter]:
        """The presenter of one run's records, given its ``run.json``: this class, or (for a
        task whose sample rows depend on the run's settings) a variant of it, the same class
        object for the same settings so that indexes keyed by presenter stay valid."""
        return cls

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        """The sample-list row of ``record``: its question (or id), status, its ``scores``
        dict, tags ``failed`` and ``unmeasured``."""
        status = str(record.get("status") or "ok")
        scores = record.get("scores")
        numbers = {
            str(k): (float(v) if _is_number(v) else None)
            for k, v in (scores.items() if isinstance(scores, Mapping) else ())
        }
        tags = []
        if status == "failed":
            tags.append("failed")
        if record.get("unmeasured") or any(v is None for v in numbers.values()):
            tags.append("unmeasured")
        title = record.get("question") or record.get("title") or record.get("id")
        return SampleSummary(
            id=str(record.get("id")), title=str(title), status=status, scores=numbers, tags=tags
        )

    @classmethod
    def sample(cls, record: Record, info: Mapping[str, Any]) -> list[Block]:
        """The blocks of a sample's page: its top-level plain fields and the whole record."""
        fields = [
            (str(k), field_text(v))
            for k, v in record.items()
            if isinstance(v, str | int | float | bool) or v is None
        ]
        return [
            FieldsBlock(title="Record", fields=fields),
            RawBlock(title="JSON record", text=json_text(record, indent=2)),
        ]

    @classmethod
    def metrics(cls, metrics: Mapping[str, Any], info: Mapping[str, Any]) -> RunPresentation:
        """The headline numbers of any ``metrics.json``: top-level numbers, and for a metric
        that is a dict, its micro / macro, ``mean``, ``value`` or ``f1``."""
        rows = []
        unmeasured = metrics.get("unmeasured")
        reasons = unmeasured if isinstance(unmeasured, Mapping) else {}
        for name, value in metrics.items():
            if name in _NOT_FIGURES:
                continue
            row = _metric_row(str(name), value, reasons.get(name))
            if row is not None:
                rows.append(row)
        return RunPresentation(metrics=rows)

    @classmethod
    def charts(cls, runs: Sequence[RunData]) -> list[Chart]:
        """Figures over several runs of the task; none by default."""
        return []

    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        """Flat sub-tables of one record for ``runs export`` (name -> rows, each row a flat
        dict of JSON scalars); none by default."""
        return {}

    @classmethod
    def export_columns(cls, record: Record, info: Mapping[str, Any]) -> dict[str, Any]:
        """Per-sample columns of ``runs export``'s ``samples`` table beyond the summary (JSON
        scalars): what the run's micro and macro figures are recomputed from (numerators,
        denominators, why a metric is unmeasured), generation metadata. A ``score_<name>`` key
        replaces the summary's score of that name (its value as the metrics count it, which
        may depend on the run's mode in ``info``). None by default."""
        return {}

    @classmethod
    def export_schema(cls) -> dict[str, dict[str, str]]:
        """The column types of the export's tables: table name (``samples`` for
        :meth:`export_columns`) -> column -> ``bool``, ``int``, ``float``, ``string`` or
        ``list`` (of strings). A declared table is written, with these columns, even when no
        record gives it a row. None by default (columns are then inferred from the rows)."""
        return {}


_NOT_FIGURES = frozenset(
    {
        "config",
        "setup",
        "details",
        "unmeasured",
        "notes",
        "how",
        "seconds",
        "samples_file",
        "tokens",
    }
)

_TOKEN_COLUMNS = (
    ("calls", "calls"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("cached_calls", "cached calls"),
    ("cached_prompt_tokens", "cached prompt tokens"),
    ("cached_completion_tokens", "cached completion tokens"),
)


def token_table(metrics: Mapping[str, Any]) -> TableBlock | None:
    """The ``tokens`` of a ``metrics.json`` as a table (one row per model role, with how they
    were counted as its note), or ``None`` when the run called no chat model."""
    tokens = metrics.get("tokens")
    if not isinstance(tokens, Mapping):
        return None
    rows = [
        [Segment(text=str(role))]
        + [Segment(text=field_text(row.get(key, 0))) for key, _ in _TOKEN_COLUMNS]
        for role, row in tokens.items()
        if isinstance(row, Mapping)
    ]
    if not rows:
        return None
    counted = tokens.get("counted")
    return TableBlock(
        title="Tokens",
        columns=["role", *(label for _, label in _TOKEN_COLUMNS)],
        rows=rows,
        note=str(counted) if isinstance(counted, str) else None,
    )


def _metric_row(name: str, value: Any, reasons: Any) -> MetricRow | None:
    unmeasured = _reason_counts(reasons)
    if _is_number(value):
        return MetricRow(name=name, value=float(value), unmeasured=unmeasured)
    if not isinstance(value, Mapping):
        return None
    micro, macro = value.get("micro"), value.get("macro")
    if _is_number(micro) or _is_number(macro) or ("micro" in value and "macro" in value):
        return MetricRow(
            name=name,
            value=_number(micro),
            micro=_number(micro),
            macro=_number(macro),
            unmeasured=unmeasured,
        )
    for key in ("mean", "value", "f1"):
        if key in value and (value[key] is None or _is_number(value[key])):
            n = value.get("n_measured", value.get("n"))
            return MetricRow(
                name=name,
                value=_number(value[key]),
                n_measured=n if isinstance(n, int) else None,
                unmeasured=unmeasured | _reason_counts(value.get("unmeasured")),
                model=value.get("model") if isinstance(value.get("model"), str) else None,
            )
    return None


def _reason_counts(reasons: Any) -> dict[str, int]:
    if isinstance(reasons, Mapping):
        return {str(k): int(v) for k, v in reasons.items() if isinstance(v, int)}
    return {}


def _number(value: Any) -> float | None:
    return float(value) if _is_number(value) else None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def field_text(value: Any) -> str:
    """A field's value as text: ``—`` for none or empty, lists joined by commas, floats to four
    significant digits."""
    if value is None or value == "" or value == [] or value == ():
        return "—"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
