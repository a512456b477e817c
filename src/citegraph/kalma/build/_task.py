"""``kalma build``: a KaLMA benchmark with gold minimum knowledge sets, built from a KG.

Pipeline (paper §2.2, Appendix A): person pairs (a CSV of ``name1,relation,name2[,paragraph]``
or pairs sampled from the KG) -> complete names only (A.1) -> name disambiguation in the KG
(A.2: the two entities connected by the stated relation) -> knowledge pool (their one-hop
subgraphs) -> evolutionary question generation (A.3, :func:`evolve`) -> a dataset directory
(:mod:`._output`).

The build is a run directory: ``run.json`` (configuration, KG and input hashes, prompt version,
models; under ``notes`` the selection report and relation counts), ``samples.jsonl`` (one
record per item, appended as it finishes: the pool, every round with its scored candidates, the
questions, the gold, the gold facts the KG lacks), ``metrics.json`` (selection report and
statistics) and the dataset files, all rebuilt from the records by ``runs report`` and
``runs merge``. Re-running the command resumes; items whose model calls failed are retried. The
items are chosen before any model runs and identically on every machine, so a build can be split
with ``--shard i/N`` and merged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.kalma.build._config import KalmaBuildConfig
from citegraph.kalma.build._disambiguate import Resolution
from citegraph.kalma.build._item import BuildSelection, build_item, select_items
from citegraph.kalma.build._output import dataset_stats, write_dataset
from citegraph.kalma.build._select import PerplexityFn
from citegraph.kg import KnowledgeGraph, OpenedKG, open_kg
from citegraph.models import ChatModel, causal_lm_scorer, chat_model
from citegraph.models.grammar import grammar_mode_of
from citegraph.runs import (
    FAILED,
    Record,
    RunOutcome,
    Runtime,
    Task,
    TaskMetrics,
    TaskResult,
    blocking,
    given_or_loaded,
    in_id_order,
    register_task,
    run_task_async,
)

TASK = "kalma.build"


class KalmaBuildResult(TaskResult):
    """What :func:`build_benchmark` produced (``n_resumed``: items found already built)."""

    n_items: int = Field(description="Items of the build (pairs that resolved).")

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """``n_items`` from the build's metrics."""
        return {"n_items": outcome.metrics["n_items"]}


class BuildModels(BaseModel):
    """The generating model and the coherence LM of a build, opened once."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    model: ChatModel
    perplexity: PerplexityFn
    lm_name: str
    lm: Any = None
    """The loaded LM scorer behind ``perplexity`` (for ``run.json`` ``models``), if one was."""


@register_task
class KalmaBuildTask(Task[tuple[str, Resolution], BuildModels]):
    """``kalma.build``: one item per resolved person pair (``item-<i>``); the record is the
    evolved item. A model passed in is left open; the one built from the config is closed."""

    name = TASK
    gate_metrics = TaskMetrics(
        others=("n_items", "n_failed", "selection", "stats", "relation_counts")
    )

    def __init__(
        self,
        config: KalmaBuildConfig,
        selection: BuildSelection,
        *,
        model: ChatModel | None = None,
        perplexity: PerplexityFn | None = None,
    ) -> None:
        self.config: KalmaBuildConfig = config
        self.selection = selection
        self._model = model
        self._perplexity = perplexity

    def items(self) -> list[tuple[str, tuple[str, Resolution]]]:
        pairs = [(f"item-{i}", r) for i, r in enumerate(self.selection.resolved)]
        return [(key, (key, r)) for key, r in pairs]

    @asynccontextmanager
    async def open(self, runtime: Runtime) -> AsyncIterator[BuildModels]:
        config = self.config
        perplexity = self._perplexity
        lm_name = getattr(perplexity, "__qualname__", "perplexity function given by caller")
        options = runtime.model_options()
        async with given_or_loaded(
            self._model, lambda: chat_model(config.model, options.serving(config.base_url))
        ) as model:
            if config.citations == "constrained":
                grammar_mode_of(model)  # a model that cannot constrain fails before any item
            scorer = None
            if perplexity is None:
                scorer = causal_lm_scorer(config.lm, options.serving(config.lm_base_url))
                perplexity, lm_name = scorer.perplexities, scorer.name
            try:
                yield BuildModels(model=model, perplexity=perplexity, lm_name=lm_name, lm=scorer)
            finally:
                if scorer is not None:
                    await scorer.aclose()

    def run_config(self, models: BuildModels) -> dict[str, Any]:
        return self.config.identity() | {
            "task": TASK,
            "model_name": models.model.name,
            "lm_name": models.lm_name,
        }

    def run_data(self, models: BuildModels) -> dict[str, str]:
        return dict(self.selection.data)

    def run_notes(self, models: BuildModels) -> dict[str, Any]:
        counts = self.selection.counts
        return {
            "selection": self.selection.report,
            "relation_counts": {"n_items": counts.n_items, "counts": counts.counts},
        }

    def concurrency(self, models: BuildModels, runtime: Runtime) -> int:
        """Items evolving at once: ``--concurrency``, else the model's request limit, else 2."""
        return runtime.concurrency_for(models.model, 2)

    async def work(
        self, batch: Sequence[tuple[str, Resolution]], models: BuildModels
    ) -> list[Record]:
        selection = self.selection
        return [
            await build_item(
                item_id,
                resolution,
                models.model,
                models.perplexity,
                selection.counts,
                self.config,
                selection.kg,
            )
            for item_id, resolution in batch
        ]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        config, notes = info["config"], info.get("notes") or {}
        ok = [r for r in records if r.get("status") != FAILED]
        return {
            "selection": notes.get("selection"),
            "n_items": len(ok),
            "n_failed": len(records) - len(ok),
            "stats": dataset_stats(ok),
            "relation_counts": notes.get("relation_counts"),
            "setup": {
                "model": config.get("model_name"),
                "lm": config.get("lm_name"),
                "prompts": config["prompts"],
                "rounds": config["rounds"],
                "alpha": config["alpha"],
                "coherence": config["coherence"],
                "temperature": config["temperature"],
                "seed": config["seed"],
                "kg": config["kg"],
                "kg_identity": (info.get("data") or {}).get("kg"),
            },
        }

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """The dataset files (:mod:`._output`) from the finished items."""
        ok = [r for r in records if r.get("status") != FAILED]
        write_dataset(path, ok, metrics["stats"], seed=int(info["config"]["seed"]))

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Item order (``item-<i>`` by ``i``)."""
        return in_id_order(records)


async def build_benchmark_async(
    out: str | Path,
    config: KalmaBuildConfig,
    *,
    runtime: Runtime | None = None,
    data_dir: str | Path | None = None,
    kg: KnowledgeGraph | None = None,
    model: ChatModel | None = None,
    perplexity: PerplexityFn | None = None,
) -> KalmaBuildResult:
    """Build a benchmark into the directory ``out`` (see the module docstring).

    Args:
        out: The dataset / run directory.
        config: What to build.
        runtime: limit, shard, concurrency (items evolving at once; default the model's request
            limit), cache, overwrite, command, progress (see :class:`citegraph.runs.Runtime`).
        data_dir: Where the datasets are (for the embedded KGs).
        kg, model, perplexity: Ready objects instead of building them from ``config`` (the
            caller's model is left open).

    Raises:
        ConfigError: bad options, or ``out`` holds another build.
        DataError: the pairs file is malformed.
    """
    async with AsyncExitStack() as stack:
        source: KnowledgeGraph | OpenedKG
        if kg is not None:
            source = kg
        else:  # the KG config.kg names: closed when the build ends (an error included)
            source = await stack.enter_async_context(open_kg(config.kg, data_dir=data_dir))
        selection = await select_items(config, kg=source)
        task = KalmaBuildTask(config, selection, model=model, perplexity=perplexity)
        outcome = await run_task_async(task, out, runtime)
    return KalmaBuildResult.of(outcome)


build_benchmark = blocking(build_benchmark_async)
