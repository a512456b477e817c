"""``metrics.json`` of a ``kalma score`` run, aggregated from the records in ``samples.jsonl``.

Layout: ``correctness``, ``precision``, ``recall``, ``f1``, ``alignment``, ``na_precision``,
``na_recall``, each ``{"micro": x, "macro": y}`` (fractions in [0, 1], or ``null`` when
unmeasured); ``n_answers``, ``n_citations``; ``unmeasured``: per metric, how many answers could not
be measured and why (a failed item, such as a failed model call, is never scored as an empty
answer: it is left out of every metric and counted here with its reason, and in
``n_failed``, present when an item failed); ``warnings``: per kind of input hazard
(``question_mismatch``,
``gold_subject_label``, ``gold_unmatched``: see :mod:`._inputs`), ``{"n", "ids" (the first few),
"reason"}``; ``details``: per metric the full average (counts, policy, mode, confidence
intervals); ``citation_validity``: malformed brackets, cited ids not in the KG, citations
outside the retrieved graphs, citations per sentence, with their denominators
(:mod:`._validity_report`); ``na_edge_case``: how many [NA] sentences the paper's §4.5 edge
case counted correct and what decided it; ``na_gold_set``: in reference mode, which gold set
the absent facts came from, per answer; ``config``: modes, parser, NLI model, versions.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from citegraph import __version__
from citegraph.kalma._reasons import answer_unmeasured, failed_reason
from citegraph.kalma.parse import PAPER_PARSER, REFERENCE_PARSER
from citegraph.kalma.score._alignment import AnswerAlignment, aggregate_alignment
from citegraph.kalma.score._citations import AnswerCitationScores, aggregate_citation_scores
from citegraph.kalma.score._config import KalmaScoreConfig
from citegraph.kalma.score._na import AnswerNAScores, NAReport, aggregate_na_scores
from citegraph.kalma.score._validity_report import ValidityTotals
from citegraph.metrics import BootstrapConfig, MicroMacro
from citegraph.runs import FAILED

PARSERS = {"paper": PAPER_PARSER, "reference": REFERENCE_PARSER}
T = TypeVar("T")
METRICS = ("correctness", "precision", "recall", "f1", "alignment", "na_precision", "na_recall")


def build_metrics(
    records: Iterable[dict[str, Any]],
    config: KalmaScoreConfig,
    nli_name: str,
    *,
    gold_given: bool,
    warnings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Aggregate per-answer records (in answer-file order) into the ``metrics.json`` dict.

    ``warnings`` are the input checks' (``run.json`` ``notes``), passed through (``kalma score``
    passes them, none or some; ``kalma run`` has none, and its metrics no ``warnings`` key).

    The records are read once (:class:`_Scores`): of each answer, only what the averages need is
    kept, so a run's metrics stream its ``samples.jsonl`` instead of holding it.
    """
    bootstrap = (
        BootstrapConfig(n_resamples=config.bootstrap, seed=config.seed)
        if config.bootstrap
        else None
    )
    failures: Counter[str] = Counter()
    validity = ValidityTotals()

    def scorable() -> Iterable[dict[str, Any]]:
        for record in records:
            if record.get("status") == FAILED:
                failures[failed_reason(record)] += 1
            else:
                validity.add(record)
                yield record

    scores = _Scores.of(scorable())
    citations = aggregate_citation_scores(scores.citations, bootstrap=bootstrap, mode=config.mode)
    alignment = aggregate_alignment(scores.alignments, mode=config.mode, bootstrap=bootstrap)
    kept = scores.sources if alignment.cap is None else scores.sources[: alignment.cap]
    alignment = alignment.model_copy(update={"sources": dict(sorted(sum(kept, Counter()).items()))})
    na = aggregate_na_scores(scores.na, bootstrap=bootstrap, mode=config.mode)

    details: dict[str, MicroMacro] = {
        "correctness": citations.correctness,
        "precision": citations.precision,
        "recall": citations.recall,
        "f1": citations.f1,
        "alignment": alignment.alignment,
        "na_precision": na.precision,
        "na_recall": na.recall,
    }
    unmeasured = _unmeasured_counts(scores.outlines, alignment.cap)
    for reason, n in failures.items():
        validity.skip(reason, n)
        for name in METRICS:
            unmeasured.setdefault(name, {})[reason] = n
    out: dict[str, Any] = {
        name: {"micro": details[name].micro, "macro": details[name].macro} for name in METRICS
    }
    out |= {
        "n_answers": len(scores.citations),
        "n_citations": sum(s.n_citations for s in scores.citations),
        "n_na_markers": scores.n_na_markers,
        "n_parse_issues": scores.n_parse_issues,
        "citation_validity": validity.block(),
        "na_edge_case": _edge_case(na, config),
        "na_gold_set": dict(na.gold_sets),
        "unmeasured": unmeasured,
        "details": {name: details[name].model_dump(mode="json") for name in METRICS},
        "config": config.model_dump(mode="json")
        | {
            "parser_version": PARSERS[config.effective_parser],
            "nli_name": nli_name,
            "alignment_cap": alignment.cap,
            "alignment_sources": alignment.sources,
            "gold_given": gold_given,
            "citegraph_version": __version__,
        },
    }
    if failures:
        out["n_failed"] = sum(failures.values())
    if warnings is not None:
        out["warnings"] = dict(warnings)
    return out


@dataclass
class _Scores:
    """What the averages need of each answer, from one pass over the records: the per-answer
    scores without their per-citation detail (verdicts, missed gold facts, NLI pairs, absent
    facts), each answer's alignment pair sources, the fields :func:`_unmeasured_counts` reads
    (``outlines``), and the marker and parse-issue counts.

    Answers whose summaries are equal share one object (they are frozen): a summary is a few
    small counts and ratios, so a run of 10,000 answers holds a list of references and the
    distinct summaries, not 10,000 of each, and a summary seen before is not validated again.
    """

    citations: list[AnswerCitationScores] = field(default_factory=list)
    alignments: list[AnswerAlignment | None] = field(default_factory=list)
    sources: list[Counter[str]] = field(default_factory=list)
    na: list[AnswerNAScores] = field(default_factory=list)
    outlines: list[dict[str, Any]] = field(default_factory=list)
    n_na_markers: int = 0
    n_parse_issues: int = 0
    _shared: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Iterable[dict[str, Any]]) -> _Scores:
        scores = cls()
        for r in records:
            scores.add(r)
        return scores

    def add(self, r: dict[str, Any]) -> None:
        cited, aligned, na = r["citations"], r["alignment"], r["na"]
        self.citations.append(
            self._one(
                "c",
                _without(cited, "verdicts", "gold_missed"),
                AnswerCitationScores.model_validate,
            )
        )
        if aligned:
            self.alignments.append(
                self._one("a", _without(aligned, "pairs"), AnswerAlignment.model_validate)
            )
            sources = Counter(p["source"] for p in aligned["pairs"])
            self.sources.append(self._one("s", sources, Counter))
        else:
            self.alignments.append(None)
            self.sources.append(self._one("s", {}, Counter))
        if na:
            self.na.append(
                self._one("n", _without(na, "absent", "pairs"), AnswerNAScores.model_validate)
            )
        outline = {
            "unmeasured": r["unmeasured"],
            "citations": {k: cited[k] for k in ("n_citations", "n_gold")},
            "alignment": {"total": aligned["total"]} if aligned else aligned,
            "na": {k: na[k] for k in ("precision_den", "recall_den")} if na else na,
        }
        self.outlines.append(self._one("o", outline, dict))
        self.n_na_markers += sum(
            1 for s in r["parsed"]["sentences"] for c in s["citations"] if c["kind"] == "na"
        )
        self.n_parse_issues += r["parse_issues"]

    def _one(self, kind: str, raw: dict[str, Any], build: Callable[[dict[str, Any]], T]) -> T:
        """``build(raw)``, or the object built before from an equal ``raw`` of this ``kind``."""
        key = kind + json.dumps(raw, sort_keys=True)
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = build(raw)
        return found  # type: ignore[no-any-return]


def _without(raw: dict[str, Any], *fields: str) -> dict[str, Any]:
    """``raw`` with the per-item detail ``fields`` emptied."""
    return raw | dict.fromkeys(fields, ())


EDGE_RULE = (
    "paper §4.5: an NA-marked sentence that does not answer the question at all is counted "
    "correct in [NA] precision"
)


def _edge_case(na: NAReport, config: KalmaScoreConfig) -> dict[str, Any]:
    """How the §4.5 edge case entered [NA] precision."""
    applied = config.rules.na_not_answering_is_correct
    return {
        "applied": applied and bool(na.edge_checks),
        "rule": EDGE_RULE
        if applied
        else "not applied (reference mode: eval_NA.py has no such rule)",
        "n_sentences": na.n_edge_case,
        "decided_by": list(na.edge_checks),
    }


def _unmeasured_counts(
    records: Sequence[dict[str, Any]], cap: int | None
) -> dict[str, dict[str, int]]:
    """Per metric, how many answers have no value for it, by reason."""
    counts: dict[str, Counter[str]] = {name: Counter() for name in METRICS}
    for index, record in enumerate(records):
        reasons = dict(record["unmeasured"])
        if cap is not None and index >= cap:
            reasons["alignment"] = f"beyond the first {cap} answers (reference-mode cap)"
        if "precision" in reasons or "recall" in reasons:
            counts["f1"][reasons.get("precision") or reasons["recall"]] += 1
        for metric, reason in answer_unmeasured(record | {"unmeasured": reasons}).items():
            counts.setdefault(metric, Counter())[reason] += 1
    return {name: dict(c) for name, c in counts.items() if c}
