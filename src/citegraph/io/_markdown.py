"""Markdown tables, as reports, ``stats.md`` files and the benchmark scripts write them."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table: the header, a ``|---|`` separator and one line per row (cells as
    ``str``), lines joined by newlines, no trailing newline.

    Example:
        >>> print(markdown_table(["a", "b"], [[1, "x"]]))
        | a | b |
        |---|---|
        | 1 | x |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
