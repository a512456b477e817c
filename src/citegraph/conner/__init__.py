"""CONNER: six-perspective, reference-free evaluation of knowledge.

Tasks (NQ, WoW: ``citegraph.datasets.load_conner``) -> knowledge (generated:
:func:`generate_knowledge`;
retrieved: :class:`DenseRetriever`) -> intrinsic metrics (:func:`factuality`, :func:`relevance`,
:func:`sentence_coherence`, :func:`paragraph_coherence`, :func:`informativeness`) and extrinsic ones
(:func:`helpfulness`, :func:`span_validity`, :func:`open_validity`) -> selection (Eq. 9:
:func:`knowledge_quality`, :func:`select_knowledge`) and meta-evaluation (:func:`correlate`).
"""

from citegraph.conner._acquire_run import (
    AcquireResult,
    ConnerGenerateConfig,
    ConnerRetrieveConfig,
    finish_acquired,
    generate_run,
    generate_run_async,
    retrieve_run,
)
from citegraph.conner._answer import (
    GeneratedAnswer,
    extract_answer,
    generate_answers,
)
from citegraph.conner._coherence import (
    NO_PARAGRAPH_MODEL,
    REFERENCE_PPL_CAP,
    ParagraphScorer,
    paragraph_coherence,
    paragraph_scorer,
    sentence_coherence,
    sentence_coherence_value,
)
from citegraph.conner._correlate import (
    RATING_VALUES,
    Correlation,
    Method,
    correlate,
    read_ratings,
)
from citegraph.conner._correlate_run import (
    correlate_runs,
    render_correlations,
)
from citegraph.conner._evidence import (
    CombinedEvidence,
    EvidenceSource,
    FixedEvidence,
    RetrievedEvidence,
    Searcher,
    gold_evidence,
    reference_evidence,
)
from citegraph.conner._factuality import (
    FactualityConfig,
    NLISummary,
    factuality,
    factuality_summary,
    nli_metric_value,
    summarize_nli,
)
from citegraph.conner._generate import (
    GeneratedKnowledge,
    clean_knowledge,
    generate_knowledge,
)
from citegraph.conner._helpfulness import (
    HELPFULNESS_PROMPT,
    REFERENCE_TRUNCATE_WORDS,
    answer_demonstrations,
    helpfulness,
)
from citegraph.conner._informativeness import (
    INFO_PROMPT,
    informativeness,
    informativeness_prefix,
    truncate_words,
)
from citegraph.conner._knowledge_io import (
    GOLD,
    KnowledgeInput,
    generated_record,
    knowledge_record,
    load_task,
    read_knowledge,
)
from citegraph.conner._prompts import (
    DEFAULT_DEMO_MAX_WORDS,
    DEFAULT_SHOTS,
    PromptTemplate,
    answer_prompt,
    default_template,
    get_template,
    knowledge_prompt,
    prompt_messages,
    prompt_templates,
    prompt_version,
    select_demonstrations,
)
from citegraph.conner._relevance import (
    EMBEDDING_FALLBACK_PREFIX,
    WOW_SEPARATOR,
    EmbeddingRelevance,
    RelevanceScorer,
    metric_query,
    relevance,
    relevance_scorer,
)
from citegraph.conner._retrieve import (
    TASK_CORPUS,
    Corpus,
    DenseRetriever,
    corpus_fingerprint,
    load_corpus,
    read_corpus,
    retrieve_knowledge,
    task_corpus,
)
from citegraph.conner._score_config import (
    ConnerScoreConfig,
    model_notes,
)
from citegraph.conner._score_models import (
    ScoreModels,
    load_score_models,
)
from citegraph.conner._score_run import (
    ConnerScoreResult,
    score_knowledge,
    score_knowledge_async,
)
from citegraph.conner._score_summary import (
    read_score_values,
    render_score,
    score_summary,
)
from citegraph.conner._select_run import (
    ConnerSelectConfig,
    select_run,
    select_run_async,
)
from citegraph.conner._selection import (
    KnowledgeChoice,
    knowledge_quality,
    select_best_demonstrations,
    select_knowledge,
)
from citegraph.conner._sentences import (
    split_sentences,
)
from citegraph.conner._types import (
    METRICS,
    TASKS,
    ConnerSample,
    Knowledge,
    Metric,
    MetricValue,
    Task,
)
from citegraph.conner._validity import (
    OpenValidityConfig,
    SpanValidityConfig,
    open_validity,
    span_validity,
    span_validity_batch,
    validity_summary,
)

__all__ = [
    "DEFAULT_DEMO_MAX_WORDS",
    "DEFAULT_SHOTS",
    "EMBEDDING_FALLBACK_PREFIX",
    "GOLD",
    "HELPFULNESS_PROMPT",
    "INFO_PROMPT",
    "METRICS",
    "NO_PARAGRAPH_MODEL",
    "RATING_VALUES",
    "REFERENCE_PPL_CAP",
    "REFERENCE_TRUNCATE_WORDS",
    "TASKS",
    "TASK_CORPUS",
    "WOW_SEPARATOR",
    "AcquireResult",
    "CombinedEvidence",
    "ConnerGenerateConfig",
    "ConnerRetrieveConfig",
    "ConnerSample",
    "ConnerScoreConfig",
    "ConnerScoreResult",
    "ConnerSelectConfig",
    "Corpus",
    "Correlation",
    "DenseRetriever",
    "EmbeddingRelevance",
    "EvidenceSource",
    "FactualityConfig",
    "FixedEvidence",
    "GeneratedAnswer",
    "GeneratedKnowledge",
    "Knowledge",
    "KnowledgeChoice",
    "KnowledgeInput",
    "Method",
    "Metric",
    "MetricValue",
    "NLISummary",
    "OpenValidityConfig",
    "ParagraphScorer",
    "PromptTemplate",
    "RelevanceScorer",
    "RetrievedEvidence",
    "ScoreModels",
    "Searcher",
    "SpanValidityConfig",
    "Task",
    "answer_demonstrations",
    "answer_prompt",
    "clean_knowledge",
    "corpus_fingerprint",
    "correlate",
    "correlate_runs",
    "default_template",
    "extract_answer",
    "factuality",
    "factuality_summary",
    "finish_acquired",
    "generate_answers",
    "generate_knowledge",
    "generate_run",
    "generate_run_async",
    "generated_record",
    "get_template",
    "gold_evidence",
    "helpfulness",
    "informativeness",
    "informativeness_prefix",
    "knowledge_prompt",
    "knowledge_quality",
    "knowledge_record",
    "load_corpus",
    "load_score_models",
    "load_task",
    "metric_query",
    "model_notes",
    "nli_metric_value",
    "open_validity",
    "paragraph_coherence",
    "paragraph_scorer",
    "prompt_messages",
    "prompt_templates",
    "prompt_version",
    "read_corpus",
    "read_knowledge",
    "read_ratings",
    "read_score_values",
    "reference_evidence",
    "relevance",
    "relevance_scorer",
    "render_correlations",
    "render_score",
    "retrieve_knowledge",
    "retrieve_run",
    "score_knowledge",
    "score_knowledge_async",
    "score_summary",
    "select_best_demonstrations",
    "select_demonstrations",
    "select_knowledge",
    "select_run",
    "select_run_async",
    "sentence_coherence",
    "sentence_coherence_value",
    "span_validity",
    "span_validity_batch",
    "split_sentences",
    "summarize_nli",
    "task_corpus",
    "truncate_words",
    "validity_summary",
]
