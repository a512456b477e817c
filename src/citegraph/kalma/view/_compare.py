"""What ``runs compare`` shows of KaLMA runs (Tables 5 and 7, Figures 4 and 5 of the paper): the
citation and [NA] metrics (fractions, shown as %), the text-quality means (1-5, shown only when
some run was judged), and the settings that tell runs apart (split, model, removed facts,
retrieval accuracy) as ``metrics.json`` records them.

The CLI lays these out (table, markdown, CSV, JSON); :class:`~.KalmaPresenter` gives them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The citation and [NA] metrics of a comparison, in column order.
COMPARED = ("alignment", "correctness", "precision", "recall", "f1", "na_precision", "na_recall")
#: The text-quality criteria of a comparison (their means), shown when some run was judged.
QUALITY = ("coherence", "consistency", "fluency", "relevance")


@dataclass(frozen=True)
class CompareFigures:
    """The figures of several KaLMA runs side by side, one entry per run in each list."""

    #: metric -> each run's value as stored (None: unmeasured or absent)
    values: dict[str, list[Any]]
    #: metric -> each run's value as shown in a table ("-" when absent)
    cells: dict[str, list[str]]
    #: what the figures are ("micro metrics (%); text quality 1-5")
    title: str
    #: extra fields of each run's JSON row: the one-line ``setting``
    extra: list[dict[str, Any]]


def compare_settings(config: Mapping[str, Any], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """``run.json``'s ``config`` plus what :func:`run_setting` reads from ``metrics``, where the
    config lacks it (a ``kalma score`` run's config has no model, for one)."""
    out = dict(config)
    exp = metrics.get("experiment") or {}
    recorded = {
        "split": (metrics.get("config") or {}).get("split"),
        "model": (metrics.get("setup") or {}).get("model"),
        "remove_knowledge": exp.get("remove_knowledge"),
        "retrieval_accuracy": exp.get("retrieval_accuracy_requested"),
    }
    for key, value in recorded.items():
        if key not in out and not (key == "model" and "model_name" in out):
            out[key] = value
    return out


def compare_figures(metrics: Sequence[Mapping[str, Any]], kind: str) -> CompareFigures:
    """The ``kind`` (micro / macro) citation and [NA] metrics of each run's ``metrics.json``,
    and the text-quality means when some run was judged."""
    values: dict[str, list[Any]] = {
        name: [(m.get(name) or {}).get(kind) for m in metrics] for name in COMPARED
    }
    cells = {name: [_percent(v) for v in column] for name, column in values.items()}
    quality = [m.get("text_quality") or {} for m in metrics]
    for name in QUALITY:
        means = [(q.get(name) or {}).get("mean") for q in quality]
        if any(v is not None for v in means):
            values[name] = means
            cells[name] = [_mean(q.get(name)) for q in quality]
    judged = "; text quality 1-5" if any(n in values for n in QUALITY) else ""
    extra = [{"setting": run_setting(m)} for m in metrics]
    return CompareFigures(values, cells, f"{kind} metrics (%){judged}", extra)


def run_setting(metrics: Mapping[str, Any]) -> str:
    """What tells runs apart, on one line: split, model, removed facts, retrieval accuracy."""
    exp = metrics.get("experiment") or {}
    parts = [(metrics.get("config") or {}).get("split"), (metrics.get("setup") or {}).get("model")]
    if exp.get("remove_knowledge"):
        parts.append(f"-{exp['remove_knowledge']} facts")
    if exp.get("retrieval_accuracy_requested", 100) < 100:
        parts.append(f"ret {exp['retrieval_accuracy_requested']}%")
    return " ".join(p for p in parts if p)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _mean(summary: Mapping[str, Any] | None) -> str:
    if not summary or summary.get("mean") is None:
        return "-"
    return f"{summary['mean']:.2f}"
