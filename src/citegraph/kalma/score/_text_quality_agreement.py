"""Text quality in ``metrics.json``, and the judge's agreement with human scores.

Human scores (``--text-quality-human FILE``) are JSONL, one answer per line:
``{"id": "specific-0", "coherence": 4, "consistency": 5, "fluency": 3, "relevance": 4}``, any
subset of the four criteria (a ``null`` is "not rated"), each score a number from 1 to 5 (an
average of several annotators may be fractional). Each answer's scores are kept in its record
(``text_quality_human``), so ``metrics.json`` is aggregated from the records alone.

Agreement (``text_quality_agreement``), per criterion, as CONNER's meta-evaluation reports it
(§6): over the answers with both a judge score and a human score, Spearman's rho, Kendall's
tau-b and Somers' ``D(judge | human)`` (the human score is the independent variable, as
CONNER's default direction: :mod:`citegraph.conner.correlate`), each with its two-sided p-value
and a percentile bootstrap interval (answers resampled; ``bootstrap`` resamples, 1000 when the
run's ``bootstrap`` is 0, seeded with the run's seed). Answers left out are counted by reason:
not judged (outside the judged sample, failed, or no answer), judged but unmeasured (the judge's
reason), or judged without a human score.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citegraph.errors import DataError, DataNotFoundError
from citegraph.io import iter_jsonl
from citegraph.kalma.score._text_quality import CRITERIA, TextQuality, aggregate_text_quality
from citegraph.metrics import (
    Agreement,
    BootstrapConfig,
    average_ranks,
    bootstrap_many,
    kendall_tau_b,
    pair_counts,
    somers_d,
    spearman,
)

#: The record field holding an answer's human scores.
HUMAN_FIELD = "text_quality_human"
#: The coefficients reported per criterion.
COEFFICIENTS = ("spearman", "kendall_tau_b", "somers_d")
#: Bootstrap resamples of the agreement intervals when the run's ``bootstrap`` is 0.
DEFAULT_RESAMPLES = 1000
NOT_JUDGED = "not judged (outside the judged sample, failed, or no answer)"
NO_HUMAN = "judged, no human score"
JUDGE_UNMEASURED = "judge score unmeasured"
DIRECTION = "D(judge | human): the human score is the independent variable"

HumanScores = dict[str, dict[str, float]]


def read_human_scores(path: str | Path) -> HumanScores:
    """``{answer id: {criterion: score}}`` from a JSONL file of human scores.

    Raises:
        DataNotFoundError: the file is missing.
        DataError: a line is not a JSON object, has no id, an unknown field, a score that is
            not a number from 1 to 5, no score at all, or repeats an id (names file, line, field).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError("no such human text-quality scores file", path=path)
    out: HumanScores = {}
    for line, row in iter_jsonl(path):
        answer_id = row.get("id")
        if isinstance(answer_id, int) and not isinstance(answer_id, bool):
            answer_id = str(answer_id)
        if not isinstance(answer_id, str) or not answer_id.strip():
            raise DataError("missing answer id", path=path, line=line, field="id")
        if answer_id in out:
            raise DataError(f"answer {answer_id!r} scored twice", path=path, line=line, field="id")
        scores: dict[str, float] = {}
        for field, value in row.items():
            if field == "id":
                continue
            if field not in CRITERIA:
                msg = f"unknown field {field!r}; expected id and any of {', '.join(CRITERIA)}"
                raise DataError(msg, path=path, line=line, field=field)
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 1 <= value <= 5
            ):
                msg = f"score {value!r} is not a number from 1 to 5"
                raise DataError(msg, path=path, line=line, field=field)
            scores[field] = float(value)
        if not scores:
            msg = f"no score: give any of {', '.join(CRITERIA)}"
            raise DataError(msg, path=path, line=line)
        out[answer_id] = scores
    return out


def check_human_ids(scores: Mapping[str, Any], ids: Sequence[str], path: str | Path) -> None:
    """Raise when the human scores name answers the run does not have (a file for other data).

    Raises:
        DataError: names the file and the first unknown ids.
    """
    known = set(ids)
    unknown = [i for i in scores if i not in known]
    if unknown:
        raise DataError(
            f"{len(unknown)} scored ids are not among the answers, e.g. {unknown[:3]}",
            path=path,
            field="id",
        )


def text_quality_block(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``metrics.json`` ``text_quality``: per criterion, the judge's mean and counts (None when
    no answer was judged)."""
    judged = [
        TextQuality.model_validate(r["text_quality"]) for r in records if r.get("text_quality")
    ]
    if not judged:
        return None
    summary = aggregate_text_quality(judged)
    return {name: s.model_dump(mode="json") for name, s in summary.items()}


def _pairs(
    records: Sequence[Mapping[str, Any]], criterion: str
) -> tuple[list[tuple[float, float]], Counter[str]]:
    """(human, judge) score pairs of one criterion, and why the other answers are left out."""
    pairs: list[tuple[float, float]] = []
    reasons: Counter[str] = Counter()
    for record in records:
        human = (record.get(HUMAN_FIELD) or {}).get(criterion)
        verdict = ((record.get("text_quality") or {}).get("scores") or {}).get(criterion)
        if verdict is None:
            if human is not None:
                reasons[NOT_JUDGED] += 1
        elif verdict.get("score") is None:
            if human is not None:
                reasons[f"{JUDGE_UNMEASURED}: {verdict.get('reason')}"] += 1
        elif human is None:
            reasons[NO_HUMAN] += 1
        else:
            pairs.append((float(human), float(verdict["score"])))
    return pairs, reasons


_Stat = Callable[[Sequence[tuple[float, float]]], float | None]


def _tau_b(pairs: Sequence[tuple[float, float]]) -> float | None:
    counts = pair_counts([h for h, _ in pairs], [j for _, j in pairs])
    n0 = counts.pairs
    if n0 == 0 or counts.tied_x == n0 or counts.tied_y == n0:
        return None
    return (counts.concordant - counts.discordant) / math.sqrt(
        (n0 - counts.tied_x) * (n0 - counts.tied_y)
    )


def _somers(pairs: Sequence[tuple[float, float]]) -> float | None:
    counts = pair_counts([h for h, _ in pairs], [j for _, j in pairs])
    untied = counts.pairs - counts.tied_x
    return (counts.concordant - counts.discordant) / untied if untied else None


def _rho(pairs: Sequence[tuple[float, float]]) -> float | None:
    x = average_ranks([h for h, _ in pairs])
    y = average_ranks([j for _, j in pairs])
    n = len(pairs)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else None


#: Fast resample statistics (the same definitions as the point estimates' functions).
_RESAMPLED: dict[str, _Stat] = {"spearman": _rho, "kendall_tau_b": _tau_b, "somers_d": _somers}
_POINT: dict[str, Callable[[Sequence[float], Sequence[float]], Agreement]] = {
    "spearman": spearman,
    "kendall_tau_b": kendall_tau_b,
    "somers_d": somers_d,
}


def text_quality_agreement(
    records: Sequence[Mapping[str, Any]], *, bootstrap: int = 0, seed: int = 0
) -> dict[str, Any] | None:
    """``metrics.json`` ``text_quality_agreement``: per criterion with a human score, the pairs
    counted, each coefficient (value, p-value, reason when undefined, bootstrap interval) and
    the answers left out by reason; None when no record carries a human score.

    Args:
        records: The run's records (``text_quality`` and ``text_quality_human`` are read).
        bootstrap: Resamples of the intervals (0: :data:`DEFAULT_RESAMPLES`).
        seed: Seed of the resampling.
    """
    humans = [r.get(HUMAN_FIELD) or {} for r in records]
    criteria = [c for c in CRITERIA if any(c in h for h in humans)]
    if not criteria:
        return None
    config = BootstrapConfig(n_resamples=bootstrap or DEFAULT_RESAMPLES, seed=seed)
    out: dict[str, Any] = {}
    for criterion in criteria:
        pairs, reasons = _pairs(records, criterion)
        human, judge = [h for h, _ in pairs], [j for _, j in pairs]
        intervals = bootstrap_many(pairs, _RESAMPLED, config, unit="answer")
        block: dict[str, Any] = {
            "n": len(pairs),
            "n_unmeasured": sum(reasons.values()),
            "unmeasured_reasons": dict(sorted(reasons.items())),
        }
        for name in COEFFICIENTS:
            point = _POINT[name](human, judge)
            interval = intervals[name]
            block[name] = {
                "value": point.value,
                "p_value": point.p_value,
                "reason": point.reason,
                "ci": None if interval is None else interval.model_dump(mode="json"),
            }
        block["somers_d"]["direction"] = DIRECTION
        out[criterion] = block
    return out
