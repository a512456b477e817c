"""An approximate minimum knowledge set for datasets released without one (BioKaLMA).

BioKaLMA never released the gold minimum knowledge sets, so precision, recall and the [NA]
experiments cannot be computed on it as the paper did. ``question-match`` is a documented,
clearly labelled stand-in (REFERENCE_NOTES §4, option b): the facts of the question's own graphs
whose value is mentioned in the question (case-insensitive, on word boundaries), leaving out the
naming relations (``name``, ``given name``, ``surname``, ``family name``), which every mention of a
person matches trivially. It is *not* the paper's gold; every metric computed with it says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citegraph.kg import Subgraph, Triple

APPROX_GOLD = "question-match"
APPROX_GOLD_NOTE = (
    "approximate gold 'question-match': facts of the question's graphs whose value the question "
    "mentions (not the paper's minimum knowledge sets, which BioKaLMA did not release)"
)
NAMING_RELATIONS = frozenset({"name", "given name", "surname", "family name"})


def question_match_gold(
    question: str, graphs: Sequence[Subgraph], *, min_chars: int = 3
) -> list[Triple]:
    """Facts of ``graphs`` whose value occurs in ``question`` (see the module docstring).

    Args:
        question: The question text.
        graphs: The question's KG graphs.
        min_chars: Values shorter than this are ignored (too likely to match by accident).

    Returns:
        The facts, de-duplicated, in graph order.
    """
    folded = question.casefold()
    out: list[Triple] = []
    seen: set[Triple] = set()
    for graph in graphs:
        for triple in graph.triples:
            value = triple.value.strip()
            if triple.relation in NAMING_RELATIONS or len(value) < min_chars or triple in seen:
                continue
            pattern = r"(?<!\w)" + re.escape(value.casefold()) + r"(?!\w)"
            if re.search(pattern, folded):
                seen.add(triple)
                out.append(triple)
    return out
