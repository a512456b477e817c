"""Scorers that return given numbers, for checking citegraph's metric code against values
computed elsewhere (released outputs of the papers' code, hand-worked examples)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.models import TokenScores


class FixedScores:
    """A relevance or paragraph scorer that returns the given scores in order.

    It returns the first ``len(items)`` scores, or all of them when fewer were given (so a
    metric's own count check can be exercised), and keeps every item it was asked about.

    Args:
        scores: The scores to return.
        name: The model name recorded with each value.
    """

    def __init__(self, scores: Sequence[float], *, name: str = "fixed") -> None:
        self.scores = list(scores)
        self.name = name
        self.asked: list[Any] = []

    async def score(self, items: Sequence[Any]) -> list[float]:
        """The first ``len(items)`` scores."""
        self.asked.extend(items)
        return self.scores[: len(items)]


class FixedPerplexity:
    """An LM scorer giving each text one scored token with the perplexity given for it.

    A text whose perplexity is NaN gets no scored token (``reason`` says why), as a sentence the
    original code could not score.

    Args:
        by_text: Text -> perplexity.
        name: The model name recorded with each value.
        nan_reason: The ``reason`` of a text with a NaN perplexity.
    """

    def __init__(
        self,
        by_text: Mapping[str, float],
        *,
        name: str = "fixed-perplexity",
        nan_reason: str = "NaN perplexity given",
    ) -> None:
        self.by_text = dict(by_text)
        self.name = name
        self.nan_reason = nan_reason

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """``sum_nll = ln(perplexity)`` over one token per text."""
        out = []
        for text in texts:
            ppl = self.by_text[text]
            if math.isnan(ppl):
                out.append(TokenScores(sum_nll=0.0, n_tokens=0, reason=self.nan_reason))
            else:
                out.append(TokenScores(sum_nll=math.log(ppl), n_tokens=1))
        return out


def metric_records(
    metric: str, values: Sequence[Any], *, id_prefix: str = "nq"
) -> list[dict[str, Any]]:
    """``conner score`` records holding one metric's values (``MetricValue`` objects), with ids
    ``<id_prefix>:<i>``: what :func:`citegraph.conner.score.score_summary` aggregates."""
    return [
        {"id": f"{id_prefix}:{i}", "status": "ok", "metrics": {metric: v.model_dump(mode="json")}}
        for i, v in enumerate(values)
    ]
