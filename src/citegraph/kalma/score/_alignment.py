"""KaLMA text-citation alignment ("Align.", paper §4.3 and App. B.3).

Every (sentence, cited KG triple) pair of an answer is checked with an NLI model: premise = the
sentence without its brackets (:attr:`Sentence.plain`), hypothesis = the cited fact rendered as
text (``"relation: value"`` by default, as the authors' code; ``"natural"`` renders
``"<subject name> <relation> <value>"``; any callable ``Triple -> str`` works). ``[NA]`` markers
are not pairs. A sentence citing the same triple twice gives two pairs, as in the reference code.

``mode="paper"`` (default)
    A pair is aligned iff the NLI model says the sentence entails the fact.
``mode="reference"`` (the authors' ``eval_relevance.py``)
    A pair is aligned iff ``value.lower() in plain.lower()`` (a raw substring test, decided
    without the model; verdict ``source="substring"``) or else the NLI model entails it. The
    authors also score only the first :data:`REFERENCE_CAP` (400) answers of a run, skipping
    answers whose retrieved KG is empty and empty (NaN) generations; :func:`aggregate_alignment`
    applies that cap in reference mode when the skipped answers are passed as ``None`` in place.

Per answer the score is aligned pairs / pairs. Over answers (:func:`aggregate_alignment`):
micro = all aligned pairs / all pairs; macro = mean of per-answer scores over answers with at
least one pair. An answer without pairs is unmeasured (reason recorded), never 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError
from citegraph.kalma._rules import HypothesisStyle, KalmaRules, Mode, rules_of, style_name
from citegraph.kalma.parse import ParsedAnswer
from citegraph.kalma.score._nli import NLISetup, common_setup, entail, render_fact
from citegraph.kg import Triple
from citegraph.metrics import BootstrapConfig, MicroMacro, join_reasons, micro_macro_ci
from citegraph.models import NLIModel, NLIPair, NLIVerdict
from citegraph.runs import blocking

AlignmentMode = Mode

#: Verdict source of a pair settled by the reference-mode substring shortcut.
SUBSTRING_SOURCE = "substring"
NO_PAIRS = "no sentence-citation pairs (the answer cites no KG triple)"
SKIPPED = "answer not scored (passed as None: empty answer or empty retrieved KG)"


class AlignedPair(BaseModel):
    """The decision for one (sentence, cited triple) pair."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sentence_index: int = Field(description="Index of the sentence in the answer.")
    citation_index: int = Field(description="Index of the citation in the sentence's citations.")
    triple: Triple
    premise: str = Field(description="The sentence without brackets.")
    hypothesis: str = Field(description="The cited fact as text.")
    entailed: bool = Field(description="Whether the pair is aligned.")
    source: str = Field(description="What decided: 'substring', 'lexical' or the model's name.")
    score: float | None = Field(default=None, description="Entailment probability, if given.")


class AnswerAlignment(NLISetup):
    """Text-citation alignment of one answer, with every pair's decision."""

    pairs: tuple[AlignedPair, ...]
    aligned: int = Field(description="Pairs judged aligned.")
    total: int = Field(description="Pairs scored.")
    score: float | None = Field(description="aligned / total; None when the answer has no pair.")
    unmeasured_reason: str | None = Field(
        default=None, description="Why ``score`` is None, when it is."
    )

    def ratio(self) -> tuple[int, int]:
        """``(aligned, total)``; total 0 when the answer is unmeasured."""
        return (self.aligned, self.total)


class AlignmentReport(NLISetup):
    """Alignment aggregated over answers."""

    cap: int | None = Field(description="Only the first ``cap`` answers were kept (None: all).")
    n_given: int = Field(description="Answers passed in, before the cap (None entries included).")
    alignment: MicroMacro = Field(
        description="micro = aligned / pairs; macro = mean over answers with >= 1 pair. "
        "n_unmeasured counts None entries, n_excluded answers without pairs."
    )
    sources: dict[str, int] = Field(description="How many pairs each source decided.")


def _pairs_of(
    answer: ParsedAnswer, style: HypothesisStyle
) -> list[tuple[int, int, Triple, NLIPair]]:
    out = []
    for i, sentence in enumerate(answer.sentences):
        for j, citation in enumerate(sentence.citations):
            if citation.kind != "kg" or citation.triple is None:
                continue
            pair = NLIPair(premise=sentence.plain, hypothesis=render_fact(citation.triple, style))
            out.append((i, j, citation.triple, pair))
    return out


async def score_alignment_many_async(
    answers: Sequence[ParsedAnswer | None],
    nli: NLIModel,
    *,
    mode: AlignmentMode | KalmaRules = "paper",
    hypothesis: HypothesisStyle = "relation_value",
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> list[AnswerAlignment | None]:
    """Alignment of many answers, batching NLI calls across answers.

    Identical (premise, hypothesis) pairs are sent to the model once. ``None`` entries (answers
    that were not scored, e.g. empty generations) stay ``None`` in place, so the reference cap in
    :func:`aggregate_alignment` counts them as the authors' code does.

    Args:
        answers: Parsed answers in dataset order; ``None`` for a skipped answer.
        nli: The entailment model.
        mode: ``"paper"`` or ``"reference"`` (see the module docstring).
        hypothesis: How a cited fact becomes the hypothesis text.
        batch_size: Pairs per ``nli.entails`` call.
        progress: Called as ``progress(pairs_done, pairs_total)`` after each call.

    Returns:
        One :class:`AnswerAlignment` (or ``None``) per input, in order.

    Raises:
        ConfigError: On an unknown mode or hypothesis style, or ``batch_size < 1``.
        ModelError: If the model returns a different number of verdicts than pairs.
    """
    rules = rules_of(mode)
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    per_answer = [None if a is None else _pairs_of(a, hypothesis) for a in answers]
    shortcut = rules.alignment_substring_shortcut
    wanted: dict[NLIPair, None] = {}
    for found in per_answer:
        for _, _, triple, pair in found or ():
            if not (shortcut and triple.value.lower() in pair.premise.lower()):
                wanted[pair] = None
    unique = list(wanted)
    decided: dict[NLIPair, NLIVerdict] = {}
    for start in range(0, len(unique), batch_size):
        chunk = unique[start : start + batch_size]
        decided.update(zip(chunk, await entail(nli, chunk), strict=True))
        if progress is not None:
            progress(start + len(chunk), len(unique))
    style = style_name(hypothesis)
    return [
        None if found is None else _answer_result(found, decided, rules.mode, style, nli.name)
        for found in per_answer
    ]


score_alignment_many = blocking(score_alignment_many_async)


def _answer_result(
    found: list[tuple[int, int, Triple, NLIPair]],
    decided: dict[NLIPair, NLIVerdict],
    mode: AlignmentMode,
    style: str,
    nli_name: str,
) -> AnswerAlignment:
    pairs = []
    for i, j, triple, pair in found:
        verdict = decided.get(pair)
        if verdict is None:  # settled by the reference-mode substring shortcut
            verdict = NLIVerdict(entailed=True, score=None, source=SUBSTRING_SOURCE)
        pairs.append(
            AlignedPair(
                sentence_index=i,
                citation_index=j,
                triple=triple,
                premise=pair.premise,
                hypothesis=pair.hypothesis,
                entailed=verdict.entailed,
                source=verdict.source,
                score=verdict.score,
            )
        )
    aligned = sum(p.entailed for p in pairs)
    return AnswerAlignment(
        mode=mode,
        hypothesis_style=style,
        nli=nli_name,
        pairs=tuple(pairs),
        aligned=aligned,
        total=len(pairs),
        score=aligned / len(pairs) if pairs else None,
        unmeasured_reason=None if pairs else NO_PAIRS,
    )


async def score_alignment_async(
    answer: ParsedAnswer,
    nli: NLIModel,
    *,
    mode: AlignmentMode | KalmaRules = "paper",
    hypothesis: HypothesisStyle = "relation_value",
) -> AnswerAlignment:
    """Text-citation alignment of one answer; the model gets all its pairs in one call.

    Args:
        answer: The parsed answer.
        nli: The entailment model.
        mode: ``"paper"`` or ``"reference"`` (see the module docstring).
        hypothesis: ``"relation_value"`` (``"place of birth: Newark"``, default), ``"natural"``
            (``"Stephen Crane place of birth Newark"``) or a callable ``Triple -> str``.

    Returns:
        The answer's alignment with every pair's verdict.

    Raises:
        ConfigError: On an unknown mode or hypothesis style.
        ModelError: If the model returns a different number of verdicts than pairs.
    """
    (result,) = await score_alignment_many_async(
        [answer], nli, mode=mode, hypothesis=hypothesis, batch_size=1_000_000
    )
    assert result is not None
    return result


score_alignment = blocking(score_alignment_async)


def aggregate_alignment(
    results: Sequence[AnswerAlignment | None],
    *,
    cap: int | Literal["auto"] | None = "auto",
    mode: AlignmentMode | None = None,
    bootstrap: BootstrapConfig | None = None,
) -> AlignmentReport:
    """Micro and macro alignment over answers.

    Args:
        results: Per-answer results in dataset order; ``None`` for an answer that was not scored
            (it still takes a place under the cap, and counts in ``n_unmeasured``).
        cap: Keep only the first ``cap`` entries. ``"auto"``: :data:`REFERENCE_CAP` in reference
            mode, no cap in paper mode.
        mode: The expected mode; needed only when every entry is ``None`` (default ``"paper"``).
        bootstrap: When given, add percentile intervals resampling answers.

    Returns:
        The report; ``alignment.micro`` / ``alignment.macro`` are ``None`` when unmeasured.

    Raises:
        ConfigError: If the results mix modes, hypothesis styles or NLI models, or cap < 0.
    """
    scored = [r for r in results if r is not None]
    the_mode, style, nli = common_setup(scored, mode, "results")
    limit = KalmaRules.for_mode(the_mode).alignment_cap if cap == "auto" else cap
    if limit is not None and limit < 0:
        raise ConfigError(f"cap must be >= 0, got {limit}")
    kept = list(results[:limit]) if limit is not None else list(results)
    ratios = [None if r is None else r.ratio() for r in kept]
    reason = join_reasons(SKIPPED if r is None else r.unmeasured_reason for r in kept)
    summary = micro_macro_ci(ratios, bootstrap, mode=the_mode, reason=reason, unit="answer")
    sources = Counter(p.source for r in kept if r is not None for p in r.pairs)
    return AlignmentReport(
        mode=the_mode,
        hypothesis_style=style,
        nli=nli,
        cap=limit,
        n_given=len(results),
        alignment=summary,
        sources=dict(sorted(sources.items())),
    )
