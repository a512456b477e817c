"""Benchmarking attribution evaluators (§5-6): evaluators, label extraction, reports;
:func:`judge_caqa` runs one evaluator over labelled samples as the ``caqa.judge`` task.

Evaluators (:func:`evaluator`: :class:`LLMJudge` with the Table 11 prompts,
:class:`AttrScoreJudge`, :class:`NLIJudge`, and fine-tuned classifiers) -> labels
(:func:`extract_label`) -> :func:`evaluator_report` (Tables 5-7, agreement with human labels) ->
:func:`render_report`, :func:`compare_runs`. Paper vs reference mode: :class:`CaqaRules`.
"""

from citegraph.caqa._types import BINARY_LABELS
from citegraph.caqa.judge._attributionbench import (
    ATTRIBUTIONBENCH_FILE,
    attributionbench_path,
    load_attributionbench,
)
from citegraph.caqa.judge._compare import (
    EvaluatorCorrelation,
    compare_runs,
    load_report,
    pearson_across_evaluators,
    render_comparison,
)
from citegraph.caqa.judge._data import read_samples
from citegraph.caqa.judge._evaluator import Evaluator, Judgement, LabelSet
from citegraph.caqa.judge._factory import evaluator
from citegraph.caqa.judge._human import read_human_labels, with_human_labels
from citegraph.caqa.judge._labels import ExtractionMode, extract_label
from citegraph.caqa.judge._llm import (
    LABEL_GRAMMAR,
    UNPARSEABLE,
    AttrScoreJudge,
    LLMJudge,
    label_grammar,
)
from citegraph.caqa.judge._nli import NLIJudge
from citegraph.caqa.judge._prompts import (
    alpaca_text,
    chat_messages,
    claim_of,
    judge_prompt,
    judge_prompt_names,
    nli_texts,
    prompt_label_set,
    prompt_version,
)
from citegraph.caqa.judge._render import render_report
from citegraph.caqa.judge._report import (
    ComplexityScore,
    EvaluatorReport,
    HumanAgreement,
    ReportMode,
    evaluator_report,
)
from citegraph.caqa.judge._rules import CaqaRules
from citegraph.caqa.judge._task import (
    CaqaJudgeConfig,
    CaqaJudgeResult,
    CaqaJudgeTask,
    judge_caqa,
    judge_caqa_async,
)

__all__ = [
    "ATTRIBUTIONBENCH_FILE",
    "BINARY_LABELS",
    "LABEL_GRAMMAR",
    "UNPARSEABLE",
    "AttrScoreJudge",
    "CaqaJudgeConfig",
    "CaqaJudgeResult",
    "CaqaJudgeTask",
    "CaqaRules",
    "ComplexityScore",
    "Evaluator",
    "EvaluatorCorrelation",
    "EvaluatorReport",
    "ExtractionMode",
    "HumanAgreement",
    "Judgement",
    "LLMJudge",
    "LabelSet",
    "NLIJudge",
    "ReportMode",
    "alpaca_text",
    "attributionbench_path",
    "chat_messages",
    "claim_of",
    "compare_runs",
    "evaluator",
    "evaluator_report",
    "extract_label",
    "judge_caqa",
    "judge_caqa_async",
    "judge_prompt",
    "judge_prompt_names",
    "label_grammar",
    "load_attributionbench",
    "load_report",
    "nli_texts",
    "pearson_across_evaluators",
    "prompt_label_set",
    "prompt_version",
    "read_human_labels",
    "read_samples",
    "render_comparison",
    "render_report",
    "with_human_labels",
]
