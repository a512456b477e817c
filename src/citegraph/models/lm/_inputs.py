"""Which tokens of an input the causal-LM scorer scores, and how inputs are cut into batches.

The rules are those of :mod:`citegraph.models.lm._scorer`'s docstring: a text's first token has
no prediction, a continuation's tokens are those after the longest run shared with its prefix,
and ``max_length`` truncates a text from the right and a prefix + continuation from the left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["FIRST_TOKEN", "ScoreItem", "pair_item", "plan_batches", "prefix_groups", "text_item"]

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
    shared = _shared(prefix, joined)
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


def plan_batches(
    widths: Sequence[int], batch_size: int, max_tokens: int, pad_free: int
) -> list[tuple[int, int]]:
    """Cut inputs sorted by length, longest first, into ``[begin, end)`` batches.

    A batch takes the next input while it holds fewer than ``batch_size`` inputs, its padded
    size (inputs x the first, widest, input) stays within ``max_tokens``, and padding the next
    input to the batch's width adds at most ``pad_free`` positions: about what a forward pass
    costs whatever its length (reading the weights), so batching never computes more padding
    than it saves. An input wider than ``max_tokens`` gets a batch of its own.
    """
    batches: list[tuple[int, int]] = []
    begin = 0
    while begin < len(widths):
        width = max(1, widths[begin])
        most = min(batch_size, max(1, max_tokens // width))
        end = begin + 1
        while end < len(widths) and end - begin < most and width - widths[end] <= pad_free:
            end += 1
        batches.append((begin, end))
        begin = end
    return batches


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def prefix_groups(
    items: Sequence[ScoreItem], todo: Sequence[int], min_shared: int
) -> list[tuple[int, list[int]]]:
    """Group the inputs ``todo`` (indices into ``items``) that share a long token prefix.

    Returns ``(shared, members)`` pairs: the members' first ``shared`` tokens are the same (and
    each member has at least one token more), so those positions can be run once and their keys,
    values and log-probabilities reused. Inputs are taken in token order (inputs that share a
    prefix are neighbours); a group takes the next input while the prefix it shares with the
    group stays at least ``min_shared`` tokens and at least 3/4 of the group's. Inputs that
    share nothing useful come back in groups of one with ``shared = 0``.
    """
    short = [i for i in todo if len(items[i].ids) - 1 < min_shared]  # too little to share
    order = sorted(
        (i for i in todo if len(items[i].ids) - 1 >= min_shared), key=lambda i: items[i].ids
    )
    groups: list[tuple[int, list[int]]] = [(0, [i]) for i in short]
    for i in order:
        if len(groups) > len(short):
            shared, members = groups[-1]
            last = items[members[-1]]
            joined = min(_shared(last.ids, items[i].ids), len(items[i].ids) - 1, len(last.ids) - 1)
            if len(members) > 1:
                joined = min(joined, shared)
            floor = max(min_shared, 3 * shared // 4) if len(members) > 1 else min_shared
            if joined >= floor:
                groups[-1] = (joined, [*members, i])
                continue
        groups.append((0, [i]))
    return [(shared if len(m) > 1 else 0, m) for shared, m in groups]
