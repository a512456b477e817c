"""Scoring attributed answers (paper §4): citation quality, text-citation alignment, [NA]
precision and recall, the text-quality judge, citation validity (malformed brackets, cited ids
not in the KG, citations outside the retrieved graphs, citations per sentence), and the
``kalma.score`` task."""

from citegraph.kalma._reasons import warning_lines
from citegraph.kalma.score._alignment import (
    AlignedPair,
    AlignmentMode,
    AlignmentReport,
    AnswerAlignment,
    aggregate_alignment,
    score_alignment,
    score_alignment_async,
    score_alignment_many,
    score_alignment_many_async,
)
from citegraph.kalma.score._citations import (
    AnswerCitationScores,
    CitationMode,
    CitationReport,
    CitationRunsSummary,
    CitationVerdict,
    aggregate_citation_scores,
    combine_citation_runs,
    score_citations,
)
from citegraph.kalma.score._config import (
    KalmaScoreConfig,
    ScoringOptions,
    TextQualityOptions,
    replies_identity,
)
from citegraph.kalma.score._inputs import WARNINGS, with_subjects
from citegraph.kalma.score._item import ScoreItem, score_items, score_items_async
from citegraph.kalma.score._judge_answers import judged_ids
from citegraph.kalma.score._na import (
    AnswerNAScores,
    NAEntailment,
    NAMode,
    NAReport,
    aggregate_na_scores,
    score_na,
    score_na_async,
)
from citegraph.kalma.score._na_edge import (
    EDGE_HYPOTHESIS,
    EDGE_PROMPT_VERSION,
    AnswersQuestion,
    LexicalAnswersQuestion,
    NLIAnswersQuestion,
    answers_question_check,
)
from citegraph.kalma.score._nli import render_fact
from citegraph.kalma.score._report import METRICS, build_metrics
from citegraph.kalma.score._resolve import Reference, resolve_in_kg, resolve_in_kg_async
from citegraph.kalma.score._task import (
    KalmaScoreResult,
    KalmaScoreTask,
    score_answers,
    score_answers_async,
)
from citegraph.kalma.score._text_quality import (
    CRITERIA,
    GEVAL_VERSION,
    JUDGE_CONFIG,
    CriterionScore,
    TextQuality,
    TextQualitySummary,
    aggregate_text_quality,
    judge_grammar,
    judge_messages,
    judge_text_quality,
    judge_text_quality_async,
    parse_score,
)
from citegraph.kalma.score._text_quality_agreement import (
    HUMAN_FIELD,
    HumanScores,
    check_human_ids,
    read_human_scores,
    text_quality_agreement,
    text_quality_block,
)
from citegraph.kalma.score._validity import (
    NO_KG_DATASET_DIR,
    AnswerValidity,
    EntityLookup,
    answer_validity,
)

__all__ = [
    "CRITERIA",
    "EDGE_HYPOTHESIS",
    "EDGE_PROMPT_VERSION",
    "GEVAL_VERSION",
    "HUMAN_FIELD",
    "JUDGE_CONFIG",
    "METRICS",
    "NO_KG_DATASET_DIR",
    "WARNINGS",
    "AlignedPair",
    "AlignmentMode",
    "AlignmentReport",
    "AnswerAlignment",
    "AnswerCitationScores",
    "AnswerNAScores",
    "AnswerValidity",
    "AnswersQuestion",
    "CitationMode",
    "CitationReport",
    "CitationRunsSummary",
    "CitationVerdict",
    "CriterionScore",
    "EntityLookup",
    "HumanScores",
    "KalmaScoreConfig",
    "KalmaScoreResult",
    "KalmaScoreTask",
    "LexicalAnswersQuestion",
    "NAEntailment",
    "NAMode",
    "NAReport",
    "NLIAnswersQuestion",
    "Reference",
    "ScoreItem",
    "ScoringOptions",
    "TextQuality",
    "TextQualityOptions",
    "TextQualitySummary",
    "aggregate_alignment",
    "aggregate_citation_scores",
    "aggregate_na_scores",
    "aggregate_text_quality",
    "answer_validity",
    "answers_question_check",
    "build_metrics",
    "check_human_ids",
    "combine_citation_runs",
    "judge_grammar",
    "judge_messages",
    "judge_text_quality",
    "judge_text_quality_async",
    "judged_ids",
    "parse_score",
    "read_human_scores",
    "render_fact",
    "replies_identity",
    "resolve_in_kg",
    "resolve_in_kg_async",
    "score_alignment",
    "score_alignment_async",
    "score_alignment_many",
    "score_alignment_many_async",
    "score_answers",
    "score_answers_async",
    "score_citations",
    "score_items",
    "score_items_async",
    "score_na",
    "score_na_async",
    "text_quality_agreement",
    "text_quality_block",
    "warning_lines",
    "with_subjects",
]
