"""Reading attributed answers: sentences, KG citations and [NA] marks, with the paper's parser
or the authors' reference regex."""

from citegraph.kalma.parse._bracket import subject_references
from citegraph.kalma.parse._brackets import strip_citations
from citegraph.kalma.parse._paper import PAPER_PARSER, parse_answer, parse_with
from citegraph.kalma.parse._reference import REFERENCE_PARSER, parse_answer_reference
from citegraph.kalma.parse._sentences import split_sentences
from citegraph.kalma.parse._types import Citation, ParsedAnswer, ParseIssue, Sentence

__all__ = [
    "PAPER_PARSER",
    "REFERENCE_PARSER",
    "Citation",
    "ParseIssue",
    "ParsedAnswer",
    "Sentence",
    "parse_answer",
    "parse_answer_reference",
    "parse_with",
    "split_sentences",
    "strip_citations",
    "subject_references",
]
