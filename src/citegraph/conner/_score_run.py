"""``conner score``: the six perspectives over one task's knowledge, as a resumable run.

Input: the knowledge of each test item (``gold``, a knowledge run directory or a JSONL file, see
:func:`~citegraph.conner.read_knowledge`). Output, a run directory: ``run.json``
(configuration, input hashes, versions), ``samples.jsonl`` (per item: the knowledge's source,
each metric's :class:`MetricValue` and, with an answer model, the answer) and ``metrics.json``
(per metric: mean, how many were unmeasured and why, the models; factuality and validity as the
paper's three-way label shares; and ``notes`` on every stand-in model).

Items are scored in batches (each LM, NLI and embedding call takes the whole batch) and each
batch's records are written at once, so an interrupted run resumes where it stopped. An item
whose answer-model call failed is recorded as failed and tried again on resume. Helpfulness
draws its ``u`` negatives from the knowledge of *all* the task's items (seeded per item), so the
values do not depend on ``limit`` or on batching.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from citegraph.conner._knowledge_io import KnowledgeInput, load_task, read_knowledge
from citegraph.conner._score_config import ConnerScoreConfig, model_notes
from citegraph.conner._score_models import ScoreModels, load_score_models
from citegraph.conner._score_summary import score_summary
from citegraph.conner._score_work import score_batch
from citegraph.conner._types import ConnerSample
from citegraph.runs import FAILED, RunDir, given_or_loaded, run_pending_batches

__all__ = ["ConnerScoreResult", "score_knowledge", "score_knowledge_async"]

Progress = Callable[[int, int], None]


class ConnerScoreResult(BaseModel):
    """What :func:`score_knowledge` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_samples: int
    n_failed: int
    n_resumed: int


def score_knowledge(
    out: str | Path, config: ConnerScoreConfig, **options: Any
) -> ConnerScoreResult:
    """Blocking form of :func:`score_knowledge_async`."""
    return asyncio.run(score_knowledge_async(out, config, **options))


async def score_knowledge_async(
    out: str | Path,
    config: ConnerScoreConfig,
    *,
    data_dir: str | Path | None = None,
    models: ScoreModels | None = None,
    limit: int | None = None,
    batch_size: int = 16,
    cache: bool = True,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> ConnerScoreResult:
    """Score the knowledge ``config.knowledge`` for ``config.task`` into the run ``out``.

    Args:
        out: The run directory.
        config: What to compute.
        data_dir: Where the CONNER test sets are.
        models: Ready models instead of loading those ``config`` names (tests, reuse).
        limit: Score the first N items only (can be raised later; resumes).
        batch_size: Items per model call.
        cache: Use the response cache for the answer model.
        overwrite: Replace a different run in ``out``.
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total)`` callback.

    Raises:
        ConfigError: Bad options (e.g. retrieved evidence without a corpus), or ``out`` holds a
            different run.
        DataError, DataNotFoundError: Bad or missing knowledge or corpus files.
        MissingDependency, ModelError: A model cannot be loaded.
    """
    started = time.perf_counter()
    samples = load_task(config.task, config.split, data_dir)
    inputs, knowledge_hash = read_knowledge(config.knowledge, samples)
    chosen = samples[:limit] if limit is not None else samples
    loading = functools.partial(load_score_models, config, samples, cache=cache)
    async with given_or_loaded(models, loading) as models:
        identity = config.model_dump(mode="json") | {"task_name": "conner.score"}
        identity["models"] = models.names()
        run = RunDir.open(
            out,
            identity,
            data={"knowledge": knowledge_hash, **models.data_hashes},
            command=command,
            overwrite=overwrite,
            runtime={"limit": limit, "batch_size": batch_size},
        )
        try:

            async def work(batch: Sequence[ConnerSample]) -> list[dict[str, Any]]:
                return await score_batch(batch, inputs, samples, models, config)

            n_resumed, _ = await run_pending_batches(
                run,
                [(s.id, s) for s in chosen],
                work,
                batch_size=batch_size,
                concurrency=1,
                progress=progress,
            )
        finally:
            run.close()
    wanted = {s.id for s in chosen}
    records = [r for r in run.records if r["id"] in wanted]
    metrics = score_summary(records, config) | {
        "setup": {"models": models.names(), "notes": model_notes(config)},
        "n_knowledge_missing": _n_missing(inputs, chosen),
        "seconds": round(time.perf_counter() - started, 1),
    }
    run.write_metrics(metrics)
    n_failed = sum(1 for r in records if r.get("status") == FAILED)
    return ConnerScoreResult(
        out=Path(out),
        metrics=metrics,
        n_samples=len(chosen),
        n_failed=n_failed,
        n_resumed=n_resumed,
    )


def _n_missing(inputs: KnowledgeInput, samples: Sequence[ConnerSample]) -> int:
    return sum(1 for s in samples if isinstance(inputs[s.id], str))
