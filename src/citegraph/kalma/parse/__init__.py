"""Reading attributed answers: sentences, KG citations and [NA] marks, with the paper's parser
or the authors' reference regex."""

from citegraph.kalma.parse._bracket import subject_references
from citegraph.kalma.parse._brackets import BracketSpan, find_brackets, strip_citations
from citegraph.kalma.parse._graphs import GraphIndex, norm_ws
from citegraph.kalma.parse._paper import PAPER_PARSER, parse_answer, parse_with
from citegraph.kalma.parse._reference import (
    REFERENCE_PARSER,
    parse_answer_reference,
    reference_plain,
)
from citegraph.kalma.parse._sentences import sentence_spans
from citegraph.kalma.parse._types import Citation, ParsedAnswer, ParseIssue, Sentence

__all__ = [
    "PAPER_PARSER",
    "REFERENCE_PARSER",
    "BracketSpan",
    "Citation",
    "GraphIndex",
    "ParseIssue",
    "ParsedAnswer",
    "Sentence",
    "find_brackets",
    "norm_ws",
    "parse_answer",
    "parse_answer_reference",
    "parse_with",
    "reference_plain",
    "sentence_spans",
    "strip_citations",
    "subject_references",
]
