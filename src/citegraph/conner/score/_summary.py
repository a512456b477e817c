"""``metrics.json`` of a ``conner score`` run, and its text table.

Per metric: the mean over measured items, how many were measured and unmeasured, the reasons
(counted), the models behind the values and how the value was computed. Factuality and validity
also get the paper's three-way label shares (Fact-cons. / Non-verif. / Fact-incon., Tables 2-3).
Paragraph coherence is stored raw per item; in paper mode its reported mean is min-max
normalised over the run's measured items (the paper's "normalized score"), so the mean of merged
shards is that of the whole run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citegraph.conner._types import MetricValue
from citegraph.conner.metrics import ConnerRules, summarize_nli
from citegraph.conner.score._config import ConnerScoreConfig
from citegraph.errors import DataError, DataNotFoundError
from citegraph.io import iter_jsonl
from citegraph.runs import FAILED, SAMPLES_FILE

__all__ = ["read_score_values", "render_score", "score_summary"]

_TOP_REASONS = 5


def _values(records: Sequence[dict[str, Any]], metric: str) -> list[MetricValue]:
    return [MetricValue(**r["metrics"][metric]) for r in records if metric in r["metrics"]]


def read_score_values(run: str | Path) -> dict[str, dict[str, MetricValue]]:
    """A score run's per-item values: metric -> item id -> value (failed items left out).

    Raises:
        DataNotFoundError: ``run`` is not a score run directory.
        DataError: A record is malformed (names the file and line).
    """
    path = Path(run) / SAMPLES_FILE
    if not path.is_file():
        raise DataNotFoundError("not a score run (no samples.jsonl from 'conner score')", path=run)
    latest = {obj.get("id"): (line, obj) for line, obj in iter_jsonl(path)}
    values: dict[str, dict[str, MetricValue]] = {}
    for sid, (line, obj) in latest.items():
        if obj.get("status") == FAILED:
            continue
        metrics = obj.get("metrics")
        if not isinstance(sid, str) or not isinstance(metrics, dict):
            raise DataError("a score record needs 'id' and 'metrics'", path=path, line=line)
        for metric, raw in metrics.items():
            try:
                values.setdefault(metric, {})[sid] = MetricValue(**raw)
            except (TypeError, ValueError) as exc:
                raise DataError(f"bad value: {exc}", path=path, line=line, field=metric) from exc
    return values


def _normalised_mean(measured: list[float]) -> tuple[float | None, str | None]:
    lo, hi = min(measured), max(measured)
    if hi <= lo:
        return None, "min-max normalisation needs two different scores"
    return sum((v - lo) / (hi - lo) for v in measured) / len(measured), None


def _metric_summary(metric: str, values: list[MetricValue], rules: ConnerRules) -> dict[str, Any]:
    measured = [v.value for v in values if v.value is not None]
    reasons = Counter(v.reason or "unmeasured" for v in values if v.value is None)
    summary: dict[str, Any] = {
        "mean": sum(measured) / len(measured) if measured else None,
        "n": len(measured),
        "n_unmeasured": len(values) - len(measured),
        "unmeasured_reasons": dict(reasons.most_common(_TOP_REASONS)),
        "models": sorted({v.model for v in values if v.value is not None}),
        "how": rules.how(metric),
    }
    if metric == "coherence_para" and rules.paragraph_minmax and measured:
        summary["mean_raw"] = summary["mean"]
        summary["mean"], why = _normalised_mean(measured)
        if why:
            summary["mean_reason"] = why
    if metric in ("factuality", "validity"):
        summary["labels"] = summarize_nli(values).model_dump(mode="json")
    return summary


def score_summary(records: Sequence[dict[str, Any]], config: ConnerScoreConfig) -> dict[str, Any]:
    """The run's ``metrics.json`` body from its records (failed records are left out, counted)."""
    done = [r for r in records if r.get("status") != FAILED]
    rules = config.rules()
    return {
        "task": config.task,
        "split": config.split if config.task == "wow" else None,
        "knowledge": config.knowledge,
        "mode": config.mode,
        "n_samples": len(records),
        "n_failed": len(records) - len(done),
        "failed_note": "answer-model calls that failed (left out of every score; re-run to retry)",
        "metrics": {m: _metric_summary(m, _values(done, m), rules) for m in config.metrics},
    }


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_score(metrics: dict[str, Any]) -> str:
    """A plain-text table of a score run's ``metrics.json``, with the stand-in notes."""
    rows = [f"{'metric':<16} {'mean':>8} {'n':>5} {'unmeas.':>7}  model / labels"]
    for name, m in metrics["metrics"].items():
        extra = ", ".join(m["models"]) or "-"
        labels = m.get("labels")
        if labels and labels["factual_consistent"] is not None:
            extra += (
                f"; cons/non-verif/incons {labels['factual_consistent']:.1%} / "
                f"{labels['non_verified']:.1%} / {labels['factual_inconsistent']:.1%}"
            )
        rows.append(f"{name:<16} {_cell(m['mean']):>8} {m['n']:>5} {m['n_unmeasured']:>7}  {extra}")
        for reason, count in m["unmeasured_reasons"].items():
            rows.append(f"{'':<16} {'':>8} {'':>5} {count:>7}  unmeasured: {reason}")
    notes = metrics.get("setup", {}).get("notes", {})
    rows += [f"note ({role}): {text}" for role, text in notes.items()]
    return "\n".join(rows)
