"""CAQA: attribution benchmarks built from a KG, and benchmarking attribution evaluators.

One folder per stage, each with its own face:

- :mod:`citegraph.caqa.queries` (§4.1): KGQA questions with logical queries (:func:`load_kgqa`,
  or :func:`sample_queries` from the KG) and their grounding (:class:`CaqaKG`);
- :mod:`citegraph.caqa.build` (§4.2): query extension (:func:`extend_query`) -> supportive /
  insufficient / contradictory / irrelevant subgraphs (:func:`structured_attributions`) -> text
  (``TemplateTextualiser``, ``LLMTextualiser``) -> splits; :func:`build_caqa` is the
  ``caqa.build`` task;
- :mod:`citegraph.caqa.judge` (§5-6): evaluators (:func:`evaluator`: LLM judges, NLI, AttrScore,
  fine-tuned classifiers) -> labels (:func:`extract_label`) -> :func:`evaluator_report`;
  :func:`judge_caqa` is the ``caqa.judge`` task; paper vs reference mode is :class:`CaqaRules`;
- :mod:`citegraph.caqa.finetune` (§5.2): :func:`finetune` an evaluator on a train split.

This face is the core a user calls; every other name is imported from its stage's face
(``from citegraph.caqa.build import TemplateTextualiser``).

================================================  ========================================
name                                              what it is
================================================  ========================================
build_caqa / build_caqa_async                     the caqa.build task: a benchmark
CaqaBuildConfig, CaqaBuildResult, CaqaBuildTask   its config, result and task
judge_caqa / judge_caqa_async                     the caqa.judge task: judge a split
CaqaJudgeConfig, CaqaJudgeResult, CaqaJudgeTask   its config, result and task
finetune, CaqaFinetuneConfig, CaqaFinetuneResult  fine-tune a classifier evaluator
CaqaRules                                         paper vs reference behaviour
evaluator, Evaluator, LLMJudge                    an evaluator from its spec; the protocol
Judgement, extract_label                          one verdict; a label from a reply
evaluator_report, EvaluatorReport, render_report  an evaluator's scores (Tables 5-6)
load_kgqa, sample_queries                         questions with logical queries
KGQASet, KGQASample, LogicalQuery, CaqaKG         their records; the KG they ground in
extend_query, structured_attributions             the building steps (§4.2)
AttributionSet                                    a query's four subgraphs
CaqaSample, StructuredAttribution, Fact           a benchmark sample and its parts
Category, CATEGORIES, Label                       the four attribution categories
BinaryLabel, to_binary                            the two-way view of them
Complexity, COMPLEXITIES                          a sample's query complexity
load_caqa_split, write_samples                    read and write a split
================================================  ========================================

Importing this package registers its tasks (``caqa.build``, ``caqa.judge``).
"""

from citegraph.caqa._samples_io import load_caqa_split, write_samples
from citegraph.caqa._types import (
    CATEGORIES,
    COMPLEXITIES,
    BinaryLabel,
    CaqaSample,
    Category,
    Complexity,
    Fact,
    Label,
    StructuredAttribution,
    to_binary,
)
from citegraph.caqa.build import (
    AttributionSet,
    CaqaBuildConfig,
    CaqaBuildResult,
    CaqaBuildTask,
    build_caqa,
    build_caqa_async,
    extend_query,
    structured_attributions,
)
from citegraph.caqa.finetune import CaqaFinetuneConfig, CaqaFinetuneResult, finetune
from citegraph.caqa.judge import (
    CaqaJudgeConfig,
    CaqaJudgeResult,
    CaqaJudgeTask,
    CaqaRules,
    Evaluator,
    EvaluatorReport,
    Judgement,
    LLMJudge,
    evaluator,
    evaluator_report,
    extract_label,
    judge_caqa,
    judge_caqa_async,
    render_report,
)
from citegraph.caqa.queries import (
    CaqaKG,
    KGQASample,
    KGQASet,
    LogicalQuery,
    load_kgqa,
    sample_queries,
)

__all__ = [
    "CATEGORIES",
    "COMPLEXITIES",
    "AttributionSet",
    "BinaryLabel",
    "CaqaBuildConfig",
    "CaqaBuildResult",
    "CaqaBuildTask",
    "CaqaFinetuneConfig",
    "CaqaFinetuneResult",
    "CaqaJudgeConfig",
    "CaqaJudgeResult",
    "CaqaJudgeTask",
    "CaqaKG",
    "CaqaRules",
    "CaqaSample",
    "Category",
    "Complexity",
    "Evaluator",
    "EvaluatorReport",
    "Fact",
    "Judgement",
    "KGQASample",
    "KGQASet",
    "LLMJudge",
    "Label",
    "LogicalQuery",
    "StructuredAttribution",
    "build_caqa",
    "build_caqa_async",
    "evaluator",
    "evaluator_report",
    "extend_query",
    "extract_label",
    "finetune",
    "judge_caqa",
    "judge_caqa_async",
    "load_caqa_split",
    "load_kgqa",
    "render_report",
    "sample_queries",
    "structured_attributions",
    "to_binary",
    "write_samples",
]
