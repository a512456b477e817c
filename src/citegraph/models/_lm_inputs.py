"""Which tokens of an input the causal-LM scorer scores, and how inputs are cut into batches.

The rules are those of :mod:`citegraph.models._lm_scorer`'s docstring: a text's first token has
no prediction, a continuation's tokens are those after the longest run shared with its prefix,
and ``max_length`` truncates a text from the right and a prefix + continuation from the left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["FIRST_TOKEN", "ScoreItem", "budget_batches", "pair_item", "text_item"]

#: Why nothing is scored when the input is a single token.
FIRST_TOKEN = "only the first token, which has no prediction (prepend_bos=False)"


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """Model input ids; ``ids[start:]`` are scored (``start >= 1``)."""

    ids: list[int]
    start: int
    n_truncated: int
    reason: str | None  # set when nothing is scored


def text_item(ids: list[int], limit: int, bos: bool) -> ScoreItem:
    """The input of a whole text of token ``ids`` (BOS first when ``bos``), kept to ``limit``
    tokens from its beginning; every token after the first is scored."""
    head = 1 if bos else 0
    if len(ids) == head:
        return ScoreItem(ids, 1, 0, "empty text")
    kept = ids[:limit]
    reason = FIRST_TOKEN if len(kept) < 2 else None
    return ScoreItem(kept, 1, len(ids) - len(kept), reason)


def pair_item(prefix: list[int], joined: list[int], limit: int, bos: bool) -> ScoreItem:
    """The input of a continuation: ``joined`` (prefix + continuation tokenised as a whole), its
    tokens after those shared with ``prefix`` scored; cut from the left to ``limit`` tokens (BOS
    stays first), or, when the continuation alone is too long, to its predecessor and its first
    tokens."""
    shared = next(
        (i for i, (a, b) in enumerate(zip(prefix, joined, strict=False)) if a != b),
        min(len(prefix), len(joined)),
    )
    if shared == len(joined):
        return ScoreItem(joined, 1, 0, "empty continuation")
    start = max(shared, 1)
    if start == len(joined):
        return ScoreItem(joined, 1, 0, FIRST_TOKEN)
    excess = len(joined) - limit
    if excess <= 0:
        return ScoreItem(joined, start, 0, None)
    head = 1 if bos else 0
    if excess <= start - 1 - head:  # drop the oldest prefix tokens (BOS stays first)
        return ScoreItem(joined[:head] + joined[head + excess :], start - excess, excess, None)
    # the continuation alone is too long: its predecessor and its first tokens
    return ScoreItem(joined[start - 1 : start - 1 + limit], 1, excess, None)


def budget_batches(
    widths: Sequence[int], batch_size: int, max_tokens: int
) -> list[tuple[int, int]]:
    """Cut inputs sorted by length, longest first, into ``[begin, end)`` batches of at most
    ``batch_size`` inputs whose padded size (inputs x the first, widest, input) stays within
    ``max_tokens``; an input wider than ``max_tokens`` gets a batch of its own."""
    batches: list[tuple[int, int]] = []
    begin = 0
    while begin < len(widths):
        fits = max(1, max_tokens // max(1, widths[begin]))
        end = min(len(widths), begin + min(batch_size, fits))
        batches.append((begin, end))
        begin = end
    return batches
