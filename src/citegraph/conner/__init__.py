"""CONNER: six-perspective, reference-free evaluation of knowledge.

Stages, one sub-package each, each with its own face:

- ``acquire``: knowledge for the test items (NQ, WoW: ``citegraph.datasets.load_conner``),
  generated (``conner generate``: :func:`generate_run`) or retrieved (``conner retrieve``:
  :func:`retrieve_run`, with ``DenseRetriever``);
- ``metrics``: intrinsic (:func:`factuality`, :func:`relevance`, :func:`sentence_coherence`,
  :func:`paragraph_coherence`, :func:`informativeness`) and extrinsic (:func:`helpfulness`,
  :func:`span_validity`, :func:`open_validity`) metrics; paper vs reference mode is one
  :class:`ConnerRules`;
- ``score``: all of them over a task's knowledge as a run (``conner score``:
  :func:`score_knowledge`);
- ``select``: knowledge quality (Eq. 9: :func:`knowledge_quality`, :func:`select_knowledge`) and
  ``conner select`` (:func:`select_run`);
- ``correlate``: meta-evaluation against human ratings (:func:`correlate`).

This face is the core a user calls; every other name is imported from its stage's face
(``from citegraph.conner.acquire import generate_knowledge``).

=====================================================  ====================================
name                                                   what it is
=====================================================  ====================================
generate_run / generate_run_async                      the conner.generate task
ConnerGenerateConfig, ConnerGenerateTask               its config and task
retrieve_run / retrieve_run_async                      the conner.retrieve task
ConnerRetrieveConfig, ConnerRetrieveTask               its config and task
ConnerKnowledgeResult                                  what those two and select return
score_knowledge / score_knowledge_async                the conner.score task: every metric
ConnerScoreConfig, ConnerScoreResult, ConnerScoreTask  its config, result and task
select_run / select_run_async                          the conner.select task (Eq. 9)
ConnerSelectConfig, ConnerSelectTask                   its config and task
knowledge_quality, select_knowledge                    Eq. 9 on scored knowledge
correlate, correlate_runs, Correlation                 agreement with human ratings
factuality / factuality_async                          factuality of one knowledge text
relevance / relevance_async                            relevance to the query
sentence_coherence / sentence_coherence_async          coherence between sentences
paragraph_coherence / paragraph_coherence_async        coherence of the paragraph
informativeness / informativeness_async                novelty for the model
helpfulness / helpfulness_async                        gain on the downstream answer
span_validity / span_validity_async                    answer validity (span tasks)
open_validity / open_validity_async                    answer validity (open tasks)
ConnerRules, Mode                                      paper vs reference behaviour
Knowledge, MetricValue                                 a knowledge text; one metric's value
Metric, METRICS                                        the metric names
ConnerSample, ConnerTask, CONNER_TASKS                 a test item; the two test sets
=====================================================  ====================================

Importing this package registers its tasks (``conner.generate``, ``conner.retrieve``,
``conner.score``, ``conner.select``) with the engine, so ``citegraph runs report / merge`` work
on their runs.
"""

from citegraph.conner._types import METRICS, Knowledge, Metric, MetricValue
from citegraph.conner.acquire import (
    ConnerGenerateConfig,
    ConnerGenerateTask,
    ConnerKnowledgeResult,
    ConnerRetrieveConfig,
    ConnerRetrieveTask,
    generate_run,
    generate_run_async,
    retrieve_run,
    retrieve_run_async,
)
from citegraph.conner.correlate import Correlation, correlate, correlate_runs
from citegraph.conner.metrics import (
    ConnerRules,
    Mode,
    factuality,
    factuality_async,
    helpfulness,
    helpfulness_async,
    informativeness,
    informativeness_async,
    open_validity,
    open_validity_async,
    paragraph_coherence,
    paragraph_coherence_async,
    relevance,
    relevance_async,
    sentence_coherence,
    sentence_coherence_async,
    span_validity,
    span_validity_async,
)
from citegraph.conner.score import (
    ConnerScoreConfig,
    ConnerScoreResult,
    ConnerScoreTask,
    score_knowledge,
    score_knowledge_async,
)
from citegraph.conner.select import (
    ConnerSelectConfig,
    ConnerSelectTask,
    knowledge_quality,
    select_knowledge,
    select_run,
    select_run_async,
)
from citegraph.datasets import CONNER_TASKS, ConnerSample, ConnerTask

__all__ = [
    "CONNER_TASKS",
    "METRICS",
    "ConnerGenerateConfig",
    "ConnerGenerateTask",
    "ConnerKnowledgeResult",
    "ConnerRetrieveConfig",
    "ConnerRetrieveTask",
    "ConnerRules",
    "ConnerSample",
    "ConnerScoreConfig",
    "ConnerScoreResult",
    "ConnerScoreTask",
    "ConnerSelectConfig",
    "ConnerSelectTask",
    "ConnerTask",
    "Correlation",
    "Knowledge",
    "Metric",
    "MetricValue",
    "Mode",
    "correlate",
    "correlate_runs",
    "factuality",
    "factuality_async",
    "generate_run",
    "generate_run_async",
    "helpfulness",
    "helpfulness_async",
    "informativeness",
    "informativeness_async",
    "knowledge_quality",
    "open_validity",
    "open_validity_async",
    "paragraph_coherence",
    "paragraph_coherence_async",
    "relevance",
    "relevance_async",
    "retrieve_run",
    "retrieve_run_async",
    "score_knowledge",
    "score_knowledge_async",
    "select_knowledge",
    "select_run",
    "select_run_async",
    "sentence_coherence",
    "sentence_coherence_async",
    "span_validity",
    "span_validity_async",
]
