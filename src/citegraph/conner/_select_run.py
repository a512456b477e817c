"""``conner select``: CONNER-guided knowledge selection (§5), as a resumable knowledge run.

For each item, ``r`` candidate knowledge texts are sampled from the same prompt (the paper:
r = 5, top-p 0.9; the demonstrations stay fixed, the sampling seed is ``seed + i``), each is
scored on the intrinsic metrics whose weight in γ is non-zero, and the candidate with the
highest ``Q_know = γ · [fact, rel, coh_para, info]`` (Eq. 9) is kept. The output directory is
itself a knowledge run (``conner score`` reads it), with the sub-runs beside it::

    out/candidates/c<i>/   generation runs (conner generate)
    out/scores/c<i>/       score runs of those candidates (conner score)
    out/samples.jsonl      the chosen knowledge, with its index, Q_know and every candidate's

Every step resumes: re-running the command finishes the sub-runs and re-selects.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citegraph.conner._acquire_run import (
    AcquireResult,
    ConnerGenerateConfig,
    finish_acquired,
    generate_run_async,
)
from citegraph.conner._knowledge_io import (
    KnowledgeInput,
    knowledge_record,
    load_task,
    read_knowledge,
)
from citegraph.conner._score_config import ConnerScoreConfig
from citegraph.conner._score_models import load_score_models
from citegraph.conner._score_run import score_knowledge_async
from citegraph.conner._score_summary import read_score_values
from citegraph.conner._selection import INTRINSIC_METRICS, select_knowledge
from citegraph.conner._types import ConnerSample, Knowledge, MetricValue
from citegraph.errors import ConfigError
from citegraph.io import atomic_write
from citegraph.runs import FAILED, SAMPLES_FILE, RunDir, canonical_json, given_or_loaded

__all__ = ["ConnerSelectConfig", "select_run", "select_run_async"]

#: Called as ``progress(done, total, step)``, ``step`` naming the current candidate and stage.
Progress = Callable[[int, int, str], None]


class ConnerSelectConfig(BaseModel):
    """How candidates are sampled and weighed; the generation and scoring options are the
    :class:`ConnerGenerateConfig` and :class:`ConnerScoreConfig` given beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidates: int = Field(default=5, ge=1, description="Candidates sampled per item (r).")
    weights: tuple[float, float, float, float] = Field(
        default=(1.0, 1.0, 1.0, 1.0),
        description="γ for factuality, relevance, coherence_para, informativeness "
        "(comma-separated; the paper does not give its values).",
    )
    missing: Literal["none", "renormalise"] = Field(
        default="none",
        description="A candidate missing a weighted metric: no quality (none), or the "
        "measured terms rescaled (renormalise).",
    )

    @field_validator("weights", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return tuple(float(w) for w in value.split(","))
            except ValueError as exc:
                raise ConfigError(f"weights must be 4 numbers like 1,1,0,1, got {value!r}") from exc
        return value


def _metrics(config: ConnerSelectConfig) -> tuple[str, ...]:
    return tuple(m for m, w in zip(INTRINSIC_METRICS, config.weights, strict=True) if w != 0)


def _check(
    config: ConnerSelectConfig, generate: ConnerGenerateConfig, score: ConnerScoreConfig
) -> None:
    if config.candidates > 1 and generate.temperature == 0:
        raise ConfigError(
            "greedy decoding gives the same candidate every time: sample with --temperature > 0 "
            "(the paper: top-p 0.9)"
        )
    if not _metrics(config):
        raise ConfigError("all weights are 0")
    weight_para = config.weights[INTRINSIC_METRICS.index("coherence_para")]
    if weight_para and score.paragraph is None and config.missing == "none":
        raise ConfigError(
            "coherence_para has weight but no --paragraph model: every quality would be "
            "missing; give --paragraph, weight 0 (e.g. --weights 1,1,0,1) or --missing "
            "renormalise"
        )


def select_run(out: str | Path, config: ConnerSelectConfig, **options: Any) -> AcquireResult:
    """Blocking form of :func:`select_run_async`."""
    return asyncio.run(select_run_async(out, config, **options))


async def select_run_async(
    out: str | Path,
    config: ConnerSelectConfig,
    *,
    generate: ConnerGenerateConfig,
    score: ConnerScoreConfig,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
    **models: Any,
) -> AcquireResult:
    """Sample, score and select knowledge into the run ``out`` (see the module docstring).

    Args:
        out: The run directory.
        config: Candidates, γ and the missing-metric rule.
        generate: How candidates are generated (its ``seed`` is the first candidate's).
        score: How candidates are scored (``knowledge`` and ``metrics`` are set here).
        data_dir: Where the CONNER test sets are.
        limit: The first N items only (can be raised later; resumes).
        overwrite: Replace a different run in ``out`` (the sub-runs too).
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total, step)`` callback.
        **models: ``model`` (a ready chat model) and ``score_models`` (ready
            :class:`~citegraph.conner.ScoreModels`), for tests and reuse.

    Raises:
        ConfigError: Greedy decoding with several candidates, all-zero γ, a weighted
            paragraph coherence without a model, or ``out`` holds a different run.
    """
    _check(config, generate, score)
    out = Path(out)
    identity = {
        "task_name": "conner.select",
        "select": config.model_dump(mode="json"),
        "generate": generate.model_dump(mode="json"),
        "score": score.model_dump(mode="json", exclude={"knowledge", "metrics"}),
    }
    RunDir.open(
        out, identity, command=command, overwrite=overwrite, runtime={"limit": limit}
    ).close()
    samples = load_task(generate.task, generate.split, data_dir)
    chosen = samples[:limit] if limit is not None else samples
    score = score.model_copy(
        update={"task": generate.task, "split": generate.split, "metrics": _metrics(config)}
    )
    common: dict[str, Any] = {
        "data_dir": data_dir,
        "limit": limit,
        "overwrite": overwrite,
        "command": command,
    }
    knowledge: list[dict[str, Knowledge | str]] = []
    values: list[dict[str, dict[str, MetricValue]]] = []
    # one set of scoring models for every candidate (loading, corpus embedding happen once)
    loading = functools.partial(load_score_models, score, samples)
    async with given_or_loaded(models.get("score_models"), loading) as score_models:
        for i in range(config.candidates):
            step = f"candidate {i + 1}/{config.candidates}"
            cand_dir = out / "candidates" / f"c{i}"
            await generate_run_async(
                cand_dir,
                generate.model_copy(update={"seed": generate.seed + i, "demo_seed": generate.seed}),
                model=models.get("model"),
                progress=_step(progress, f"{step}: generating"),
                **common,
            )
            score_dir = out / "scores" / f"c{i}"
            scored = score.model_copy(update={"knowledge": str(cand_dir)})
            await score_knowledge_async(
                score_dir,
                scored,
                models=score_models,
                progress=_step(progress, f"{step}: scoring"),
                **common,
            )
            knowledge.append(read_knowledge(str(cand_dir), chosen)[0])
            values.append(read_score_values(score_dir))
    atomic_write(
        out / SAMPLES_FILE,
        "".join(canonical_json(r) + "\n" for r in _choices(chosen, config, knowledge, values)),
    )
    with RunDir.open(out, identity, runtime={"limit": limit}) as run:
        return finish_acquired(run, chosen, n_resumed=0)


def _choices(
    samples: Sequence[ConnerSample],
    config: ConnerSelectConfig,
    knowledge: Sequence[KnowledgeInput],
    values: Sequence[dict[str, dict[str, MetricValue]]],
) -> list[dict[str, Any]]:
    """One record per item: the chosen candidate, or failed when no candidate has knowledge."""
    records: list[dict[str, Any]] = []
    for sample in samples:
        found = [
            (i, k)
            for i, per_run in enumerate(knowledge)
            if isinstance(k := per_run[sample.id], Knowledge)
        ]
        if not found:
            why = "; ".join(sorted({str(per_run[sample.id]) for per_run in knowledge}))
            records.append(
                {"id": sample.id, "status": FAILED, "text": None, "error": f"no candidate: {why}"}
            )
            continue
        scores = [
            {m: v for m, by_id in values[i].items() if (v := by_id.get(sample.id)) is not None}
            for i, _ in found
        ]
        [choice] = select_knowledge(
            [[k for _, k in found]], [scores], config.weights, missing=config.missing
        )
        records.append(
            knowledge_record(
                choice.knowledge,
                candidate=found[choice.index][0],
                quality=choice.quality,
                qualities={found[j][0]: q for j, q in enumerate(choice.qualities)},
                reason=choice.reason,
            )
        )
    return records


def _step(progress: Progress | None, step: str) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    return lambda done, total: progress(done, total, step)
