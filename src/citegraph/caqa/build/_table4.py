"""The paper's Table 4 beside a build's own statistics, for ``stats.md``.

CAQA (arXiv 2401.14640v1) Table 4, "CAQA statistics across different attribution categories and
different attribution complexity levels", counts the samples of the paper's one build: GrailQA
and WebQuestionsSP over Freebase (§5.1), split into train and test (no dev split). No KG here is
Freebase, so the comparison is of shares (a category's or complexity level's part of all
samples), not of counts; the counts are shown for reference. :data:`PAPER_TABLE4` holds the
table's cells as printed, keyed by column and row.
"""

from __future__ import annotations

from typing import Any

from citegraph.caqa._types import CATEGORIES
from citegraph.io import markdown_table

#: Table 4's rows and their abbreviations in the paper.
ABBREVIATIONS: dict[str, str] = {
    "supportive": "Sup.",
    "insufficient": "Ins.",
    "contradictory": "Con.",
    "irrelevant": "Irr.",
    "single": "S.",
    "concatenation": "C.",
    "union": "U.",
    "intersection": "I.",
}

#: Table 4's complexity rows, in its order (S., C., U., I.).
TABLE4_COMPLEXITY_ORDER: tuple[str, ...] = ("single", "concatenation", "union", "intersection")

#: Table 4, column -> row -> samples ("samples" is the first row, no label in the paper).
PAPER_TABLE4: dict[str, dict[str, int]] = {
    "train": {
        "samples": 137_211,
        "supportive": 39_489,
        "insufficient": 28_868,
        "contradictory": 36_620,
        "irrelevant": 32_234,
        "single": 53_795,
        "concatenation": 46_783,
        "union": 5_347,
        "intersection": 31_286,
    },
    "test": {
        "samples": 23_963,
        "supportive": 6_668,
        "insufficient": 5_065,
        "contradictory": 6_423,
        "irrelevant": 5_807,
        "single": 9_043,
        "concatenation": 8_455,
        "union": 886,
        "intersection": 5_579,
    },
    "total": {
        "samples": 161_174,
        "supportive": 46_157,
        "insufficient": 33_933,
        "contradictory": 43_043,
        "irrelevant": 38_041,
        "single": 62_838,
        "concatenation": 55_238,
        "union": 6_233,
        "intersection": 36_865,
    },
}


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "-"


def _count(table: dict[str, Any], split: str, row: str) -> int:
    part = table[split]
    if row == "samples":
        return int(part["samples"])
    key = "categories" if row in CATEGORIES else "complexity"
    return int(part[key].get(row, 0))


def render_table4_comparison(table: dict[str, Any], *, source: str = "") -> str:
    """The build's samples per category and complexity level beside the paper's Table 4.

    Args:
        table: :func:`~citegraph.caqa.build.statistics` of the build (splits and ``total``).
        source: What was built (question set and KG), named in the heading line.

    Returns:
        Markdown: a note on what is compared, then one row per Table 4 row with the build's
        train / dev / test / total counts and share of the total, and the paper's train / test
        / total counts and share of its total.
    """
    lines = [
        "## Beside the paper's Table 4",
        "",
        f"citegraph: {source or 'this build'}. Paper: CAQA (arXiv 2401.14640v1) Table 4, "
        "GrailQA and WebQuestionsSP over Freebase, columns Train / Test / Total (no dev split); "
        "the share columns are computed here from each Total column (a category's or "
        "complexity level's part of all samples). The KGs differ, so compare shares, not "
        "counts.",
        "",
    ]
    header = ["Table 4 row", "ours train", "ours dev", "ours test", "ours total", "ours share"]
    header += ["paper train", "paper test", "paper total", "paper share"]
    ours_total = _count(table, "total", "samples")
    paper_total = PAPER_TABLE4["total"]["samples"]
    body = []
    for row in ("samples", *CATEGORIES, *TABLE4_COMPLEXITY_ORDER):
        name = f"{row} ({ABBREVIATIONS[row]})" if row in ABBREVIATIONS else row
        ours = [_count(table, split, row) for split in ("train", "dev", "test", "total")]
        paper = [PAPER_TABLE4[col][row] for col in ("train", "test", "total")]
        body.append(
            [
                name,
                *ours,
                _share(ours[-1], ours_total),
                *(f"{n:,}" for n in paper),
                _share(paper[-1], paper_total),
            ]
        )
    return "\n".join([*lines, markdown_table(header, body)]) + "\n"
