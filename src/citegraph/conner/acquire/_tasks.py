"""``conner generate`` and ``conner retrieve``: knowledge acquisition as engine tasks.

Both write a knowledge run (``run.json``, ``samples.jsonl`` of knowledge records, see
:mod:`citegraph.conner.acquire._knowledge_io`, and ``metrics.json``: how many items got
knowledge, how many failed or came back empty, the mean length in words, and the sources).
``conner score`` reads it. Each item is saved when its knowledge arrives; a failed model call is
recorded as failed and tried again when the command is re-run, and finished items are never
asked again. Retrieval embeds the corpus once and searches a whole test set in one call.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field

from citegraph.conner.acquire._generate import generate_knowledge_async
from citegraph.conner.acquire._knowledge_io import (
    TaskChoice,
    generated_record,
    knowledge_record,
)
from citegraph.conner.acquire._knowledge_task import (
    ConnerKnowledgeResult,
    ConnerKnowledgeTask,
    cached_chat,
)
from citegraph.conner.acquire._prompts import DEFAULT_DEMO_MAX_WORDS, DEFAULT_SHOTS
from citegraph.conner.acquire._retrieve import DenseRetriever, load_corpus, retrieve_knowledge
from citegraph.datasets import ConnerSample
from citegraph.io import ServerURL
from citegraph.models import ChatModel, embedding_model, specs_identity
from citegraph.runs import Record, Runtime, blocking, given_or_loaded, register_task, run_task_async

__all__ = [
    "ConnerGenerateConfig",
    "ConnerGenerateTask",
    "ConnerRetrieveConfig",
    "ConnerRetrieveTask",
    "generate_run",
    "generate_run_async",
    "retrieve_run",
    "retrieve_run_async",
]

ModelsT = TypeVar("ModelsT")


class ConnerGenerateConfig(TaskChoice):
    """What a generation run does; written verbatim into ``run.json``."""

    model: str = Field(description="Chat model: openai/<name>, vllm/<name>, local, hf/<path>...")
    prompt: Literal["zero-shot", "few-shot"] = Field(
        default="zero-shot", description="Knowledge prompt (Table 11 zero-shot, Table 12 few)."
    )
    template: str | None = Field(
        default=None, description="A prompt template id (default: the paper's best)."
    )
    shots: int = Field(default=DEFAULT_SHOTS, ge=0, description="Few-shot demonstrations.")
    demo_max_words: int | None = Field(
        default=DEFAULT_DEMO_MAX_WORDS, ge=1, description="Longest demonstration, in words."
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="0: greedy (paper).")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(default=256, ge=1, description="Most tokens per knowledge text.")
    seed: int = Field(default=0, description="Sampling seed.")
    demo_seed: int | None = Field(
        default=None, description="Seed of the demonstrations' draw (default: --seed)."
    )
    base_url: ServerURL | None = Field(default=None, description="Server URL of the model.")


class ConnerRetrieveConfig(TaskChoice):
    """What a retrieval run does; written verbatim into ``run.json``."""

    corpus: str = Field(
        description="Passage corpus: JSONL {id, text} or TSV id<TAB>text, or 'task' (the "
        "task's own gold knowledge texts)."
    )
    retriever: str = Field(
        default="minilm", description="Embedding model: minilm, or hf/<sentence-transformers>."
    )
    k: int = Field(default=1, ge=1, description="Passages per item, joined by newlines.")
    query: Literal["query", "history"] = Field(
        default="query",
        description="What is searched: the question / last turn, or the WoW dialogue history.",
    )


@register_task
class ConnerGenerateTask(ConnerKnowledgeTask[ChatModel]):
    """``conner generate``: one knowledge text per item from a chat model (Tables 11-12)."""

    name = "conner.generate"
    config: ConnerGenerateConfig

    def __init__(
        self,
        config: ConnerGenerateConfig,
        *,
        data_dir: str | Path | None = None,
        model: ChatModel | None = None,
    ) -> None:
        super().__init__(config, config, data_dir)
        self.model = model

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[ChatModel]:
        """The caller's model, or ``config.model`` behind the response cache."""
        load = functools.partial(
            cached_chat, self.config.model, self.config.base_url, runtime.model_options()
        )
        return given_or_loaded(self.model, load)

    def run_config(self, models: ChatModel) -> dict[str, Any]:
        """The config, the task's name and the model's."""
        identity = self.config.model_dump(mode="json") | {"task_name": self.name}
        return identity | {"model_name": models.name}

    def concurrency(self, models: ChatModel, runtime: Runtime) -> int:
        """Requests in flight: the runtime's, else the model's own limit, else 4."""
        return runtime.concurrency_for(models, 4)

    async def work(self, batch: Sequence[ConnerSample], models: ChatModel) -> list[Record]:
        """Generate the batch's knowledge; a failed call is a failed record."""
        c = self.config
        generated = await generate_knowledge_async(
            batch,
            models,
            prompt=c.prompt,
            template=c.template,
            shots=c.shots,
            pool=self.samples,
            demo_max_words=c.demo_max_words,
            temperature=c.temperature,
            top_p=c.top_p,
            max_tokens=c.max_tokens,
            seed=c.seed,
            demo_seed=c.demo_seed,
            concurrency=max(1, len(batch)),
        )
        return [generated_record(item, f"llm:{models.name}") for item in generated]


@register_task
class ConnerRetrieveTask(ConnerKnowledgeTask[DenseRetriever]):
    """``conner retrieve``: each item's top ``k`` passages of a corpus (dense embeddings)."""

    name = "conner.retrieve"
    model_role = "retriever"
    batch_size = 1000
    """A whole test set (500 items) per search, as the queries are embedded together."""
    config: ConnerRetrieveConfig

    def __init__(
        self,
        config: ConnerRetrieveConfig,
        *,
        data_dir: str | Path | None = None,
        retriever: DenseRetriever | None = None,
    ) -> None:
        super().__init__(config, config, data_dir)
        self.retriever = retriever

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[DenseRetriever]:
        """The caller's retriever, or ``config.retriever`` over ``config.corpus`` (embedded)."""

        def load() -> DenseRetriever:
            corpus = load_corpus(self.config.corpus, self.samples)
            model = embedding_model(self.config.retriever, runtime.model_options())
            return DenseRetriever.from_corpus(model, corpus)

        return given_or_loaded(self.retriever, load)

    def run_config(self, models: DenseRetriever) -> dict[str, Any]:
        """The config, the task's name and the embedding model's."""
        dumped = specs_identity(self.config.model_dump(mode="json"), {"retriever": "embedding"})
        identity = dumped | {"task_name": self.name}
        return identity | {"retriever_name": models.model.name}

    def run_data(self, models: DenseRetriever) -> dict[str, str]:
        """The corpus fingerprint."""
        return {"corpus": models.sha256}

    async def work(self, batch: Sequence[ConnerSample], models: DenseRetriever) -> list[Record]:
        """The batch's retrieved knowledge."""
        found = retrieve_knowledge(batch, models, self.config.k, query=self.config.query)
        return [knowledge_record(knowledge) for knowledge in found]


async def generate_run_async(
    out: str | Path,
    config: ConnerGenerateConfig,
    *,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    runtime: Runtime | None = None,
) -> ConnerKnowledgeResult:
    """Generate knowledge for the task's items with ``config.model`` into the run ``out``.

    Args:
        out: The run directory.
        config: What to generate.
        data_dir: Where the CONNER test sets are.
        model: A ready chat model instead of building ``config.model`` (not closed here).
        runtime: limit, shard, concurrency (default: the model's own limit, else 4), cache,
            overwrite, command, progress.

    Raises:
        ConfigError: Bad options, or ``out`` holds a different run.
        DataError, DataNotFoundError: The task's data is missing or malformed.
    """
    task = ConnerGenerateTask(config, data_dir=data_dir, model=model)
    return ConnerKnowledgeResult.of(await run_task_async(task, out, runtime))


async def retrieve_run_async(
    out: str | Path,
    config: ConnerRetrieveConfig,
    *,
    data_dir: str | Path | None = None,
    retriever: DenseRetriever | None = None,
    runtime: Runtime | None = None,
) -> ConnerKnowledgeResult:
    """Retrieve each item's top ``config.k`` passages from ``config.corpus`` into the run ``out``.

    Args:
        out: The run directory.
        config: What to retrieve from.
        data_dir: Where the CONNER test sets are.
        retriever: A ready retriever instead of embedding ``config.corpus`` (not closed here).
        runtime: limit, shard, overwrite, command, progress.

    Raises:
        ConfigError: Bad options, or ``out`` holds a different run.
        DataError, DataNotFoundError: A missing or malformed corpus or task file.
        MissingDependency, ModelError: The embedding model cannot be loaded.
    """
    task = ConnerRetrieveTask(config, data_dir=data_dir, retriever=retriever)
    return ConnerKnowledgeResult.of(await run_task_async(task, out, runtime))


generate_run = blocking(generate_run_async)


retrieve_run = blocking(retrieve_run_async)
