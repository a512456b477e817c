"""Constrained citations (``--citations constrained``): answers whose citations can only name the
retrieved triples, in the KaLMA format the parser reads.

The answer's text stays free; a citation is ``[NA]`` or a bracket of retrieved facts, and no
fact is cited twice in one answer (:mod:`._once`). The grammar
is made once per question from its graphs (:class:`CitationChoices`, :func:`citation_grammar`) and
each provider applies it its own way (:data:`citegraph.models.GRAMMAR_MODES`).
"""

from citegraph.kalma.constrain._choices import MAX_CITABLE_CHARS, CitableEntity, CitationChoices
from citegraph.kalma.constrain._constraint import (
    ONCE_AFTER_REPLY,
    ONCE_IN_DECODING,
    CitationConstraint,
)
from citegraph.kalma.constrain._grammar import (
    CITATION_GRAMMAR,
    JSON_INSTRUCTION,
    CitationsMode,
    citation_grammar,
    render_json_answer,
)
from citegraph.kalma.constrain._once import OncePerAnswer, drop_repeats
from citegraph.kalma.constrain._trim import cut_open_citation

__all__ = [
    "CITATION_GRAMMAR",
    "JSON_INSTRUCTION",
    "MAX_CITABLE_CHARS",
    "ONCE_AFTER_REPLY",
    "ONCE_IN_DECODING",
    "CitableEntity",
    "CitationChoices",
    "CitationConstraint",
    "CitationsMode",
    "OncePerAnswer",
    "citation_grammar",
    "cut_open_citation",
    "drop_repeats",
    "render_json_answer",
]
