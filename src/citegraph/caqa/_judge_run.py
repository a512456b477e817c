"""``caqa judge``: run an attribution evaluator over labelled samples and score it (§5-6).

Input: a CAQA split (``test.jsonl`` from ``caqa build``), any JSONL of :class:`CaqaSample`, or
``attributionbench`` (human binary labels). The output directory is a run directory:
``run.json`` (configuration, data hash, versions), ``samples.jsonl`` (one record per sample:
gold, prediction, the evaluator's raw reply, error, scores), ``metrics.json`` (the
:class:`EvaluatorReport`: per-category and micro-F1, per-complexity F1, confusion matrix,
bootstrap intervals, agreement with human labels) and ``report.md``.

A sample whose evaluator call failed (server down, model error) is recorded as failed and is
tried again when the command is re-run; it is left out of the scores and counted. A reply the
evaluator gave but no label could be read from is *unparseable*: in paper mode it counts as a
wrong prediction, in reference mode it is dropped (as the authors' scripts do); both are counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._evaluator import Evaluator, Judgement
from citegraph.caqa._evaluator_llm import UNPARSEABLE
from citegraph.caqa._human import read_human_labels, with_human_labels
from citegraph.caqa._judge_data import read_samples
from citegraph.caqa._report import EvaluatorReport, evaluator_report
from citegraph.caqa._report_render import render_report
from citegraph.caqa._types import CaqaSample, to_binary
from citegraph.io import atomic_write
from citegraph.metrics import BootstrapConfig
from citegraph.runs import FAILED, RunDir, run_pending_batches, sha256_file

Progress = Callable[[int, int], None]


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
    base_url: str | None = Field(default=None, description="Server URL of a chat evaluator.")
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


class CaqaJudgeResult(BaseModel):
    """What :func:`judge_caqa` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    out: Path
    report: EvaluatorReport
    n_samples: int
    n_failed: int
    n_resumed: int


def judge_caqa(out: str | Path, config: CaqaJudgeConfig, **options: Any) -> CaqaJudgeResult:
    """Blocking form of :func:`judge_caqa_async`."""
    return asyncio.run(judge_caqa_async(out, config, **options))


def _record(sample: CaqaSample, judgement: Judgement) -> dict[str, Any]:
    failed = judgement.label is None and judgement.error not in (None, UNPARSEABLE)
    record: dict[str, Any] = {
        "id": sample.id,
        "status": FAILED if failed else "ok",
        "gold": sample.label,
        "complexity": sample.complexity,
        "source": sample.source,
        "predicted": judgement.label,
        "raw": judgement.raw,
        "error": judgement.error,
    }
    if judgement.scores is not None:
        record["scores"] = judgement.scores
    if sample.human_label is not None:
        record["human"] = sample.human_label
    return record


async def judge_caqa_async(
    out: str | Path,
    config: CaqaJudgeConfig,
    *,
    data_dir: str | Path | None = None,
    evaluator: Evaluator | None = None,
    limit: int | None = None,
    batch_size: int = 8,
    concurrency: int | None = None,
    cache: bool = True,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> CaqaJudgeResult:
    """Judge the samples of ``config.data`` with ``config.evaluator`` into ``out``.

    Args:
        out: The run directory.
        config: What to run.
        data_dir: Where the datasets are (for ``attributionbench``).
        evaluator: A ready evaluator instead of building one from ``config.evaluator``.
        limit: Judge the first N samples only (can be raised later; resumes).
        batch_size: Samples per evaluator call (NLI and classifier models batch them).
        concurrency: Batches in flight (default: the chat model's request limit, else 1).
        cache: Use the SQLite response cache for chat evaluators.
        overwrite: Replace a different run in ``out``.
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total)`` callback.
    """
    from citegraph.caqa._evaluators import evaluator as make_evaluator

    samples, data_hash = read_samples(config.data, data_dir=data_dir)
    data = {"samples": data_hash}
    if config.human is not None:
        samples = with_human_labels(samples, read_human_labels(config.human), source=config.human)
        data["human"] = sha256_file(config.human)
    if limit is not None:
        samples = samples[:limit]
    given = evaluator
    evaluator = evaluator or make_evaluator(
        config.evaluator,
        prompt=config.prompt,
        extraction=config.extraction,
        temperature=config.temperature,
        seed=config.seed,
        max_tokens=config.max_tokens,
        structured=config.structured,
        direction=config.nli_direction,
        base_url=config.base_url,
        cache=cache,
        concurrency=concurrency,
    )
    identity = config.model_dump(mode="json") | {
        "task": "caqa.judge",
        "evaluator_name": evaluator.name,
        "label_set": evaluator.label_set,
    }
    run = RunDir.open(
        out,
        identity,
        data=data,
        command=command,
        overwrite=overwrite,
        runtime={"limit": limit, "batch_size": batch_size, "concurrency": concurrency},
    )
    in_flight = concurrency or int(getattr(evaluator, "concurrency", 0) or 1)
    try:

        async def work(batch: Sequence[CaqaSample]) -> list[dict[str, Any]]:
            judgements = await evaluator.judge(batch)
            return [_record(s, j) for s, j in zip(batch, judgements, strict=True)]

        n_resumed, _ = await run_pending_batches(
            run,
            [(s.id, s) for s in samples],
            work,
            batch_size=batch_size,
            concurrency=in_flight,
            progress=progress,
        )
    finally:
        run.close()
        if given is None:
            await evaluator.aclose()
    wanted = {s.id for s in samples}
    records = [r for r in run.records if r["id"] in wanted]
    judged = [r for r in records if r.get("status") != FAILED]
    binary = config.labels == "binary"

    def scored(label: Any) -> Any:
        return to_binary(label) if binary and label is not None else label

    report = evaluator_report(
        [scored(r["gold"]) for r in judged],
        [scored(r["predicted"]) for r in judged],
        complexities=[r.get("complexity") for r in judged],
        label_set="binary" if binary else evaluator.label_set,
        mode=config.extraction,
        bootstrap=BootstrapConfig(
            n_resamples=config.bootstrap, confidence=config.confidence, seed=config.seed
        )
        if config.bootstrap
        else None,
        human=[scored(r.get("human")) for r in judged]
        if any("human" in r for r in judged)
        else None,
        errors=[r.get("error") for r in judged],
        name=evaluator.name,
    )
    n_failed = len(records) - len(judged)
    metrics = report.model_dump(mode="json") | {
        "n_failed": n_failed,
        "failed_note": "evaluator calls that failed (left out of every score; re-run to retry)",
        "setup": {
            "evaluator": evaluator.name,
            "label_set": evaluator.label_set,
            "prompt": config.prompt,
            "extraction": config.extraction,
            "temperature": config.temperature,
            "data": config.data,
        },
    }
    run.write_metrics(metrics)
    atomic_write(Path(out) / "report.md", render_report(report, fmt="markdown"))
    return CaqaJudgeResult(
        out=Path(out), report=report, n_samples=len(samples), n_failed=n_failed, n_resumed=n_resumed
    )
