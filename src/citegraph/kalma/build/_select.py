"""Knowledge selection for rounds 2..R of evolutionary question generation (KaLMA Appendix A.3).

Each round injects one fact of the knowledge pool, the one maximising (paper Eq. 1)::

    score_r = alpha * log(2N / Count_r) + (1 - alpha) * softmax(1 / perp_r)

- **Specificity** ``log(2N / Count_r)`` (natural log), "derived from IDF": ``N`` is the number of
  dataset items (question / person pair; each has two people, hence ``2N`` people) and
  ``Count_r`` the number of person subgraphs in the dataset that have relation ``r`` at least
  once (:func:`relation_counts`). With two people per item ``Count_r <= 2N``, so the specificity
  is ``>= 0``: 0 for a relation every person has (``sex or gender``), large for rare ones. A
  relation absent from the counts is treated as ``Count_r = 1`` (the rarest possible), so an
  unseen relation is never a division by zero. Items with more than two people can push
  ``Count_r`` past ``2N`` and the specificity below 0; the order stays the IDF order.
- **Coherence** ``softmax(1 / perp_r)`` over the round's candidates: each fact becomes a sentence
  (:func:`~citegraph.kalma.build._templates.fact_sentence`), is appended to the paragraph, and
  the language model's perplexity of the extended paragraph is taken (``scope="paragraph"``,
  the paper's; ``scope="sentence"`` scores the sentence alone, a cheaper non-paper option). All
  candidates go to the perplexity function in one call, so the scorer can batch them. The
  softmax subtracts the largest ``1/perp`` first (numerically stable). With perplexities well
  above 1 the ``1/perp`` values are small and close, so the coherence term varies little and
  rarity dominates unless ``alpha`` is small: that is the paper's formula, kept as written.

``coherence="minmax"`` (not the paper's) rescales ``1/perp`` to [0, 1] within the round instead
(best candidate 1, worst 0; all equal -> 1), so that coherence can actually compete with rarity:
on 20 items built from BioKaLMA with SmolLM2, the softmax term varied by at most 0.0055 within a
round while rarity varied by 2.3 on average.

``alpha = 1`` is pure rarity, which is what the authors' released code effectively does (its
coherence term is commented out, ``coherence_score = 0``); ``alpha = 0`` is pure coherence.

A candidate whose perplexity could not be measured (``None``, NaN, or not positive) is left out
of the softmax, gets coherence 0, and is reported (``note``, :attr:`Selection.n_unmeasured`).
Ties in score go to the earlier candidate (stable sort on ``(-score, index)``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, ModelError
from citegraph.kalma.build._templates import fact_sentence
from citegraph.kg import Subgraph, Triple
from citegraph.runs import blocking

#: Perplexities of texts, one per text, None where unmeasurable (``CausalLMScorer.perplexities``).
PerplexityFn = Callable[[Sequence[str]], Awaitable[Sequence[float | None]]]
PerplexityScope = Literal["paragraph", "sentence"]
CoherenceNorm = Literal["softmax", "minmax"]

#: Relations never injected: the name (BioKaLMA keeps it as a fact) and the id.
DEFAULT_EXCLUDED = frozenset({"name", "qid"})
#: Values never injected: wiki page names, not facts about the person. The authors dropped values
#: containing "Category"; citegraph matches the namespace prefixes "Category:" and "Template:"
#: (``topic's main category`` and ``topic's main infobox`` values).
DEFAULT_EXCLUDED_VALUE_MARKERS = ("Category:", "Template:")


class RelationCounts(BaseModel):
    """Relation frequencies over a dataset, for the specificity term."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_items: int = Field(ge=0, description="N: dataset items (questions / person pairs).")
    counts: dict[str, int] = Field(
        description="Count_r: person subgraphs having relation r at least once."
    )


def relation_counts(pools: Sequence[Sequence[Subgraph]]) -> RelationCounts:
    """Count relations over a dataset of knowledge pools (one pool of subgraphs per item).

    ``N = len(pools)``; ``Count_r`` = number of subgraphs (people, counted once per item they
    appear in) with at least one ``r`` fact.

    Example:
        >>> from citegraph.kg import Entity
        >>> g = Subgraph(center=Entity(id="Q1", name="A"),
        ...              triples=(Triple(subject="Q1", relation="spouse", value="B"),))
        >>> relation_counts([[g, g]]).counts
        {'spouse': 2}
    """
    counts: Counter[str] = Counter()
    for pool in pools:
        for graph in pool:
            counts.update({t.relation for t in graph.triples})
    return RelationCounts(n_items=len(pools), counts=dict(sorted(counts.items())))


def specificity(relation: str, counts: RelationCounts) -> float:
    """``log(2N / Count_r)``; an unseen relation counts as 1.

    Raises:
        ConfigError: the counts come from an empty dataset (``N = 0``).
    """
    if counts.n_items <= 0:
        raise ConfigError("relation counts come from an empty dataset (N = 0)")
    return math.log(2 * counts.n_items / max(counts.counts.get(relation, 0), 1))


def candidate_facts(
    pool: Sequence[Subgraph],
    used: Collection[Triple],
    *,
    exclude_relations: Collection[str] = DEFAULT_EXCLUDED,
    exclude_value_markers: Sequence[str] = DEFAULT_EXCLUDED_VALUE_MARKERS,
) -> list[Triple]:
    """The pool's facts that may still be injected, de-duplicated, in pool order.

    Args:
        pool: The knowledge pool (the two people's subgraphs).
        used: Facts already in the paragraph (round-1 labels and injected facts).
        exclude_relations: Relations never offered (default ``name`` and ``qid``).
        exclude_value_markers: Facts whose value contains one of these are never offered.
    """
    used_set = set(used)
    seen: set[Triple] = set()
    out: list[Triple] = []
    for graph in pool:
        for triple in graph.triples:
            if (
                triple in used_set
                or triple in seen
                or triple.relation in exclude_relations
                or any(marker in triple.value for marker in exclude_value_markers)
            ):
                continue
            seen.add(triple)
            out.append(triple)
    return out


class ScoredCandidate(BaseModel):
    """One candidate fact with every term of its score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(description="Position in the candidate list.")
    triple: Triple = Field(description="The fact.")
    sentence: str = Field(description="The fact as a template sentence.")
    count: int = Field(description="Count_r of its relation (0 if unseen).")
    specificity: float = Field(description="log(2N / Count_r).")
    perplexity: float | None = Field(
        description="Perplexity of the scored text; None if unmeasured."
    )
    inv_perplexity: float | None = Field(description="1 / perplexity; None if unmeasured.")
    coherence: float = Field(description="Softmax of 1/perp over the candidates; 0 if unmeasured.")
    score: float = Field(description="alpha * specificity + (1 - alpha) * coherence.")
    rank: int = Field(description="1 = chosen; ties go to the earlier candidate.")
    note: str | None = Field(default=None, description="Why the perplexity is missing.")


class Selection(BaseModel):
    """The chosen fact and every scored candidate, best first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chosen: Triple = Field(description="The fact with the highest score.")
    candidates: tuple[ScoredCandidate, ...] = Field(description="All candidates, by rank.")
    alpha: float = Field(description="Weight of specificity (1 - alpha: coherence).")
    scope: PerplexityScope = Field(description="What the perplexity was taken of.")
    coherence: CoherenceNorm = Field(default="softmax", description="How 1/perp was normalised.")
    n_unmeasured: int = Field(description="Candidates without a usable perplexity.")


async def select_fact_async(
    paragraph: str,
    candidates: Sequence[Triple],
    counts: RelationCounts,
    perplexity: PerplexityFn,
    *,
    alpha: float = 0.5,
    names: Mapping[str, str],
    scope: PerplexityScope = "paragraph",
    coherence: CoherenceNorm = "softmax",
) -> Selection:
    """Score every candidate fact and pick the best (see the module docstring).

    Args:
        paragraph: The current paragraph, without citation brackets.
        candidates: Facts that may be injected (:func:`candidate_facts`).
        counts: Relation counts over the dataset (:func:`relation_counts`).
        perplexity: Perplexities of texts; called once with every candidate's text.
        alpha: Weight of specificity, in [0, 1]; 1 is pure rarity (the authors' code), 0 pure
            coherence.
        names: Subject id -> name, for the template sentences.
        scope: ``"paragraph"`` (paragraph + sentence, the paper's) or ``"sentence"``.
        coherence: ``"softmax"`` of ``1/perp`` (the paper's) or ``"minmax"`` (rescaled to
            [0, 1] within the round; not the paper's).

    Raises:
        ConfigError: no candidates, ``alpha`` outside [0, 1], an unknown scope, or ``N = 0``.
        ModelError: the perplexity function returned a different number of values.
    """
    if not 0.0 <= alpha <= 1.0:  # also rejects NaN
        raise ConfigError(f"alpha must be in [0, 1], got {alpha}")
    if scope not in ("paragraph", "sentence"):
        raise ConfigError(f"scope must be 'paragraph' or 'sentence', got {scope!r}")
    if coherence not in ("softmax", "minmax"):
        raise ConfigError(f"coherence must be 'softmax' or 'minmax', got {coherence!r}")
    if not candidates:
        raise ConfigError("no candidate facts to select from")
    sentences = [fact_sentence(t, names.get(t.subject, "")) for t in candidates]
    base = paragraph.strip()
    texts = [f"{base} {s}" if base and scope == "paragraph" else s for s in sentences]
    values = list(await perplexity(texts))
    if len(values) != len(texts):
        raise ModelError(
            f"the perplexity function returned {len(values)} values for {len(texts)} texts"
        )
    perps, notes = zip(*(_usable(v) for v in values), strict=True)
    inv = [None if p is None else 1.0 / p for p in perps]
    norm = _softmax(inv) if coherence == "softmax" else _minmax(inv)
    rows = []
    for i, triple in enumerate(candidates):
        spec = specificity(triple.relation, counts)
        rows.append(
            dict(index=i, triple=triple, sentence=sentences[i],
                 count=counts.counts.get(triple.relation, 0), specificity=spec,
                 perplexity=perps[i], inv_perplexity=inv[i], coherence=norm[i],
                 score=alpha * spec + (1.0 - alpha) * norm[i], note=notes[i])
        )  # fmt: skip
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["score"], i))
    scored = tuple(ScoredCandidate(**rows[i], rank=r) for r, i in enumerate(order, start=1))
    return Selection(
        chosen=scored[0].triple,
        candidates=scored,
        alpha=alpha,
        scope=scope,
        coherence=coherence,
        n_unmeasured=sum(p is None for p in perps),
    )


select_fact = blocking(select_fact_async)


def _usable(value: float | None) -> tuple[float | None, str | None]:
    if value is None:
        return None, "the scorer could not measure a perplexity"
    value = float(value)
    if math.isnan(value) or value <= 0.0:
        return None, f"perplexity {value} is not a positive number"
    return value, None


def _softmax(values: Sequence[float | None]) -> list[float]:
    """Softmax over the measured values (max subtracted first); unmeasured ones get 0."""
    measured = [v for v in values if v is not None]
    if not measured:
        return [0.0] * len(values)
    top = max(measured)
    exps = [None if v is None else math.exp(v - top) for v in values]
    total = sum(e for e in exps if e is not None)
    return [0.0 if e is None else e / total for e in exps]


def _minmax(values: Sequence[float | None]) -> list[float]:
    """Measured values rescaled to [0, 1] (all equal -> 1); unmeasured ones get 0."""
    measured = [v for v in values if v is not None]
    if not measured:
        return [0.0] * len(values)
    low, high = min(measured), max(measured)
    if high == low:
        return [0.0 if v is None else 1.0 for v in values]
    return [0.0 if v is None else (v - low) / (high - low) for v in values]
