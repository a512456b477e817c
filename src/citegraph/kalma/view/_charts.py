"""The KaLMA paper's figures recomputed from several runs (chart specifications, no plotting).

- Figure 4: [NA] precision, recall and F1 against the number of facts removed (§5.2);
- Table 5: citation correctness, precision, recall and F1 against the number removed (§5.2);
- Figure 5: citation correctness, precision, recall and F1 against retrieval accuracy (§5.3);
- Table 3: per model (and any other setting that varies except the seed), the mean over seeds
  of alignment, correctness, precision, recall and F1, with the seeds' sample std as error bars.

All values are micro averages from each run's ``metrics.json``, as percentages. Runs sharing a
setting are averaged; F1 is the F1 of the averaged precision and recall (Table 3's rule).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from citegraph.metrics import f1_score, summarise_runs
from citegraph.runs import Chart, RunData, Series

_CITATION = (("correctness", "correctness"), ("precision", "precision"), ("recall", "recall"))
_NA = (("[NA] precision", "na_precision"), ("[NA] recall", "na_recall"))
_BAR_METRICS = (
    ("alignment", "alignment"),
    ("correctness", "correctness"),
    ("precision", "precision"),
    ("recall", "recall"),
)
_GROUP_KEYS = (
    "model_name",
    "split",
    "temperature",
    "prompt",
    "remove_knowledge",
    "retrieval_accuracy",
    "mode",
)


def micro(run: RunData, name: str) -> float | None:
    """The micro average of metric ``name`` in the run's ``metrics.json`` (None if absent)."""
    value = run.metrics.get(name)
    if isinstance(value, dict) and isinstance(value.get("micro"), int | float):
        return float(value["micro"])
    return None


def remove_knowledge(run: RunData) -> float | None:
    """Facts removed per question (``kalma run --remove-knowledge``), None for other runs."""
    exp = run.metrics.get("experiment") or {}
    value = exp.get("remove_knowledge", (run.info.get("config") or {}).get("remove_knowledge"))
    return float(value) if isinstance(value, int | float) else None


def retrieval_accuracy(run: RunData) -> float | None:
    """The retrieval accuracy the run simulated (``--retrieval-accuracy``), None if unknown."""
    exp = run.metrics.get("experiment") or {}
    value = exp.get(
        "retrieval_accuracy_requested", (run.info.get("config") or {}).get("retrieval_accuracy")
    )
    return float(value) if isinstance(value, int | float) else None


def _mean(values: Sequence[float | None]) -> float | None:
    return summarise_runs(values).mean


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _mode(runs: Sequence[RunData]) -> str:
    modes = sorted({str((r.metrics.get("config") or {}).get("mode", "?")) for r in runs})
    return "/".join(modes) + " mode"


def _models(runs: Sequence[RunData]) -> dict[str, list[RunData]]:
    out: dict[str, list[RunData]] = {}
    for run in runs:
        model = (run.info.get("config") or {}).get("model_name") or "answers"
        out.setdefault(str(model), []).append(run)
    return out


def _sweep(
    runs: Sequence[RunData],
    setting: Callable[[RunData], float | None],
    metrics: Sequence[tuple[str, str]],
    f1_of: tuple[str, str] | None,
    f1_name: str,
    descending: bool = False,
) -> tuple[list[Series], int] | None:
    """Series of ``metrics`` (micro, %) against ``setting``; None when it takes < 2 values."""
    values = {id(r): setting(r) for r in runs}
    swept = [r for r in runs if values[id(r)] is not None]
    xs: list[float | str] = sorted(
        {v for v in values.values() if v is not None}, reverse=descending
    )
    if len(xs) < 2:
        return None
    by_model = _models(swept)
    series = []
    for model, own in by_model.items():
        suffix = f" · {model}" if len(by_model) > 1 else ""
        at = {x: [r for r in own if values[id(r)] == x] for x in xs}
        means = {
            name: [_mean([micro(r, name) for r in at[x]]) if at[x] else None for x in xs]
            for _, name in metrics
        }
        for label, name in metrics:
            series.append(Series(name=label + suffix, x=xs, y=[_pct(v) for v in means[name]]))
        if f1_of is not None:
            p, r = means[f1_of[0]], means[f1_of[1]]
            f1 = [_pct(f1_score(a, b)) for a, b in zip(p, r, strict=True)]
            series.append(Series(name=f1_name + suffix, x=xs, y=f1))
    return series, len(swept)


def removal_charts(runs: Sequence[RunData]) -> list[Chart]:
    """Figure 4 ([NA]) and Table 5 (citations) against the number of facts removed."""
    na = _sweep(runs, remove_knowledge, _NA, ("na_precision", "na_recall"), "[NA] F1")
    cit = _sweep(runs, remove_knowledge, _CITATION, ("precision", "recall"), "F1")
    if na is None or cit is None:
        return []
    note = (
        "micro averages (%) of {n} runs, {mode}; runs with the same number removed are averaged; "
        "F1 = F1 of the averaged precision and recall"
    )
    titles = (
        ("Figure 4: [NA] precision, recall and F1 vs knowledge removed", na),
        ("Table 5: citation quality vs knowledge removed", cit),
    )
    return [
        Chart(
            kind="line",
            title=title,
            x_label="number of knowledge removed",
            y_label="score (%)",
            series=series,
            note=note.format(n=n, mode=_mode(runs)),
        )
        for title, (series, n) in titles
    ]


def retrieval_chart(runs: Sequence[RunData]) -> list[Chart]:
    """Figure 5: citation quality against the simulated retrieval accuracy."""
    found = _sweep(
        runs, retrieval_accuracy, _CITATION, ("precision", "recall"), "F1", descending=True
    )
    if found is None:
        return []
    series, n = found
    return [
        Chart(
            kind="line",
            title="Figure 5: citation quality vs retrieval accuracy",
            x_label="retrieval accuracy (%)",
            y_label="score (%)",
            series=series,
            note=f"micro averages (%) of {n} runs, {_mode(runs)}; runs with the same accuracy "
            "are averaged; F1 = F1 of the averaged precision and recall",
        )
    ]


def _group_key(run: RunData) -> tuple[tuple[str, Any], ...]:
    config = run.info.get("config") or {}
    if "model_name" not in config:  # kalma score: the answers' model is unknown
        return (("run", run.path.name),)
    return tuple((key, config.get(key)) for key in _GROUP_KEYS)


def _labels(keys: Sequence[tuple[tuple[str, Any], ...]]) -> list[str]:
    """The model (or run directory), then each other setting that differs between groups."""

    def varies(name: str) -> bool:
        return len({dict(k).get(name) for k in keys}) > 1

    out = []
    for key in keys:
        head = dict(key).get("model_name") or dict(key).get("run")
        rest = [f"{n}={v}" for n, v in key if n not in ("model_name", "run") and varies(n)]
        out.append(" · ".join([str(head), *rest]))
    return out


def table3_chart(runs: Sequence[RunData]) -> list[Chart]:
    """Table 3 as bars: per group of runs that differ only in seed, mean (std) per metric."""
    if len(runs) < 2:
        return []
    groups: dict[tuple[tuple[str, Any], ...], list[RunData]] = {}
    for run in runs:
        groups.setdefault(_group_key(run), []).append(run)
    keys = list(groups)
    x: list[float | str] = [label for label, _ in _BAR_METRICS]
    x.append("F1")
    series = []
    for label, key in zip(_labels(keys), keys, strict=True):
        own = groups[key]
        summaries = {
            name: summarise_runs([micro(r, name) for r in own]) for _, name in _BAR_METRICS
        }
        f1 = f1_score(summaries["precision"].mean, summaries["recall"].mean)
        series.append(
            Series(
                name=f"{label} (n={len(own)})",
                x=x,
                y=[_pct(s.mean) for s in summaries.values()] + [_pct(f1)],
                err=[_pct(s.std) for s in summaries.values()] + [None],
            )
        )
    return [
        Chart(
            kind="bar",
            title="Table 3: citation quality and alignment per model",
            x_label="metric (micro)",
            y_label="score (%)",
            series=series,
            note=f"mean over the runs of each group (they differ only in seed), error bars: "
            f"sample std over seeds; F1 = F1 of the mean precision and recall (no std), as "
            f"Table 3; micro averages (%), {_mode(runs)}, {len(runs)} runs",
        )
    ]


def kalma_charts(runs: Sequence[RunData]) -> list[Chart]:
    """Every KaLMA figure the runs support (none when they do not vary in its setting)."""
    return removal_charts(runs) + retrieval_chart(runs) + table3_chart(runs)
