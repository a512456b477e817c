"""``caqa build``: a CAQA benchmark built from a KG and KGQA questions (§4).

Pipeline: KGQA questions with logical queries (a dataset reader, or queries sampled from the KG)
-> grounding in the KG -> per question (:func:`build_item`): query extension, the four structured
attributions, text -> train / dev / test splits by question -> Table 4 statistics.

The build is a task on the engine (:class:`CaqaBuildTask`, ``caqa.build``); its output directory
is a run directory: ``run.json`` (configuration, KG identity, versions), ``samples.jsonl`` (one
record per question, appended as it finishes, with its CAQA samples or the reason it gave none),
then ``train.jsonl``, ``dev.jsonl``, ``test.jsonl`` (one :class:`CaqaSample` per line),
``stats.json`` / ``stats.md`` and ``metrics.json``. Re-running the command resumes; questions
whose model calls failed are retried; ``--limit`` can grow; ``--shard i/N`` builds a share of the
questions, and ``citegraph runs merge`` makes the splits from all of them (the split files and
statistics come from the question records alone, :mod:`citegraph.caqa.build._outputs`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citegraph.caqa._types import CATEGORIES, Category
from citegraph.caqa._view import CaqaBuildPresenter
from citegraph.caqa.build._extend import UnionPartners
from citegraph.caqa.build._item import build_item
from citegraph.caqa.build._outputs import build_metrics, samples_by_split, write_build_files
from citegraph.caqa.build._splits import parse_fractions
from citegraph.caqa.build._textualisers import LLMTextualiser, TemplateTextualiser, Textualiser
from citegraph.caqa.queries import (
    KGQA_SETS,
    CaqaKG,
    KGQASample,
    ground_set,
    load_kgqa,
    sample_queries,
)
from citegraph.errors import ConfigError
from citegraph.io import ServerURL
from citegraph.kg import OxigraphKG, open_kg
from citegraph.models import ChatModel, chat_model
from citegraph.runs import (
    Presenter,
    Record,
    RunOutcome,
    Runtime,
    Task,
    TaskMetrics,
    TaskResult,
    blocking,
    given_or_loaded,
    opened,
    recorded_config,
    register_task,
    run_task_async,
)

SAMPLED = "sample"


class CaqaBuildConfig(BaseModel):
    """What a build does; written verbatim into ``run.json`` (its hash identifies the build)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: str = Field(
        default="simplequestions-wd",
        description="KGQA set (grailqa, simplequestions-wd, wikiwebquestions, pathquestion-2h, "
        "pathquestion-3h, ...) or 'sample' to draw queries from the KG.",
    )
    kg: str | None = Field(
        default=None, description="KG spec; default: the question set's own KG (codex-s...)."
    )
    sample: int = Field(default=200, ge=1, description="Queries to sample with 'sample'.")
    seed: int = Field(default=0, description="Seed of sampling, extension, perturbation, splits.")
    max_answers: int = Field(
        default=5, ge=1, description="Questions with more answers are skipped (statement size)."
    )
    max_facts: int = Field(
        default=20,
        ge=1,
        description="Questions whose supportive subgraph has more facts are skipped (hub "
        "entities; the paper's citations are about 25 tokens).",
    )
    union_partners: UnionPartners = Field(
        default="same-name",
        description="Union extension partners: same-name entities (paper) or one same-type "
        "entity with the relation (for KGs without namesakes, e.g. CoDEx-S; the question then "
        "names both).",
    )
    categories: tuple[Category, ...] = Field(default=CATEGORIES, description="Categories built.")
    text: str = Field(
        default="template",
        description="'template' (deterministic, offline) or a chat model spec for the paper's "
        "Tables 8-10 prompts (openai/gpt-4o-mini, local, mock...).",
    )
    base_url: ServerURL | None = Field(default=None, description="Server URL for the text model.")
    splits: str = Field(default="0.8,0.1,0.1", description="Train,dev,test fractions.")

    @field_validator("questions")
    @classmethod
    def _known_set(cls, value: str) -> str:
        if value != SAMPLED and value not in KGQA_SETS:
            names = ", ".join([*sorted(KGQA_SETS), SAMPLED])
            raise ValueError(f"unknown question set {value!r}; choose from {names}")
        return value


class CaqaBuildResult(TaskResult):
    """What :func:`build_caqa` produced."""

    n_questions: int = Field(description="Questions of this call (after limit and shard).")
    n_samples: int = Field(description="CAQA samples built from them.")

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """The questions of the call and the samples built."""
        return {"n_questions": len(outcome.items), "n_samples": outcome.metrics["n_samples"]}


@dataclass(frozen=True)
class _Questions:
    """The KG and the grounded questions of a build, and what was dropped on the way."""

    kg: CaqaKG
    identity: str
    items: list[KGQASample]
    report: dict[str, Any]


@register_task
class CaqaBuildTask(Task[KGQASample, Textualiser]):
    """``caqa build`` on the engine: one item per KGQA question, its record the question's CAQA
    samples (or why it gave none); the splits and statistics are made from all the records.

    Args:
        config: What to build.
        data_dir: Where the datasets are.
        model: A ready chat model for the text (instead of ``config.text``; not closed here).
    """

    name = "caqa.build"
    gate_metrics = TaskMetrics(
        others=(
            "n_samples", "records", "skipped", "failed", "extensions", "extensions_drawn",
            "unavailable", "statistics", "splits", "inputs", "seconds",
        )
    )  # fmt: skip
    presenter: ClassVar[type[Presenter]] = CaqaBuildPresenter
    config: CaqaBuildConfig

    def __init__(
        self,
        config: CaqaBuildConfig,
        *,
        data_dir: str | Path | None = None,
        model: ChatModel | None = None,
    ) -> None:
        parse_fractions(config.splits)  # a bad --splits fails before the KG is loaded
        self.config = config
        self.data_dir = data_dir
        self.model = model
        self._questions: _Questions | None = None
        self._started: float | None = None

    def _load(self) -> _Questions:
        if self._questions is None:
            self._started = time.perf_counter()
            self._questions = _read_questions(self.config, self.data_dir)
        return self._questions

    def items(self) -> list[tuple[str, KGQASample]]:
        """The grounded questions (the KG is opened on the first call)."""
        return [(item.id, item) for item in self._load().items]

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[Textualiser]:
        """The templates, or an LLM textualiser on the given or configured chat model."""
        if self.config.text == "template" and self.model is None:
            return opened(TemplateTextualiser())
        return self._llm(runtime)

    @asynccontextmanager
    async def _llm(self, runtime: Runtime) -> AsyncIterator[Textualiser]:
        def load() -> ChatModel:
            return chat_model(
                self.config.text, runtime.model_options().serving(self.config.base_url)
            )

        async with given_or_loaded(self.model, load) as model:
            yield LLMTextualiser(model, seed=self.config.seed)

    def run_config(self, models: Textualiser) -> dict[str, Any]:
        """The config, the task and the textualiser (name and prompt or template version)."""
        return self.config.model_dump(mode="json") | {
            "task": self.name,
            "textualiser": models.name,
            "text_version": models.version,
        }

    def run_data(self, models: Textualiser) -> dict[str, str]:
        """The KG's identity (SHA-256 of its source files)."""
        return {"kg": self._load().identity}

    def concurrency(self, models: Textualiser, runtime: Runtime) -> int:
        """Questions in flight: the runtime's, else the text model's request limit, else 4."""
        return runtime.concurrency_for(getattr(models, "model", None), 4)

    async def work(self, batch: Sequence[KGQASample], models: Textualiser) -> list[Record]:
        """The record of each question (``status`` ok, skipped or failed)."""
        kg, config = self._load().kg, self.config
        return list(
            await asyncio.gather(
                *(
                    build_item(
                        item,
                        kg,
                        models,
                        seed=config.seed,
                        max_answers=config.max_answers,
                        max_facts=config.max_facts,
                        union_partners=config.union_partners,
                        categories=config.categories,
                    )
                    for item in batch
                )
            )
        )

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        """What was built, skipped and failed, Table 4, and the setup from ``run.json``."""
        config = recorded_config(CaqaBuildConfig, info)
        fractions = parse_fractions(config.splits)
        metrics = build_metrics(
            records, samples_by_split(records, fractions, config.seed), fractions
        )
        metrics["setup"] = {
            "kg": config.kg,
            "kg_identity": info.get("data", {}).get("kg"),
            "questions": config.questions,
            "textualiser": info["config"].get("textualiser"),
            "text_version": info["config"].get("text_version"),
            "seed": config.seed,
            "max_answers": config.max_answers,
            "max_facts": config.max_facts,
            "splits": list(fractions),
        }
        return metrics

    def metrics(
        self, records: Sequence[Record], info: dict[str, Any], models: Textualiser
    ) -> dict[str, Any]:
        """:meth:`summarize` with what only this call knows: the questions read and dropped
        before the build (``inputs``) and the time it took (``seconds``)."""
        summary = self.summarize(records, info)
        setup = summary.pop("setup")
        questions = self._load()
        inputs = questions.report | {"n_questions_built": len(records)}
        seconds = round(time.perf_counter() - (self._started or time.perf_counter()), 3)
        return summary | {"inputs": inputs, "setup": setup, "seconds": seconds}

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """The split files and Table 4 (``stats.md``, ``stats.json``)."""
        config = recorded_config(CaqaBuildConfig, info)
        fractions = parse_fractions(config.splits)
        named = KGQA_SETS.get(config.questions)
        kg = config.kg or (named[2] if named is not None else "codex-s")  # as _read_questions
        sampled = f" ({config.sample} queries)" if config.questions == SAMPLED else ""
        source = f"questions {config.questions}{sampled} over {kg}, seed {config.seed}"
        by_split = samples_by_split(records, fractions, config.seed)
        write_build_files(path, records, by_split, source=source, fractions=fractions)


async def build_caqa_async(
    out: str | Path,
    config: CaqaBuildConfig,
    *,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    runtime: Runtime | None = None,
) -> CaqaBuildResult:
    """Build a CAQA benchmark into ``out`` (see the module docstring).

    Args:
        out: The output / run directory.
        config: What to build.
        data_dir: Where the datasets are.
        model: A ready chat model for the text (instead of ``config.text``).
        runtime: limit (the first N questions; can be raised later), shard, concurrency
            (questions in flight; default: the text model's request limit, else 4), cache
            (the response cache for model calls), overwrite, command, progress.

    Raises:
        ConfigError: bad options, a remote KG, or ``out`` holds another build.
    """
    task = CaqaBuildTask(config, data_dir=data_dir, model=model)
    return CaqaBuildResult.of(await run_task_async(task, out, runtime))


build_caqa = blocking(build_caqa_async)


def _read_questions(config: CaqaBuildConfig, data_dir: str | Path | None) -> _Questions:
    """The KG and the grounded questions to build from, plus what was dropped and why."""
    kgqa = None if config.questions == SAMPLED else load_kgqa(config.questions, data_dir)
    spec = config.kg or (kgqa.kg if kgqa is not None else "codex-s")
    source = open_kg(spec, data_dir=data_dir)
    if not isinstance(source.kg, OxigraphKG):
        raise ConfigError(
            f"caqa build needs an embedded KG (codex-s, pathquestion-2h, RDF files...); {spec!r} "
            "is a remote endpoint"
        )
    kg = CaqaKG(source.kg, name=spec)
    if kgqa is None:
        items = sample_queries(kg, config.sample, seed=config.seed, max_answers=config.max_answers)
        report = {"source": "sampled from the KG", "n_read": len(items)}
        return _Questions(kg, source.identity, items, report)
    grounded, dropped = ground_set(kgqa, kg)
    report = {
        "source": config.questions,
        "n_read": len(kgqa.samples),
        "skipped_reading": dict(kgqa.skipped),
        "skipped_grounding": dict(dropped),
        "n_grounded": len(grounded),
    }
    return _Questions(kg, source.identity, grounded, report)
