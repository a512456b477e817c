"""CONNER: six-perspective, reference-free evaluation of knowledge.

Stages, one sub-package each:

- ``acquire``: knowledge for the test items (NQ, WoW: ``citegraph.datasets.load_conner``),
  generated (:func:`generate_knowledge`, ``conner generate``: :class:`GenerateTask`) or retrieved
  (:class:`DenseRetriever`, ``conner retrieve``: :class:`RetrieveTask`);
- ``metrics``: intrinsic (:func:`factuality`, :func:`relevance`, :func:`sentence_coherence`,
  :func:`paragraph_coherence`, :func:`informativeness`) and extrinsic (:func:`helpfulness`,
  :func:`span_validity`, :func:`open_validity`) metrics; paper vs reference mode is one
  :class:`ConnerRules`;
- ``score``: all of them over a task's knowledge as a run (``conner score``: :class:`ScoreTask`);
- ``select``: knowledge quality (Eq. 9: :func:`knowledge_quality`, :func:`select_knowledge`) and
  ``conner select`` (:class:`SelectTask`);
- ``correlate``: meta-evaluation against human ratings (:func:`correlate`).

This face re-exports each stage's face whole (its ``__all__``), plus the shared records.
Importing this package registers its tasks (``conner.generate``, ``conner.retrieve``,
``conner.score``, ``conner.select``) with the engine, so ``citegraph runs report / merge`` work
on their runs.
"""

from citegraph.conner._types import METRICS, Knowledge, Metric, MetricValue, in_item_order
from citegraph.conner.acquire import *  # noqa: F403
from citegraph.conner.acquire import __all__ as _acquire_names
from citegraph.conner.correlate import *  # noqa: F403
from citegraph.conner.correlate import __all__ as _correlate_names
from citegraph.conner.metrics import *  # noqa: F403
from citegraph.conner.metrics import __all__ as _metrics_names
from citegraph.conner.score import *  # noqa: F403
from citegraph.conner.score import __all__ as _score_names
from citegraph.conner.select import *  # noqa: F403
from citegraph.conner.select import __all__ as _select_names
from citegraph.datasets import CONNER_TASKS, ConnerSample, ConnerTask

__all__ = [
    "CONNER_TASKS",
    "METRICS",
    "ConnerSample",
    "ConnerTask",
    "Knowledge",
    "Metric",
    "MetricValue",
    "in_item_order",
    *_acquire_names,
    *_correlate_names,
    *_metrics_names,
    *_score_names,
    *_select_names,
]
