"""CONNER factuality (Eq. 1): verify each sentence of a knowledge text against evidence by NLI.

For a knowledge text ``k = s_1 ... s_m`` (split by :func:`punkt_sentences`) and evidence
``E_i = e_i1 ... e_il`` for each sentence (from an :class:`EvidenceSource`), every pair
(premise ``e_ij``, hypothesis ``s_i``) gets a three-way NLI vector (contradiction, neutral,
entailment). Then, as in the paper::

    S_fact(k, E) = outer_i  max_j NLI(s_i, e_ij)

- inner ``max``: a sentence's vector is that of its evidence with the highest P(entailment)
  (the first such evidence on ties);
- outer, "along the entailment dimension": ``min`` (the paper's example and citegraph's default:
  the vector of the sentence with the lowest P(entailment), so one unsupported sentence makes
  the knowledge unsupported), ``mean`` (the component-wise mean vector) or ``max`` (the vector of
  the best-supported sentence: the knowledge is factual if *any* sentence is).

The value is the aggregated factual-consistent probability (P(entailment)); ``details`` holds
the three parts (``factual_consistent``, ``non_verified``, ``factual_inconsistent``), the
argmax ``label`` (0 = inconsistent, 1 = non-verified, 2 = consistent, CONNER's coding), the
sentence label counts and ``sentences``: per sentence its text, its label's name
(:data:`SENTENCE_LABELS`), its P(entailment) and the evidence that decided it (its index in the
sentence's evidence and its text, cut to :data:`EVIDENCE_CHARS`), so a record shows which
sentence was found unsupported and why. All pairs of one knowledge go to the NLI model in one
call.

**Reference-code mode** (:meth:`FactualityConfig.reference`, what CONNER's ``eval_exp.py`` ran):
evidence = the gold passage's sentences + the whole gold passage + the first 10 retrieved
passages (:func:`reference_evidence`), each sentence's pairs cut to the first 32, outer ``max``
chosen by the sentences' argmax *labels* (the first sentence with the highest label; its vector)
rather than by P(entailment). Where CONNER crashes (empty knowledge: ``max([])``; a sentence with
no evidence), citegraph returns ``None`` with the reason.

:func:`factuality_summary` gives what the paper's tables report: the share of measured
knowledge texts per label (Fact-cons. / Non-verif. / Fact-incon.), mean probabilities and the
number unmeasured.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner._types import DetailScalar, DetailValue, MetricValue
from citegraph.conner.metrics._evidence import EvidenceSource
from citegraph.conner.metrics._sentences import punkt_sentences
from citegraph.errors import DataError, ModelError
from citegraph.models import NLI3Model, NLIPair, NLIProbs
from citegraph.runs import blocking

__all__ = [
    "EVIDENCE_CHARS",
    "FACTUALITY_PARTS",
    "SENTENCE_LABELS",
    "FactualityConfig",
    "NLISummary",
    "factuality",
    "factuality_summary",
    "nli_metric_value",
    "summarize_nli",
]

#: The paper's names of the three NLI classes, in CONNER's order (label 0, 1, 2).
FACTUALITY_PARTS: tuple[str, str, str] = (
    "factual_inconsistent",
    "non_verified",
    "factual_consistent",
)
#: The names of a sentence's NLI label in factuality's ``details["sentences"]`` (label 0, 1, 2).
SENTENCE_LABELS: tuple[str, str, str] = ("inconsistent", "non-verified", "consistent")
#: The longest evidence text kept per sentence in ``details["sentences"]`` (cut with ``…``).
EVIDENCE_CHARS = 300
_COUNT_KEYS = ("n_inconsistent_sentences", "n_non_verified_sentences", "n_consistent_sentences")


class FactualityConfig(BaseModel):
    """How the factuality score aggregates NLI vectors (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    inner: Literal["max"] = Field(
        default="max", description="Per sentence: the evidence with the highest P(entailment)."
    )
    outer: Literal["min", "mean", "max"] = Field(
        default="min", description="Across sentences: min (paper's example), mean or max."
    )
    outer_by: Literal["entailment", "label"] = Field(
        default="entailment",
        description="min / max by P(entailment) (paper) or by argmax label (reference code).",
    )
    max_pairs: int | None = Field(
        default=None, ge=1, description="Keep each sentence's first N evidence passages."
    )

    @classmethod
    def reference(cls) -> FactualityConfig:
        """CONNER's scripts: outer max by label, at most 32 pairs per sentence."""
        return cls(outer="max", outer_by="label", max_pairs=32)


def nli_metric_value(probs: NLIProbs, model: str, **details: DetailValue) -> MetricValue:
    """A :class:`MetricValue` of P(entailment), with the three parts and the label in details."""
    parts = dict(zip(FACTUALITY_PARTS, probs.vector, strict=True))
    return MetricValue(
        value=probs.entailment, model=model, details={**parts, "label": probs.label, **details}
    )


def _aggregate(best: list[NLIProbs], config: FactualityConfig) -> tuple[NLIProbs, int | None]:
    if config.outer == "mean":
        means = [sum(p.vector[c] for p in best) / len(best) for c in range(3)]
        return NLIProbs(contradiction=means[0], neutral=means[1], entailment=means[2]), None
    pick = min if config.outer == "min" else max
    if config.outer_by == "entailment":
        chosen = pick(range(len(best)), key=lambda i: best[i].entailment)
    else:
        chosen = pick(range(len(best)), key=lambda i: best[i].label)
    return best[chosen], chosen


def _shorten(text: str, limit: int = EVIDENCE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _verdicts(
    sentences: Sequence[str], pools: Sequence[Sequence[str]], probs: Sequence[NLIProbs]
) -> tuple[list[NLIProbs], list[dict[str, DetailScalar]]]:
    """Each sentence's best vector (the first with the highest P(entailment)) and its row."""
    best: list[NLIProbs] = []
    rows: list[dict[str, DetailScalar]] = []
    start = 0
    for i, (sentence, pool) in enumerate(zip(sentences, pools, strict=True)):
        j = max(range(len(pool)), key=lambda k: probs[start + k].entailment)
        p = probs[start + j]
        best.append(p)
        rows.append(
            {
                "index": i,
                "text": sentence,
                "label": SENTENCE_LABELS[p.label],
                "entailment": p.entailment,
                "evidence_index": j,
                "evidence": _shorten(pool[j]),
            }
        )
        start += len(pool)
    return best, rows


async def factuality_async(
    knowledge: str,
    evidence: EvidenceSource,
    nli: NLI3Model,
    config: FactualityConfig | None = None,
) -> MetricValue:
    """The factuality of one knowledge text (Eq. 1).

    Args:
        knowledge: The knowledge text.
        evidence: Where each sentence's evidence comes from.
        nli: The three-way NLI model (premise = evidence, hypothesis = sentence).
        config: Aggregation options; ``FactualityConfig()`` (paper) by default,
            ``FactualityConfig.reference()`` for CONNER's scripts.

    Returns:
        P(factual-consistent) after aggregation, or ``None`` with the reason (empty knowledge,
        a sentence without evidence). ``details``: the three parts, ``label``, the chosen
        ``sentence`` (0-based; ``None`` for mean), ``n_sentences``, ``n_pairs``, the sentence
        label counts, ``evidence`` (the source's name), ``outer`` and ``sentences`` (per
        sentence: ``index``, ``text``, ``label`` (:data:`SENTENCE_LABELS`), ``entailment``,
        ``evidence_index`` and ``evidence``, the evidence that decided it).

    Raises:
        DataError: If the evidence source answers for the wrong number of sentences.
        ModelError: If the NLI model returns the wrong number of vectors.
    """
    config = config or FactualityConfig()
    sentences = punkt_sentences(knowledge)
    if not sentences:
        return MetricValue(
            value=None, reason="empty knowledge: no sentence to verify", model=nli.name
        )
    pools = await evidence.evidence_for(knowledge, sentences)
    if len(pools) != len(sentences):
        raise DataError(
            f"{evidence.name}: {len(pools)} evidence lists for {len(sentences)} sentences"
        )
    pools = [[p.strip() for p in pool if p.strip()][: config.max_pairs] for pool in pools]
    missing = [i for i, pool in enumerate(pools) if not pool]
    if missing:
        reason = (
            f"no evidence for {len(missing)} of {len(sentences)} sentences "
            f"(first: {sentences[missing[0]][:80]!r}) from {evidence.name}"
        )
        return MetricValue(value=None, reason=reason, model=nli.name)
    pairs = [
        NLIPair(premise=e, hypothesis=s)
        for s, pool in zip(sentences, pools, strict=True)
        for e in pool
    ]
    probs = await nli.probabilities(pairs)
    if len(probs) != len(pairs):
        raise ModelError(f"{nli.name}: {len(probs)} probability vectors for {len(pairs)} pairs")
    best, rows = _verdicts(sentences, pools, probs)
    aggregated, chosen = _aggregate(best, config)
    counts = {key: sum(p.label == c for p in best) for c, key in enumerate(_COUNT_KEYS)}
    return nli_metric_value(
        aggregated,
        nli.name,
        sentence=chosen,
        n_sentences=len(sentences),
        n_pairs=len(pairs),
        **counts,
        evidence=evidence.name,
        outer=config.outer if config.outer == "mean" else f"{config.outer}:{config.outer_by}",
        sentences=rows,
    )


factuality = blocking(factuality_async)


class NLISummary(BaseModel):
    """Corpus-level NLI results: label shares and mean probabilities over measured values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(description="Values given.")
    n_unmeasured: int = Field(description="Values that are None (excluded below).")
    n_labels: int = Field(description="Labels counted (measured values, or their sentences).")
    factual_consistent: float | None = Field(description="Share of label 2 (entailment).")
    non_verified: float | None = Field(description="Share of label 1 (neutral).")
    factual_inconsistent: float | None = Field(description="Share of label 0 (contradiction).")
    mean_factual_consistent: float | None = Field(description="Mean P(entailment).")
    mean_non_verified: float | None = Field(description="Mean P(neutral).")
    mean_factual_inconsistent: float | None = Field(description="Mean P(contradiction).")
    models: tuple[str, ...] = Field(description="The models behind the measured values.")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _number(value: DetailValue) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def summarize_nli(
    values: Iterable[MetricValue], *, labels: Literal["value", "sentence"] = "value"
) -> NLISummary:
    """Label shares and mean probabilities of NLI-based values (factuality or validity).

    Args:
        values: Values from :func:`factuality`, :func:`span_validity` or :func:`open_validity`.
        labels: Count one label per value (default), or pool the sentence labels of factuality
            values (CONNER's code does this for outer ``mean``).
    """
    values = list(values)
    measured = [v for v in values if v.value is not None]
    counts = [0, 0, 0]
    for v in measured:
        if labels == "sentence":
            for c, key in enumerate(_COUNT_KEYS):
                counts[c] += int(_number(v.details.get(key)))
        else:
            counts[int(_number(v.details.get("label")))] += 1
    total = sum(counts)
    shares = [c / total if total else None for c in counts]
    means = [_mean([_number(v.details.get(part)) for v in measured]) for part in FACTUALITY_PARTS]
    return NLISummary(
        n=len(values),
        n_unmeasured=len(values) - len(measured),
        n_labels=total,
        factual_inconsistent=shares[0],
        non_verified=shares[1],
        factual_consistent=shares[2],
        mean_factual_inconsistent=means[0],
        mean_non_verified=means[1],
        mean_factual_consistent=means[2],
        models=tuple(sorted({v.model for v in measured})),
    )


def factuality_summary(
    values: Iterable[MetricValue], *, labels: Literal["value", "sentence"] = "value"
) -> NLISummary:
    """What the paper's tables report: Fact-cons. / Non-verif. / Fact-incon. shares (see
    :func:`summarize_nli`), over the measured knowledge texts."""
    return summarize_nli(values, labels=labels)
