"""CONNER validity (Eqs. 7-8): is the downstream answer, produced with the knowledge, factual?

**Span answers** (NQ, Eq. 7). A short answer is not a sentence, so it is joined to the question::

    S_val(q, a*, a) = NLI_fact((q, a), (q, a*))

The paper's text says "(q, a*) as the premise and (q, a) as the hypothesis", and Eq. 1 writes
``NLI(s_i, e_ij)`` with the hypothesis first, so Eq. 7's argument order means the same thing:
**premise = q + a\\* (the gold answer), hypothesis = q + a (the generated answer)**, which is
also what CONNER's ``nq_validity.py`` does. The value is P(entailment).
:class:`SpanValidityConfig` sets the join: by default ``q + " " + a``; the reference code uses
``q + "?" (when missing) + "\\t" + a`` (:meth:`SpanValidityConfig.reference`).

**Open-ended answers** (WoW, Eq. 8): ``S_val(a, E) = max_i NLI_fact(a, e_i)``: the answer is the
hypothesis, each evidence passage a premise, and the pair with the highest P(entailment) gives
the vector. CONNER's ``wow_validity.py`` uses the gold response plus the top-5 retrieved
passages as evidence, cut to the first 32 pairs (:meth:`OpenValidityConfig.reference`).

The corpus-level validity the paper reports (a %) is the share of measured answers whose label
is entailment: ``validity_summary(values).factual_consistent``.

Empty answers (and empty gold answers, empty evidence) are unmeasured: ``None`` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner._types import MetricValue
from citegraph.conner.metrics._evidence import (
    EvidenceSource,
)
from citegraph.conner.metrics._factuality import (
    NLISummary,
    nli_metric_value,
    summarize_nli,
)
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.models import NLI3Model, NLIPair, NLIProbs
from citegraph.runs import blocking

__all__ = [
    "OpenValidityConfig",
    "SpanValidityConfig",
    "open_validity",
    "span_validity",
    "span_validity_batch",
    "validity_summary",
]


class SpanValidityConfig(BaseModel):
    """How a question and a span answer are joined into an NLI text (Eq. 7)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    separator: str = Field(default=" ", description="Between the question and the answer.")
    question_mark: bool = Field(
        default=False, description="Append '?' to a question that does not end with one."
    )

    @classmethod
    def reference(cls) -> SpanValidityConfig:
        """CONNER's ``nq_validity.py``: ``question? + TAB + answer``."""
        return cls(separator="\t", question_mark=True)

    def join(self, query: str, answer: str) -> str:
        """The NLI text of a question and an answer."""
        query = query.strip()
        if self.question_mark and not query.endswith("?"):
            query += "?"
        return f"{query}{self.separator}{answer.strip()}"


class OpenValidityConfig(BaseModel):
    """Options of open-ended validity (Eq. 8)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_pairs: int | None = Field(
        default=None, ge=1, description="Keep the first N evidence passages."
    )

    @classmethod
    def reference(cls) -> OpenValidityConfig:
        """CONNER's ``wow_validity.py``: at most 32 pairs."""
        return cls(max_pairs=32)


def _check_count(nli: NLI3Model, probs: Sequence[NLIProbs], n: int) -> None:
    if len(probs) != n:
        raise ModelError(f"{nli.name}: {len(probs)} probability vectors for {n} pairs")


async def span_validity_batch_async(
    queries: Sequence[str],
    answers: Sequence[str],
    gold_answers: Sequence[str],
    nli: NLI3Model,
    config: SpanValidityConfig | None = None,
) -> list[MetricValue]:
    """Eq. 7 for many answers, in one NLI call.

    Args:
        queries: The questions.
        answers: The generated answers.
        gold_answers: The gold answers.
        nli: The three-way NLI model.
        config: How question and answer are joined; ``SpanValidityConfig()`` by default.

    Returns:
        One value per answer: P(entailment) of (premise = q + a*, hypothesis = q + a), with the
        three parts and the label in ``details``; ``None`` for an empty answer or gold answer.

    Raises:
        ConfigError: If the three sequences differ in length.
        ModelError: If the NLI model returns the wrong number of vectors.
    """
    config = config or SpanValidityConfig()
    if not len(queries) == len(answers) == len(gold_answers):
        raise ConfigError(
            f"{len(queries)} queries, {len(answers)} answers, {len(gold_answers)} gold answers"
        )
    results: list[MetricValue | None] = []
    pairs: list[NLIPair] = []
    for query, answer, gold in zip(queries, answers, gold_answers, strict=True):
        if not answer.strip() or not gold.strip():
            what = "generated answer" if not answer.strip() else "gold answer"
            results.append(MetricValue(value=None, reason=f"empty {what}", model=nli.name))
            continue
        results.append(None)
        pairs.append(
            NLIPair(premise=config.join(query, gold), hypothesis=config.join(query, answer))
        )
    probs = await nli.probabilities(pairs) if pairs else []
    _check_count(nli, probs, len(pairs))
    scored = iter(probs)
    return [r if r is not None else nli_metric_value(next(scored), nli.name) for r in results]


span_validity_batch = blocking(span_validity_batch_async)


async def span_validity_async(
    query: str,
    answer: str,
    gold_answer: str,
    nli: NLI3Model,
    config: SpanValidityConfig | None = None,
) -> MetricValue:
    """Eq. 7 for one answer (see :func:`span_validity_batch`)."""
    (value,) = await span_validity_batch_async([query], [answer], [gold_answer], nli, config)
    return value


span_validity = blocking(span_validity_async)


async def open_validity_async(
    answer: str,
    evidence: Sequence[str] | EvidenceSource,
    nli: NLI3Model,
    config: OpenValidityConfig | None = None,
) -> MetricValue:
    """Eq. 8: the best-supported (answer, evidence) pair's vector.

    Args:
        answer: The generated open-ended answer (the hypothesis, as a whole).
        evidence: The premises, or an :class:`EvidenceSource` asked for the answer as one
            sentence. CONNER: ``[gold response, *top-5 retrieved]``.
        nli: The three-way NLI model.
        config: ``OpenValidityConfig()`` by default; ``.reference()`` cuts to 32 pairs.

    Returns:
        P(entailment) of the pair with the highest P(entailment), with its three parts, label,
        ``evidence_index`` and ``n_pairs`` in ``details``; ``None`` for an empty answer or no
        evidence.

    Raises:
        DataError: If an evidence source answers for the wrong number of sentences.
        ModelError: If the NLI model returns the wrong number of vectors.
    """
    config = config or OpenValidityConfig()
    if not answer.strip():
        return MetricValue(value=None, reason="empty generated answer", model=nli.name)
    if isinstance(evidence, str):
        passages = [evidence]
    elif isinstance(evidence, EvidenceSource):
        pools = await evidence.evidence_for(answer, [answer.strip()])
        if len(pools) != 1:
            raise DataError(f"{evidence.name}: {len(pools)} evidence lists for 1 answer")
        passages = pools[0]
    else:
        passages = list(evidence)
    premises = [p.strip() for p in passages if p.strip()][: config.max_pairs]
    if not premises:
        return MetricValue(value=None, reason="no evidence for the answer", model=nli.name)
    pairs = [NLIPair(premise=p, hypothesis=answer.strip()) for p in premises]
    probs = await nli.probabilities(pairs)
    _check_count(nli, probs, len(pairs))
    best = max(range(len(probs)), key=lambda i: probs[i].entailment)
    return nli_metric_value(probs[best], nli.name, evidence_index=best, n_pairs=len(pairs))


open_validity = blocking(open_validity_async)


def validity_summary(values: Iterable[MetricValue]) -> NLISummary:
    """Corpus-level validity: ``.factual_consistent`` is the paper's validity (share of measured
    answers labelled entailment); mean probabilities and ``n_unmeasured`` come with it."""
    return summarize_nli(values)
