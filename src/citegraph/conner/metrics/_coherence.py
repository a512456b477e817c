"""CONNER coherence: sentence-level cohesion (Eq. 3) and paragraph-level coherence (Eq. 4).

**Sentence level** (Eq. 3): ``S_coh_sent(k) = 1/m * sum_i 1/PPL(s_i)`` over the m sentences of
k, with PPL from a causal LM (the paper: GPT-Neo-2.7B; ``causal_lm_scorer("hf:EleutherAI/
gpt-neo-2.7B", max_length=500)`` mirrors the authors' ``ppl.py``, which truncates each sentence
to 500 tokens and does not add BOS, so a sentence's first token is not scored). Two forms:

The mode is a :class:`~citegraph.conner.ConnerRules` or its name:

- ``mode="paper"`` (default): the mean of ``1 / min(PPL_i, cap)``; no cap unless ``ppl_cap``
  is given. Sentences with nothing to score (a single token) are left out and counted in
  ``details["n_unscored"]``.
- ``mode="reference"`` (``ppl.py``): ``1 / mean_i min(PPL_i, cap)`` with cap 200: the example
  PPL is the mean of the capped sentence PPLs, and the score its inverse (by Jensen's inequality
  never above the paper form). A sentence with nothing to score makes the whole example
  unmeasured, as its NaN loss does in ``ppl.py`` (whose corpus mean is a ``nanmean``).

The released ``nq_ref_avg_sent_ppl`` (CONNER's outputs on the NQ gold passages) tops out at
exactly 100.0, so that run seems to have capped at 100, not at the 200 of the released code;
pass ``ppl_cap=100`` to compare with it.

**Paragraph level** (Eq. 4): a :class:`ParagraphScorer` scores each whole text (the paper:
``aisingapore/coherence-momentum``, an sgnlp XLNet model, not loadable with transformers; wrap
it in an object with ``name`` and async ``score(texts)`` calling its ``get_main_score``). The
paper reports "the normalized score"; the authors' ``discourse-coherence.py`` only dumps the raw,
unbounded scores with their max and min, so the normalisation is not in the code.
``normalize="minmax"`` (default) maps the raw scores of the texts scored together onto [0, 1]
(or fixed ``bounds``, clipped); ``"none"`` keeps the raw scores. With no paragraph model, the
values are ``None`` with the reason :data:`NO_PARAGRAPH_MODEL`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, cast, runtime_checkable

from citegraph.conner._types import DetailValue, MetricValue
from citegraph.conner.metrics._rules import ConnerRules, Mode
from citegraph.conner.metrics._sentences import punkt_sentences
from citegraph.errors import ConfigError, ModelError
from citegraph.models import LMScorer, custom_builder, parse_spec
from citegraph.models.rerank import HFTextScorer
from citegraph.runs import blocking

__all__ = [
    "NO_PARAGRAPH_MODEL",
    "ParagraphScorer",
    "paragraph_coherence",
    "paragraph_scorer",
    "sentence_coherence",
    "sentence_coherence_value",
]

#: Why paragraph coherence is None when no model is configured.
NO_PARAGRAPH_MODEL = (
    "no paragraph coherence model given (the paper uses aisingapore/coherence-momentum, sgnlp)"
)
_NO_SENTENCES = "no sentences"


@runtime_checkable
class ParagraphScorer(Protocol):
    """Scores whole texts for discourse coherence; one number per text, in order."""

    @property
    def name(self) -> str:
        """The model behind the scores."""
        ...

    async def score(self, texts: Sequence[str]) -> list[float]:
        """The raw coherence score of each text (higher = more coherent)."""
        ...


def _cap(mode: Mode | ConnerRules, ppl_cap: float | None) -> tuple[ConnerRules, float]:
    rules = ConnerRules.for_mode(mode)
    cap = rules.ppl_cap if ppl_cap is None else ppl_cap
    if not cap >= 1.0:  # a perplexity is >= 1; also rejects NaN
        raise ConfigError(f"ppl_cap must be >= 1, got {cap}")
    return rules, float(cap)


def sentence_coherence_value(
    perplexities: Sequence[float | None],
    *,
    mode: Mode | ConnerRules = "paper",
    ppl_cap: float | None = None,
) -> float | None:
    """Eq. 3 from one text's sentence perplexities (``None`` = a sentence with nothing scored).

    Args:
        perplexities: PPL of each sentence.
        mode: ``"paper"``: mean of ``1 / min(PPL_i, cap)`` over the scored sentences;
            ``"reference"``: ``1 / mean(min(PPL_i, cap))``, None if any sentence is unscored
            (or the run's :class:`~citegraph.conner.ConnerRules`).
        ppl_cap: The cap; None: the rules' (no cap in paper mode, 200 in reference mode;
            ``math.inf`` turns it off).

    Returns:
        The score in (0, 1], or None when no sentence (reference: not every sentence) is scored.

    Raises:
        ConfigError: Unknown mode or a cap below 1.
    """
    rules, cap = _cap(mode, ppl_cap)
    scored = [min(p, cap) for p in perplexities if p is not None and not math.isnan(p)]
    if not scored or (rules.ppl_inverse_of_mean and len(scored) < len(perplexities)):
        return None
    if rules.ppl_inverse_of_mean:
        return 1.0 / (math.fsum(scored) / len(scored))
    return math.fsum(1.0 / p for p in scored) / len(scored)


async def sentence_coherence_async(
    knowledge: Sequence[str],
    lm: LMScorer,
    *,
    mode: Mode | ConnerRules = "paper",
    ppl_cap: float | None = None,
    splitter: Callable[[str], list[str]] | None = None,
) -> list[MetricValue]:
    """CONNER sentence-level coherence (Eq. 3) of each knowledge text.

    Args:
        knowledge: The knowledge texts.
        lm: The causal-LM scorer (all sentences go to one batched ``score`` call).
        mode, ppl_cap: See :func:`sentence_coherence_value`.
        splitter: Splits a text into sentences (default: ``citegraph.conner``'s splitter, which
            follows ``nltk.sent_tokenize`` as the reference code).

    Returns:
        One :class:`MetricValue` per text (``model`` = ``lm.name``), with ``details``:
        ``mode``, ``ppl_cap`` (None = no cap), ``n_sentences``, ``n_unscored`` and ``mean_ppl``
        (the mean capped sentence PPL, the reference's example PPL). Empty texts are None.

    Raises:
        ConfigError: Unknown mode or a bad cap.
        ModelError: The LM returned the wrong number of results.
    """
    rules, cap = _cap(mode, ppl_cap)
    split = splitter or punkt_sentences
    sentences = [[s for s in split(text) if s.strip()] for text in knowledge]
    flat = [s for group in sentences for s in group]
    scores = await lm.score(flat) if flat else []
    if len(scores) != len(flat):
        raise ModelError(f"{lm.name}: {len(scores)} scores for {len(flat)} sentences")
    values: list[MetricValue] = []
    start = 0
    for text, group in zip(knowledge, sentences, strict=True):
        ppls = [s.perplexity for s in scores[start : start + len(group)]]
        start += len(group)
        if not group:
            empty = "empty knowledge" if not text.strip() else _NO_SENTENCES
            values.append(MetricValue(value=None, reason=empty, model=lm.name))
            continue
        scored = [min(p, cap) for p in ppls if p is not None]
        details: dict[str, DetailValue] = {
            "mode": rules.mode,
            "ppl_cap": None if math.isinf(cap) else cap,
            "n_sentences": len(group),
            "n_unscored": len(group) - len(scored),
            "mean_ppl": math.fsum(scored) / len(scored) if scored else None,
        }
        value = sentence_coherence_value(ppls, mode=rules, ppl_cap=cap)
        reason: str | None = None
        if value is None:
            reason = (
                "a sentence has no scored token (reference mode: its NaN spoils the example)"
                if scored
                else "no sentence has a scored token"
            )
        values.append(MetricValue(value=value, reason=reason, model=lm.name, details=details))
    return values


sentence_coherence = blocking(sentence_coherence_async)


def paragraph_scorer(
    spec: str | None,
    *,
    batch_size: int = 16,
    device: str = "auto",
    dtype: Any = "auto",
    max_length: int = 512,
    label_index: int | None = None,
) -> ParagraphScorer | None:
    """Build a paragraph coherence scorer from a spec.

    Args:
        spec: ``"hf/<path or hub id>"``: an HF sequence-classification or regression model
            (:class:`~citegraph.models.HFTextScorer`: a single output is its raw score, two
            classes give P(class 1)); ``None`` or ``""``: no model (values will be None).
        batch_size, device, dtype, max_length, label_index: As
            :class:`~citegraph.models.HFTextScorer`.

    Raises:
        ConfigError: An unknown spec.
        MissingDependency, ModelError: The model cannot be loaded.
    """
    if spec is None or not spec.strip():
        return None
    parsed = parse_spec("coherence", spec)
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        given = {"batch_size": batch_size, "device": device, "dtype": dtype}
        return cast(ParagraphScorer, build(parsed, given))
    if parsed.provider == "hf":
        return HFTextScorer(
            parsed.model,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            max_length=max_length,
            label_index=label_index,
        )
    raise ConfigError(f"unknown paragraph coherence spec {spec!r}; expected 'hf/<path>'")


async def paragraph_coherence_async(
    knowledge: Sequence[str],
    scorer: ParagraphScorer | None,
    *,
    normalize: Literal["minmax", "none"] = "minmax",
    bounds: tuple[float, float] | None = None,
) -> list[MetricValue]:
    """CONNER paragraph-level coherence (Eq. 4) of each knowledge text.

    Args:
        knowledge: The knowledge texts (each scored whole).
        scorer: The discourse-coherence model; None gives None values with
            :data:`NO_PARAGRAPH_MODEL` as the reason.
        normalize: ``"minmax"``: ``(s - lo) / (hi - lo)`` with ``lo``, ``hi`` the least and
            greatest raw score of this call's texts (so a value depends on the texts scored with
            it), or ``bounds``; ``"none"``: the raw score (the reference code).
        bounds: Fixed ``(lo, hi)`` for min-max (values clipped to [0, 1]).

    Returns:
        One :class:`MetricValue` per text; ``details`` holds ``raw``, ``normalize``, ``min`` and
        ``max``. Empty texts are None; so is every text when min-max has fewer than two
        distinct raw scores to work with.

    Raises:
        ConfigError: Unknown ``normalize`` or bad ``bounds``.
        ModelError: The scorer returned the wrong number of scores.
    """
    if normalize not in ("minmax", "none"):
        raise ConfigError(f"normalize must be 'minmax' or 'none', got {normalize!r}")
    if bounds is not None and (normalize != "minmax" or not bounds[0] < bounds[1]):
        raise ConfigError(f"bounds {bounds} need normalize='minmax' and lo < hi")
    if scorer is None:
        return [MetricValue(value=None, reason=NO_PARAGRAPH_MODEL, model="none") for _ in knowledge]
    todo = [i for i, text in enumerate(knowledge) if text.strip()]
    raw = await scorer.score([knowledge[i] for i in todo]) if todo else []
    if len(raw) != len(todo):
        raise ModelError(f"{scorer.name}: {len(raw)} scores for {len(todo)} texts")
    by_index = {i: float(s) for i, s in zip(todo, raw, strict=True) if math.isfinite(s)}
    lo, hi = bounds if bounds is not None else _range(list(by_index.values()))
    values: list[MetricValue] = []
    for i, text in enumerate(knowledge):
        score = by_index.get(i)
        if score is None:
            reason = "empty knowledge" if not text.strip() else "non-finite score"
            values.append(MetricValue(value=None, reason=reason, model=scorer.name))
            continue
        details: dict[str, DetailValue] = {"raw": score, "normalize": normalize}
        if normalize == "none":
            values.append(MetricValue(value=score, model=scorer.name, details=details))
            continue
        details |= {"min": lo, "max": hi}
        if lo is None or hi is None or not lo < hi:
            reason = "min-max normalisation needs two different scores (pass bounds=)"
            values.append(
                MetricValue(value=None, reason=reason, model=scorer.name, details=details)
            )
            continue
        value = min(1.0, max(0.0, (score - lo) / (hi - lo)))
        values.append(MetricValue(value=value, model=scorer.name, details=details))
    return values


paragraph_coherence = blocking(paragraph_coherence_async)


def _range(scores: list[float]) -> tuple[float | None, float | None]:
    return (min(scores), max(scores)) if scores else (None, None)
