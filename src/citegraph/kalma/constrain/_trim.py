"""An answer cut by ``max_tokens`` inside a citation: the open citation is removed."""

from __future__ import annotations

from citegraph.kalma.parse import find_brackets


def cut_open_citation(text: str) -> tuple[str, bool]:
    """``text`` without an unclosed bracket at its end, and whether one was cut.

    A constrained generation that stops at ``max_tokens`` may stop inside a citation; the grammar
    guarantees nothing else is unclosed, so only a last open ``[`` (and what follows it) goes.

    Example:
        >>> cut_open_citation("Born in Rome [Q1, place of birth: Ro")
        ('Born in Rome', True)
    """
    spans = find_brackets(text)
    if spans and not spans[-1].closed and spans[-1].end == len(text):
        return text[: spans[-1].start].rstrip(), True
    return text, False
