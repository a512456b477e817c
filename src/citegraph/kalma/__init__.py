"""KaLMA: attributed answers that cite KG triples, and their evaluation."""

from citegraph.kalma._alignment import (
    REFERENCE_CAP,
    AlignedPair,
    AlignmentMode,
    AlignmentReport,
    AnswerAlignment,
    aggregate_alignment,
    score_alignment,
    score_alignment_many,
)
from citegraph.kalma._citation_metrics import (
    AnswerCitationScores,
    CitationMode,
    CitationReport,
    CitationRunsSummary,
    CitationVerdict,
    aggregate_citation_scores,
    combine_citation_runs,
    score_citations,
)
from citegraph.kalma._na_metrics import (
    AnswerNAScores,
    HypothesisStyle,
    NAEntailment,
    NAMode,
    NAReport,
    aggregate_na_scores,
    render_fact,
    score_na,
)
from citegraph.kalma._parse import PAPER_PARSER, parse_answer
from citegraph.kalma._parse_brackets import strip_citations
from citegraph.kalma._parse_reference import REFERENCE_PARSER, parse_answer_reference
from citegraph.kalma._score import ScoreConfig, ScoreResult, score_answers, score_answers_async
from citegraph.kalma._sentences import split_sentences
from citegraph.kalma._types import Citation, ParsedAnswer, ParseIssue, Sentence

__all__ = [
    "PAPER_PARSER",
    "REFERENCE_CAP",
    "REFERENCE_PARSER",
    "AlignedPair",
    "AlignmentMode",
    "AlignmentReport",
    "AnswerAlignment",
    "AnswerCitationScores",
    "AnswerNAScores",
    "Citation",
    "CitationMode",
    "CitationReport",
    "CitationRunsSummary",
    "CitationVerdict",
    "HypothesisStyle",
    "NAEntailment",
    "NAMode",
    "NAReport",
    "ParseIssue",
    "ParsedAnswer",
    "ScoreConfig",
    "ScoreResult",
    "Sentence",
    "aggregate_alignment",
    "aggregate_citation_scores",
    "aggregate_na_scores",
    "combine_citation_runs",
    "parse_answer",
    "parse_answer_reference",
    "render_fact",
    "score_alignment",
    "score_alignment_many",
    "score_answers",
    "score_answers_async",
    "score_citations",
    "score_na",
    "split_sentences",
    "strip_citations",
]
