"""What the viewer's pages list: one line per run, and a run's samples filtered and paged."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citegraph.runs import Completion, MetricRow, SampleSummary, input_settings

#: Config keys shown in a run's one-line summary, when the run has them.
SUMMARY_KEYS = (
    "mode",
    "dataset",
    "split",
    "task",
    "knowledge",
    "remove_knowledge",
    "retrieval_accuracy",
    "label_set",
    "prompt",
    "nli",
    "seed",
)
_MODEL_KEYS = ("model_name", "evaluator_name", "model", "lm", "evaluator")


@dataclass
class RunOverview:
    """A run as the run list shows it.

    ``finished`` says whether the metrics are final for what ``samples.jsonl`` holds
    (:func:`citegraph.runs.run_state`; *in progress* otherwise), ``completion`` how much of
    what its own limit and shard asked for the run holds: all of it, or less (``partial``).
    """

    ref: str
    path: Path
    task: str
    created: str
    model: str
    settings: dict[str, str]
    metrics: list[MetricRow]
    n_samples: int
    n_failed: int
    n_unmeasured: int
    finished: bool
    completion: Completion
    torn: bool
    problem: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_items(self) -> int | None:
        """The items the run asked for (those of its ``--limit``, else its share); ``None``
        when unknown, or when the run holds more (done under an earlier, larger limit)."""
        target = self.completion.target
        return None if target is None or self.n_samples > target else target

    @property
    def partial(self) -> bool:
        """Whether an item failed or fewer are done than the run asked for."""
        return bool(self.completion.partial)

    @property
    def progress(self) -> str:
        """``done/asked``: items finished of those the run asked for (its ``--limit``'s, else
        every item of its share), while a run is being written or when it was left partial."""
        return self.completion.counts

    @property
    def done_text(self) -> str:
        """``done/asked done``, with what the limit asked for when the run has one:
        ``2/20 done (limit 20 of 1085)``."""
        scope = self.completion.scope
        return f"{self.progress} done" + (f" ({scope})" if scope else "")

    @property
    def finished_text(self) -> str | None:
        """``finished (limit 20 of 1085)`` for a finished run that did every item its limit
        asked for, fewer than its share; else ``None``."""
        return self.completion.finished_text if self.finished else None


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``, or an empty dict when the file is missing or not JSON."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def model_of(config: Mapping[str, Any]) -> str:
    """The model a run's config names (answering model, evaluator, LM), or ``-``."""
    for key in _MODEL_KEYS:
        value = config.get(key)
        if isinstance(value, str) and value:
            return value
    models = config.get("models")
    if isinstance(models, Mapping):
        named = [f"{k}={v}" for k, v in models.items() if isinstance(v, str)]
        return ", ".join(named[:2]) or "-"
    return "-"


def settings_of(config: Mapping[str, Any], data: Any = None) -> dict[str, str]:
    """The run's headline settings (mode, split, removed knowledge...) as text, then the input
    files it read, by the first hex digits of their SHA-256 in ``run.json``'s ``data``
    (``answers (sha256)``: runs of one config on different answers files differ there)."""
    out = {}
    for key in SUMMARY_KEYS:
        value = config.get(key)
        if value is None or isinstance(value, dict | list) or value == "":
            continue
        out[key] = str(value)
    return out | input_settings(data)


@dataclass
class SampleFilter:
    """The sample list's filters (from the page's query string)."""

    q: str = ""
    tag: str = ""
    status: str = ""
    metric: str = ""
    low: float | None = None
    high: float | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> SampleFilter:
        """Filters from URL parameters ``q``, ``tag``, ``status``, ``metric``, ``min``, ``max``;
        a number that does not parse is ignored."""
        return cls(
            q=query.get("q", "").strip(),
            tag=query.get("tag", "").strip(),
            status=query.get("status", "").strip(),
            metric=query.get("metric", "").strip(),
            low=_float(query.get("min")),
            high=_float(query.get("max")),
        )

    def keep(self, row: SampleSummary) -> bool:
        """Whether ``row`` passes every filter set."""
        if self.q:
            needle = self.q.casefold()
            if needle not in row.id.casefold() and needle not in row.title.casefold():
                return False
        if self.tag and self.tag not in row.tags:
            return False
        if self.status and row.status != self.status:
            return False
        if self.metric and (self.low is not None or self.high is not None):
            value = row.scores.get(self.metric)
            if value is None:
                return False
            if self.low is not None and value < self.low:
                return False
            if self.high is not None and value > self.high:
                return False
        return True

    def params(self) -> dict[str, str]:
        """The filters set, as URL parameters."""
        out = {"q": self.q, "tag": self.tag, "status": self.status, "metric": self.metric}
        if self.low is not None:
            out["min"] = f"{self.low:g}"
        if self.high is not None:
            out["max"] = f"{self.high:g}"
        return {k: v for k, v in out.items() if v}


@dataclass(frozen=True)
class Facets:
    """What a run's sample list can be filtered on, with counts."""

    tags: list[tuple[str, int]]
    statuses: list[tuple[str, int]]
    metrics: list[str]

    def count(self, tag: str) -> int:
        """Samples carrying ``tag``."""
        return dict(self.tags).get(tag, 0)


def facets_of(rows: Sequence[SampleSummary]) -> Facets:
    """The tags and statuses of ``rows`` with their counts, and the score names."""
    return Facets(
        tags=sorted(Counter(t for r in rows for t in r.tags).items()),
        statuses=sorted(Counter(r.status for r in rows).items()),
        metrics=list(dict.fromkeys(m for r in rows for m in r.scores)),
    )


@dataclass
class SamplePage:
    """One page of a run's filtered sample list, with the facets to filter on."""

    rows: list[SampleSummary]
    n_matching: int
    n_total: int
    page: int
    n_pages: int
    tags: list[tuple[str, int]]
    statuses: list[tuple[str, int]]
    metrics: list[str]


def page_of(
    rows: Sequence[SampleSummary],
    chosen: SampleFilter,
    page: int,
    per_page: int = 50,
    facets: Facets | None = None,
) -> SamplePage:
    """The ``page``-th page (1-based) of the rows that pass ``chosen``; ``facets`` are the
    rows' (computed here when not given)."""
    matching = [r for r in rows if chosen.keep(r)] if chosen.params() else rows
    n_pages = max(1, -(-len(matching) // per_page))
    page = min(max(1, page), n_pages)
    facets = facets or facets_of(rows)
    return SamplePage(
        rows=list(matching[(page - 1) * per_page : page * per_page]),
        n_matching=len(matching),
        n_total=len(rows),
        page=page,
        n_pages=n_pages,
        tags=facets.tags,
        statuses=facets.statuses,
        metrics=facets.metrics,
    )


def _float(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return None
