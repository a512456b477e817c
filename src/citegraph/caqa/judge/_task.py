"""``caqa judge``: run an attribution evaluator over labelled samples and score it (§5-6).

Input: a CAQA split (``test.jsonl`` from ``caqa build``), any JSONL of :class:`CaqaSample`, or
``attributionbench`` (human binary labels). The output directory is a run directory:
``run.json`` (configuration, data hash, versions), ``samples.jsonl`` (one record per sample,
readable alone: question, answer statement, citation and its subgraph (the facts with their
labels), gold, prediction, the evaluator's raw reply, error, scores and, for a chat evaluator,
the reply's ``generation`` as ``kalma run`` records it: model, finish_reason, usage, cached,
attempts, latency_s and, for a local model's reply, ``batch_size``: how many prompts shared its
``generate`` call; none for a reply from the response cache), ``metrics.json`` (the
:class:`EvaluatorReport`: per-category and micro-F1, per-complexity F1, confusion matrix,
bootstrap intervals, agreement with human labels) and ``report.md``.

A sample whose evaluator call failed (server down, model error) is recorded as failed and is
tried again when the command is re-run; it is left out of the scores and counted. A reply the
evaluator gave but no label could be read from is *unparseable*: in paper mode it counts as a
wrong prediction, in reference mode it is dropped (as the authors' scripts do); both are counted.

The run is a task on the engine (:class:`CaqaJudgeTask`, ``caqa.judge``): samples are judged in
batches (``--batch-size``, default 8), ``--shard i/N`` judges a share of them, and the report
comes from the records and ``run.json`` alone, so ``citegraph runs merge`` of the shards (or
``runs report``) gives the numbers of one unsharded run.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.judge._data import read_samples
from citegraph.caqa.judge._evaluator import Evaluator, Judgement
from citegraph.caqa.judge._factory import evaluator as make_evaluator
from citegraph.caqa.judge._human import read_human_labels, with_human_labels
from citegraph.caqa.judge._llm import UNPARSEABLE
from citegraph.caqa.judge._render import render_report
from citegraph.caqa.judge._report import EvaluatorReport, records_report
from citegraph.caqa.judge._rules import CaqaRules
from citegraph.caqa.judge._view import CaqaJudgePresenter
from citegraph.errors import CitegraphError
from citegraph.io import ServerURL, atomic_write
from citegraph.metrics import BootstrapConfig
from citegraph.models import specs_identity
from citegraph.models.chat import JudgeReplies
from citegraph.runs import (
    FAILED,
    Presenter,
    Record,
    RunOutcome,
    Runtime,
    Task,
    TaskMetrics,
    TaskResult,
    blocking,
    given_or_loaded,
    recorded_config,
    register_task,
    run_task_async,
    sha256_file,
)


class CaqaJudgeConfig(BaseModel):
    """What a judge run does; written verbatim into ``run.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: str = Field(description="Samples: a JSONL path, or 'attributionbench'.")
    evaluator: str = Field(
        description="Evaluator spec: a chat model (openai/gpt-4o, local, mock, hf/<path>), "
        "nli/<nli spec>, attrscore/<chat spec> or cls/<fine-tuned classifier path>."
    )
    prompt: str = Field(default="zero-shot", description="Judge prompt name (Table 11).")
    extraction: Literal["paper", "reference"] = Field(
        default="paper",
        description="Label extraction and scoring: citegraph's (negation, several labels, "
        "unparseable = wrong) or the authors' (first regex match, unparseable dropped).",
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Judge temperature.")
    seed: int = Field(default=0, description="Judge sampling seed and bootstrap seed.")
    max_tokens: int = Field(default=128, ge=1, description="Most tokens per judge reply.")
    structured: bool = Field(
        default=False, description="Ask the server for JSON {label} (OpenAI json_schema)."
    )
    nli_direction: Literal["paper", "evidence"] = Field(
        default="paper",
        description="NLI evaluators: premise = claim (paper, Table 11) or = citation (evidence).",
    )
    base_url: ServerURL | None = Field(default=None, description="Server URL of a chat evaluator.")
    human: str | None = Field(
        default=None,
        description="Human labels (CSV id,label or JSONL) for agreement with the automatic "
        "labels (Cohen's kappa) and scores on human labels (§6.3).",
    )
    labels: Literal["auto", "binary"] = Field(
        default="auto",
        description="Scoring labels: the evaluator's own (binary when the gold is, as on "
        "AttributionBench), or 'binary': gold and predictions collapsed to supportive / "
        "unsupported (AutoIS-style comparison of any evaluator).",
    )
    bootstrap: int = Field(default=1000, ge=0, description="Bootstrap resamples (0: none).")
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0, description="Interval level.")
    judge_replies: JudgeReplies = Field(
        default="auto",
        description="Chat judges' replies: 'free' (the paper's setting), 'constrained' (exactly "
        "one label word, by grammar) or 'auto' (constrained for local and hf/ models).",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields, ``judge_replies`` only when constrained (the run records the resolved
        mode), so free runs keep the run ids they had before the field existed."""
        out: dict[str, Any] = handler(self)
        if out.get("judge_replies") in ("auto", "free"):
            out.pop("judge_replies")
        return out


class CaqaJudgeResult(TaskResult):
    """What :func:`judge_caqa` produced."""

    report: EvaluatorReport = Field(description="The report in ``metrics``, as read back.")
    n_samples: int = Field(description="Samples of this call (after limit and shard).")

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """The report and the samples of the call."""
        report = EvaluatorReport.from_metrics(outcome.metrics)
        return {"report": report, "n_samples": len(outcome.items)}


def _record(sample: CaqaSample, judgement: Judgement) -> dict[str, Any]:
    """One judged sample, readable alone: what was judged (question, answer statement,
    citation, its subgraph), the gold label and the evaluator's verdict and reply (with a chat
    judge's ``generation``)."""
    failed = judgement.label is None and judgement.error not in (None, UNPARSEABLE)
    record: dict[str, Any] = {
        "id": sample.id,
        "status": FAILED if failed else "ok",
        "question": sample.question,
        "answer": sample.answer,
        "citation": sample.citation,
        "gold": sample.label,
        "complexity": sample.complexity,
        "source": sample.source,
        "predicted": judgement.label,
        "raw": judgement.raw,
        "error": judgement.error,
    }
    if judgement.error_type is not None:  # a failed model: the exit status is read from it
        record["error_type"] = judgement.error_type
    if sample.attribution is not None:
        record["subgraph"] = sample.attribution.fact_rows()
    if judgement.scores is not None:
        record["scores"] = judgement.scores
    if judgement.generation is not None:  # a chat judge's reply: as kalma run records it
        record["generation"] = judgement.generation
    if sample.human_label is not None:
        record["human"] = sample.human_label
    return record


@register_task
class CaqaJudgeTask(Task[CaqaSample, Evaluator]):
    """``caqa judge`` on the engine: one item per sample, judged in batches; its record the gold
    label, the prediction and the evaluator's reply.

    Args:
        config: What to run.
        data_dir: Where the datasets are (for ``attributionbench``).
        evaluator: A ready evaluator instead of building one from ``config.evaluator`` (not
            closed here).
    """

    name = "caqa.judge"
    gate_metrics = TaskMetrics(
        fractions=("micro_f1", "macro_f1"),
        others=(
            "n", "n_scored", "n_correct", "n_dropped", "n_unparseable", "n_without_complexity",
            "n_errors", "n_failed", "micro_f1_ci", "macro_f1_ci", "per_label", "per_complexity",
            "confusion", "human", "bootstrap",
        ),
        inner=("precision", "recall", "f1"),
    )  # fmt: skip
    model_role = "evaluator"
    batch_size = 8
    presenter: ClassVar[type[Presenter]] = CaqaJudgePresenter
    config: CaqaJudgeConfig

    def __init__(
        self,
        config: CaqaJudgeConfig,
        *,
        data_dir: str | Path | None = None,
        evaluator: Evaluator | None = None,
    ) -> None:
        self.config = config
        self.rules = CaqaRules.for_mode(config.extraction)
        self.data_dir = data_dir
        self.evaluator = evaluator
        self._inputs: tuple[list[CaqaSample], dict[str, str]] | None = None

    def _read(self) -> tuple[list[CaqaSample], dict[str, str]]:
        if self._inputs is None:
            config = self.config
            samples, data_hash = read_samples(config.data, data_dir=self.data_dir)
            data = {"samples": data_hash}
            if config.human is not None:
                human = read_human_labels(config.human)
                samples = with_human_labels(samples, human, source=config.human)
                data["human"] = sha256_file(config.human)
            self._inputs = samples, data
        return self._inputs

    def items(self) -> list[tuple[str, CaqaSample]]:
        """The samples of ``config.data`` (with their human labels), in file order."""
        return [(s.id, s) for s in self._read()[0]]

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[Evaluator]:
        """The given evaluator, or the one ``config.evaluator`` names (closed afterwards)."""
        config = self.config

        def load() -> Evaluator:
            return make_evaluator(
                config.evaluator,
                runtime.model_options(),
                prompt=config.prompt,
                extraction=self.rules,
                temperature=config.temperature,
                seed=config.seed,
                max_tokens=config.max_tokens,
                structured=config.structured,
                direction=config.nli_direction,
                base_url=config.base_url,
                cache=runtime.cache,
                concurrency=runtime.concurrency,
                device=runtime.device,
                dtype=runtime.dtype,
                replies=config.judge_replies,
            )

        return given_or_loaded(self.evaluator, load)

    def run_config(self, models: Evaluator) -> dict[str, Any]:
        """The config, the task, and the evaluator's name and label set; with constrained
        replies, ``judge_replies: constrained`` and the grammar's name (so ``auto`` is recorded
        resolved, and free runs keep their ids)."""
        recorded = specs_identity(self.config.model_dump(mode="json"), {"evaluator": "evaluator"})
        recorded |= {
            "task": self.name,
            "evaluator_name": models.name,
            "label_set": models.label_set,
        }
        recorded.pop("judge_replies", None)
        grammar = getattr(models, "grammar", None)
        if grammar is not None:
            recorded |= {"judge_replies": "constrained", "judge_grammar": grammar.name}
        return recorded

    def run_data(self, models: Evaluator) -> dict[str, str]:
        """SHA-256 of the samples file (and of the human labels)."""
        return self._read()[1]

    def concurrency(self, models: Evaluator, runtime: Runtime) -> int:
        """Batches in flight: the runtime's, else the chat model's request limit, else 1."""
        return runtime.concurrency_for(models, 1)

    def prepare_ahead(self, models: Evaluator) -> bool:
        """True for an LLM judge on a served model (it bounds its own requests): the next
        samples' prompts are built while the replies are awaited."""
        return getattr(getattr(models, "model", None), "concurrency", None) is not None

    async def work(self, batch: Sequence[CaqaSample], models: Evaluator) -> list[Record]:
        """One evaluator call per batch; a failed call's samples are recorded as failed."""
        judgements = await models.judge(batch)
        return [_record(s, j) for s, j in zip(batch, judgements, strict=True)]

    def metrics(
        self, records: Sequence[Record], info: dict[str, Any], models: Evaluator
    ) -> dict[str, Any]:
        """The report of the records, which are in item order already."""
        return _report_metrics(records, info)

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        """The report (:class:`EvaluatorReport`) plus the failed count and the setup.

        The bootstrap resamples samples in their order in the data file, so the records are put
        in that order first when the file named in ``run.json`` is at hand and unchanged;
        otherwise they are taken as ``samples.jsonl`` lists them.
        """
        return _report_metrics(_in_data_order(records, info), info)

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """``report.md``: the report as Markdown."""
        report = EvaluatorReport.from_metrics(metrics)
        atomic_write(path / "report.md", render_report(report, fmt="markdown"))


def _report_metrics(records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
    config = recorded_config(CaqaJudgeConfig, info)
    name, label_set = info["config"]["evaluator_name"], info["config"]["label_set"]
    bootstrap = None
    if config.bootstrap:
        bootstrap = BootstrapConfig(
            n_resamples=config.bootstrap, confidence=config.confidence, seed=config.seed
        )
    report = records_report(
        records,
        label_set=label_set,
        labels=config.labels,
        mode=CaqaRules.for_mode(config.extraction),
        bootstrap=bootstrap,
        name=name,
    )
    n_judged = sum(1 for r in records if r.get("status") != FAILED)
    return report.model_dump(mode="json") | {
        "n_failed": len(records) - n_judged,
        "failed_note": "evaluator calls that failed (left out of every score; re-run to retry)",
        "setup": {
            "evaluator": name,
            "label_set": label_set,
            "prompt": config.prompt,
            "extraction": config.extraction,
            "temperature": config.temperature,
            "data": config.data,
        }
        | _replies_setup(info),
    }


def _replies_setup(info: dict[str, Any]) -> dict[str, Any]:
    """``judge_replies`` and ``judge_grammar`` of a constrained run (free runs: nothing, so
    their metrics keep the keys they had)."""
    recorded = info["config"]
    if recorded.get("judge_replies", "free") == "free":
        return {}
    return {
        "judge_replies": recorded["judge_replies"],
        "judge_grammar": recorded.get("judge_grammar"),
    }


def _in_data_order(records: Sequence[Record], info: dict[str, Any]) -> list[Record]:
    data = info["config"]["data"]
    try:
        samples, data_hash = read_samples(data)
    except CitegraphError:
        return list(records)
    if data_hash != info.get("data", {}).get("samples"):
        return list(records)
    position = {s.id: k for k, s in enumerate(samples)}
    return sorted(records, key=lambda r: position.get(str(r.get("id")), len(position)))


async def judge_caqa_async(
    out: str | Path,
    config: CaqaJudgeConfig,
    *,
    data_dir: str | Path | None = None,
    evaluator: Evaluator | None = None,
    runtime: Runtime | None = None,
) -> CaqaJudgeResult:
    """Judge the samples of ``config.data`` with ``config.evaluator`` into ``out``.

    Args:
        out: The run directory.
        config: What to run.
        data_dir: Where the datasets are (for ``attributionbench``).
        evaluator: A ready evaluator instead of building one from ``config.evaluator``.
        runtime: limit (the first N samples; can be raised later), shard, batch size (samples
            per evaluator call, default 8: NLI and classifier models batch them), concurrency
            (batches in flight; default: the chat model's request limit, else 1), cache (the
            response cache of chat evaluators), overwrite, command, progress.

    Raises:
        ConfigError: bad options, or ``out`` holds another run.
        DataError, DataNotFoundError: the samples or human labels cannot be read.
    """
    task = CaqaJudgeTask(config, data_dir=data_dir, evaluator=evaluator)
    return CaqaJudgeResult.of(await run_task_async(task, out, runtime))


judge_caqa = blocking(judge_caqa_async)
