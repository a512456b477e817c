"""``conner select``: CONNER-guided knowledge selection (§5), composed of engine runs.

For each item, ``r`` candidate knowledge texts are sampled from the same prompt (the paper:
r = 5, top-p 0.9; the demonstrations stay fixed, the sampling seed is ``seed + i``), each is
scored on the intrinsic metrics whose weight in γ is non-zero, and the candidate with the
highest ``Q_know = γ · [fact, rel, coh_para, info]`` (Eq. 9) is kept. The output directory is
itself a knowledge run (``conner score`` reads it), with the sub-runs beside it::

    out/candidates/c<i>/   generation runs (conner.generate)
    out/scores/c<i>/       score runs of those candidates (conner.score)
    out/samples.jsonl      the chosen knowledge, with its index, Q_know and every candidate's

Every step resumes: re-running the command finishes the sub-runs (a candidate whose generation
failed is generated again, and the candidates' scores are recomputed when their knowledge
changed) and selects again from all of them (:class:`ConnerSelectTask`, a quick step from the
sub-runs' records). ``limit`` and ``shard`` apply to every step, so each machine's ``out`` holds
its share; ``runs merge`` joins the selections. A candidate whose generation failed is left out
of the choice; an item with no candidate is recorded as failed, with the reasons and the
``error_type`` of the first candidate's failure (the exit status is read from it). The values that
decide do not depend on the batch or shard: the intrinsic metrics are per item and paragraph
coherence enters Eq. 9 raw (choose γ for its scale).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, NamedTuple

from citegraph.conner._types import Knowledge, MetricValue
from citegraph.conner.acquire import (
    ConnerGenerateConfig,
    ConnerGenerateTask,
    ConnerKnowledgeResult,
    ConnerKnowledgeTask,
    KnowledgeInput,
    cached_chat,
    knowledge_error_types,
    knowledge_record,
    read_knowledge,
)
from citegraph.conner.score import (
    ConnerScoreConfig,
    ConnerScoreTask,
    ScoreModels,
    load_score_models,
    read_score_values,
)
from citegraph.conner.select._config import ConnerSelectConfig, check_select, scored_metrics
from citegraph.conner.select._selection import select_knowledge
from citegraph.datasets import ConnerSample
from citegraph.io import atomic_write, canonical_json
from citegraph.models import ChatModel
from citegraph.runs import (
    FAILED,
    SAMPLES_FILE,
    DryRunFinished,
    DryRunReport,
    Record,
    RunDir,
    Runtime,
    blocking,
    given_or_loaded,
    opened,
    register_task,
    run_task_async,
)

__all__ = ["Candidate", "ConnerSelectTask", "select_run", "select_run_async"]


class Candidate(NamedTuple):
    """One candidate's sub-runs as selection reads them."""

    knowledge: KnowledgeInput
    """Each item's knowledge, or why it has none."""
    values: dict[str, dict[str, MetricValue]]
    """Its metric values: metric name -> item id -> value."""
    error_types: Mapping[str, str]
    """The ``error_type`` of each item whose generation failed (the class of its error)."""


@register_task
class ConnerSelectTask(ConnerKnowledgeTask[list[Candidate]]):
    """``conner select``'s last step: per item, the best of the candidates that the sub-runs in
    ``root`` generated and scored (Eq. 9). :func:`select_run` runs the sub-runs first."""

    name = "conner.select"
    batch_size = 100
    config: ConnerSelectConfig

    def __init__(
        self,
        config: ConnerSelectConfig,
        generate: ConnerGenerateConfig,
        score: ConnerScoreConfig,
        *,
        root: str | Path,
        data_dir: str | Path | None = None,
    ) -> None:
        check_select(config, generate, score)
        super().__init__(config, generate, data_dir)
        self.generate = generate
        self.score_given = score
        self.score = score.model_copy(
            update={
                "task": generate.task,
                "split": generate.split,
                "metrics": scored_metrics(config),
            }
        )
        self.root = Path(root)

    def candidate_dirs(self, i: int) -> tuple[Path, Path]:
        """The generation and score runs of candidate ``i``."""
        return self.root / "candidates" / f"c{i}", self.root / "scores" / f"c{i}"

    def candidate_config(self, i: int) -> ConnerGenerateConfig:
        """How candidate ``i`` is sampled: seed ``seed + i``, the demonstrations of ``seed``."""
        seed = self.generate.seed
        return self.generate.model_copy(update={"seed": seed + i, "demo_seed": seed})

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[list[Candidate]]:
        """Every candidate's knowledge and values, read from its finished sub-runs."""
        candidates: list[Candidate] = []
        for i in range(self.config.candidates):
            generated, scored = self.candidate_dirs(i)
            knowledge, _ = read_knowledge(str(generated), self.samples)
            types = knowledge_error_types(str(generated))
            candidates.append(Candidate(knowledge, read_score_values(scored), types))
        return opened(candidates)

    def run_config(self, models: object) -> dict[str, Any]:
        """The three configs as given (the score config without knowledge and metrics)."""
        return {
            "task_name": self.name,
            "select": self.config.model_dump(mode="json"),
            "generate": self.generate.model_dump(mode="json"),
            "score": self.score_given.identity(exclude={"knowledge", "metrics"}),
        }

    async def work(self, batch: Sequence[ConnerSample], models: list[Candidate]) -> list[Record]:
        """The choice for each item of the batch."""
        return _choices(batch, self.config, models)

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """``samples.jsonl`` again as one canonical file in item order (``conner score``
        fingerprints it): the same bytes whether made in one go or merged from shards."""
        atomic_write(
            path / SAMPLES_FILE, "".join(canonical_json(r, allow_nan=True) + "\n" for r in records)
        )


def _choices(
    samples: Sequence[ConnerSample], config: ConnerSelectConfig, candidates: Sequence[Candidate]
) -> list[Record]:
    """One record per item: the chosen candidate, or failed when no candidate has knowledge
    (with the ``error_type`` of the first candidate whose generation failed with one)."""
    records: list[Record] = []
    for sample in samples:
        found = [
            (i, k)
            for i, c in enumerate(candidates)
            if isinstance(k := c.knowledge[sample.id], Knowledge)
        ]
        if not found:
            records.append(_no_candidate(sample.id, candidates))
            continue
        scores = [
            {
                m: v
                for m, by_id in candidates[i].values.items()
                if (v := by_id.get(sample.id)) is not None
            }
            for i, _ in found
        ]
        [choice] = select_knowledge(
            [[k for _, k in found]], [scores], config.weights, missing=config.missing
        )
        extra = {
            "candidate": found[choice.index][0],
            "quality": choice.quality,
            "qualities": {found[j][0]: q for j, q in enumerate(choice.qualities)},
            "reason": choice.reason,
        }
        records.append(knowledge_record(choice.knowledge, extra))
    return records


def _no_candidate(key: str, candidates: Sequence[Candidate]) -> Record:
    """The failed record of an item no candidate has knowledge for: every reason, and the type
    of the first typed failure (from which the exit status is read)."""
    why = "; ".join(sorted({str(c.knowledge[key]) for c in candidates}))
    record: Record = {"id": key, "status": FAILED, "text": None, "error": f"no candidate: {why}"}
    typed = next((t for c in candidates if (t := c.error_types.get(key)) is not None), None)
    if typed is not None:
        record["error_type"] = typed
    return record


async def _run_candidates(
    task: ConnerSelectTask,
    runtime: Runtime,
    model: ChatModel | None,
    score_models: ScoreModels | None,
) -> None:
    """Generate and score every candidate into its sub-runs (the models loaded once)."""
    options = runtime.model_options()
    load_chat = functools.partial(cached_chat, task.generate.model, task.generate.base_url, options)
    load_scoring = functools.partial(load_score_models, task.score, task.samples, options)
    async with (
        given_or_loaded(score_models, load_scoring) as scoring,
        given_or_loaded(model, load_chat) as chat,
    ):
        for i in range(task.config.candidates):
            generated, scored = task.candidate_dirs(i)
            generate = ConnerGenerateTask(
                task.candidate_config(i), data_dir=task.data_dir, model=chat
            )
            done = await run_task_async(generate, generated, runtime)
            # new knowledge changes the score run's input: score the candidate afresh
            rescore = runtime.overwrite or done.n_done_now > 0
            score = task.score.model_copy(update={"knowledge": str(generated)})
            await run_task_async(
                ConnerScoreTask(score, data_dir=task.data_dir, models=scoring),
                scored,
                runtime.model_copy(update={"overwrite": rescore}),
            )


async def _dry_run_candidates(
    task: ConnerSelectTask, runtime: Runtime, model: ChatModel | None
) -> None:
    """A dry run of every candidate's generation (the chat calls selection makes; scoring calls
    no chat model), summed into one report: raises :class:`~citegraph.runs.DryRunFinished`."""
    tokens: dict[str, dict[str, int]] = {}
    counted: dict[str, str] = {}
    n_items = n_failed = 0
    for i in range(task.config.candidates):
        generate = ConnerGenerateTask(task.candidate_config(i), data_dir=task.data_dir, model=model)
        try:
            await run_task_async(generate, task.candidate_dirs(i)[0], runtime)
        except DryRunFinished as done:
            report = done.report
        else:  # pragma: no cover - a dry run always ends in DryRunFinished
            continue
        n_items, n_failed = report.n_items, n_failed + report.n_items_failed
        counted |= report.counted
        for role, counts in report.tokens.items():
            row = tokens.setdefault(role, {})
            for name, value in counts.items():
                row[name] = row.get(name, 0) + value
    raise DryRunFinished(
        DryRunReport(
            task=task.name,
            n_items=n_items,
            n_items_failed=n_failed,
            tokens=tokens,
            counted=counted,
            price_in=runtime.price_in,
            price_out=runtime.price_out,
        )
    )


async def select_run_async(
    out: str | Path,
    config: ConnerSelectConfig,
    *,
    generate: ConnerGenerateConfig,
    score: ConnerScoreConfig,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    score_models: ScoreModels | None = None,
    runtime: Runtime | None = None,
) -> ConnerKnowledgeResult:
    """Sample, score and select knowledge into the run ``out`` (see the module docstring).

    Args:
        out: The run directory (the sub-runs go beside its files).
        config: Candidates, γ and the missing-metric rule.
        generate: How candidates are generated (its ``seed`` is the first candidate's and
            the seed of every candidate's demonstrations).
        score: How candidates are scored (``knowledge`` and ``metrics`` are set here).
        data_dir: Where the CONNER test sets are.
        model: A ready chat model instead of building ``generate.model`` (not closed here).
        score_models: Ready scoring models instead of loading those ``score`` names.
        runtime: limit, shard, batch size, concurrency, cache, overwrite (the sub-runs too),
            command, progress; the same for every step.

    Raises:
        ConfigError: Greedy decoding with several candidates, all-zero γ, a weighted
            paragraph coherence without a model, or ``out`` holds a different run.
    """
    runtime = runtime or Runtime()
    task = ConnerSelectTask(config, generate, score, root=out, data_dir=data_dir)
    if runtime.dry_run:
        await _dry_run_candidates(task, runtime, model)
    # refuse a directory that holds another run before any model is asked
    RunDir.open(
        out,
        task.run_config(None),
        command=runtime.command,
        overwrite=runtime.overwrite,
        runtime=runtime.record(),
        task=task.name,
    ).close()
    await _run_candidates(task, runtime, model, score_models)
    # the selection is a quick step from the sub-runs' records: made afresh on every call
    chosen = await run_task_async(task, out, runtime.model_copy(update={"overwrite": True}))
    return ConnerKnowledgeResult.of(chosen)


select_run = blocking(select_run_async)
