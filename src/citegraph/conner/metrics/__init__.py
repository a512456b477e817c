"""CONNER's six perspectives, each a function over knowledge texts giving :class:`MetricValue`s.

Intrinsic: :func:`factuality` (Eq. 1, NLI against evidence from an :class:`EvidenceSource`),
:func:`relevance` (Eq. 2), :func:`sentence_coherence` and :func:`paragraph_coherence` (Eqs. 3-4),
:func:`informativeness` (Eq. 5). Extrinsic: :func:`helpfulness` (Eq. 6), :func:`span_validity` /
:func:`open_validity` (Eqs. 7-8). Paper vs reference mode is one :class:`ConnerRules` object.
"""

from citegraph.conner.metrics._coherence import (
    NO_PARAGRAPH_MODEL,
    ParagraphScorer,
    paragraph_coherence,
    paragraph_scorer,
    sentence_coherence,
    sentence_coherence_value,
)
from citegraph.conner.metrics._evidence import (
    CombinedEvidence,
    EvidenceSource,
    FixedEvidence,
    RetrievedEvidence,
    Searcher,
    gold_evidence,
    reference_evidence,
)
from citegraph.conner.metrics._factuality import (
    EVIDENCE_CHARS,
    FACTUALITY_PARTS,
    SENTENCE_LABELS,
    FactualityConfig,
    NLISummary,
    factuality,
    factuality_summary,
    nli_metric_value,
    summarize_nli,
)
from citegraph.conner.metrics._helpfulness import (
    HELPFULNESS_PROMPT,
    ZERO_SHOT_PROMPTS,
    answer_demonstrations,
    helpfulness,
)
from citegraph.conner.metrics._informativeness import (
    INFO_PROMPT,
    informativeness,
    informativeness_prefix,
    truncate_words,
)
from citegraph.conner.metrics._relevance import (
    EMBEDDING_FALLBACK_PREFIX,
    WOW_SEPARATOR,
    EmbeddingRelevance,
    RelevanceScorer,
    metric_query,
    relevance,
    relevance_scorer,
)
from citegraph.conner.metrics._rules import (
    REFERENCE_PPL_CAP,
    REFERENCE_TRUNCATE_WORDS,
    ConnerRules,
    Mode,
)
from citegraph.conner.metrics._sentences import (
    ABBREVIATIONS,
    SENTENCE_STARTERS,
    split_sentences,
)
from citegraph.conner.metrics._validity import (
    OpenValidityConfig,
    SpanValidityConfig,
    open_validity,
    span_validity,
    span_validity_batch,
    validity_summary,
)

__all__ = [
    "ABBREVIATIONS",
    "EMBEDDING_FALLBACK_PREFIX",
    "EVIDENCE_CHARS",
    "FACTUALITY_PARTS",
    "HELPFULNESS_PROMPT",
    "INFO_PROMPT",
    "NO_PARAGRAPH_MODEL",
    "REFERENCE_PPL_CAP",
    "REFERENCE_TRUNCATE_WORDS",
    "SENTENCE_LABELS",
    "SENTENCE_STARTERS",
    "WOW_SEPARATOR",
    "ZERO_SHOT_PROMPTS",
    "CombinedEvidence",
    "ConnerRules",
    "EmbeddingRelevance",
    "EvidenceSource",
    "FactualityConfig",
    "FixedEvidence",
    "Mode",
    "NLISummary",
    "OpenValidityConfig",
    "ParagraphScorer",
    "RelevanceScorer",
    "RetrievedEvidence",
    "Searcher",
    "SpanValidityConfig",
    "answer_demonstrations",
    "factuality",
    "factuality_summary",
    "gold_evidence",
    "helpfulness",
    "informativeness",
    "informativeness_prefix",
    "metric_query",
    "nli_metric_value",
    "open_validity",
    "paragraph_coherence",
    "paragraph_scorer",
    "reference_evidence",
    "relevance",
    "relevance_scorer",
    "sentence_coherence",
    "sentence_coherence_value",
    "span_validity",
    "span_validity_batch",
    "split_sentences",
    "summarize_nli",
    "truncate_words",
    "validity_summary",
]
