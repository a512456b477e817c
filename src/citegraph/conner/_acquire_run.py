"""``conner generate`` and ``conner retrieve``: knowledge acquisition into a knowledge run.

Both write a run directory (``run.json``, ``samples.jsonl`` of knowledge records, see
:mod:`citegraph.conner._knowledge_io`, and ``metrics.json``: how many items got knowledge, how
many failed or came back empty, the mean length in words, and the source). ``conner score``
reads it. Generation is resumable: each item is saved when its reply arrives, a failed call is
recorded as failed and tried again when the command is re-run, and finished items are never
asked again. Retrieval is fast and runs in one go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner._generate import generate_knowledge
from citegraph.conner._knowledge_io import TaskChoice, generated_record, knowledge_record, load_task
from citegraph.conner._prompts import DEFAULT_DEMO_MAX_WORDS, DEFAULT_SHOTS
from citegraph.conner._retrieve import DenseRetriever, load_corpus, retrieve_knowledge
from citegraph.conner._types import ConnerSample
from citegraph.models import ChatModel
from citegraph.runs import FAILED, RunDir, run_pending

__all__ = [
    "AcquireResult",
    "ConnerGenerateConfig",
    "ConnerRetrieveConfig",
    "finish_acquired",
    "generate_run",
    "generate_run_async",
    "retrieve_run",
]

Progress = Callable[[int, int], None]


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
    base_url: str | None = Field(default=None, description="Server URL of the model.")


class ConnerRetrieveConfig(TaskChoice):
    """What a retrieval run does; written verbatim into ``run.json``."""

    corpus: str = Field(
        description="Passage corpus: JSONL {id, text} or TSV id<TAB>text, or 'task' (the "
        "task's own gold knowledge texts)."
    )
    retriever: str = Field(
        default="minilm", description="Embedding model: minilm, or hf:<sentence-transformers>."
    )
    k: int = Field(default=1, ge=1, description="Passages per item, joined by newlines.")
    query: Literal["query", "history"] = Field(
        default="query",
        description="What is searched: the question / last turn, or the WoW dialogue history.",
    )


class AcquireResult(BaseModel):
    """What a generation or retrieval run produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_samples: int
    n_failed: int
    n_resumed: int


def finish_acquired(run: RunDir, chosen: Sequence[ConnerSample], n_resumed: int) -> AcquireResult:
    """Write the knowledge run's ``metrics.json`` (counts, mean words, sources) and sum up."""
    wanted = {s.id for s in chosen}
    records = [r for r in run.records if r["id"] in wanted]
    ok = [r for r in records if r.get("status") != FAILED]
    words = [len(r["text"].split()) for r in ok]
    n_failed = len(records) - len(ok)
    metrics: dict[str, Any] = {
        "n_samples": len(records),
        "n_knowledge": len(ok),
        "n_failed": n_failed,
        "n_empty": sum(1 for w in words if w == 0),
        "mean_words": sum(words) / len(words) if words else None,
        "sources": sorted({r["source"] for r in ok}),
        "errors": sorted({str(r.get("error")) for r in records if r.get("status") == FAILED})[:5],
    }
    run.write_metrics(metrics)
    return AcquireResult(
        out=run.path,
        metrics=metrics,
        n_samples=len(records),
        n_failed=n_failed,
        n_resumed=n_resumed,
    )


def generate_run(out: str | Path, config: ConnerGenerateConfig, **options: Any) -> AcquireResult:
    """Blocking form of :func:`generate_run_async`."""
    return asyncio.run(generate_run_async(out, config, **options))


async def generate_run_async(
    out: str | Path,
    config: ConnerGenerateConfig,
    *,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    cache: bool = True,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> AcquireResult:
    """Generate knowledge for the task's items with ``config.model`` into the run ``out``.

    Args:
        out: The run directory.
        config: What to generate.
        data_dir: Where the CONNER test sets are.
        model: A ready chat model instead of building ``config.model``.
        limit: The first N items only (can be raised later; resumes).
        concurrency: Requests in flight (default: the model's own limit, else 4).
        cache: Use the shared response cache.
        overwrite: Replace a different run in ``out``.
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total)`` callback.

    Raises:
        ConfigError: Bad options, or ``out`` holds a different run.
        DataError, DataNotFoundError: The task's data is missing or malformed.
    """
    samples = load_task(config.task, config.split, data_dir)
    chosen = samples[:limit] if limit is not None else samples
    given = model
    if model is None:
        from citegraph.models import chat_model, default_response_cache

        model = chat_model(
            config.model,
            base_url=config.base_url,
            cache=default_response_cache() if cache else None,
        )
    in_flight = concurrency or int(getattr(model, "concurrency", 0) or 4)
    identity = config.model_dump(mode="json") | {"task_name": "conner.generate"}
    run = RunDir.open(
        out,
        identity | {"model_name": model.name},
        command=command,
        overwrite=overwrite,
        runtime={"limit": limit, "concurrency": in_flight},
    )
    source = f"llm:{model.name}"
    try:

        async def work(sample: ConnerSample) -> dict[str, Any]:
            [item] = await generate_knowledge(
                [sample],
                model,
                prompt=config.prompt,
                template=config.template,
                shots=config.shots,
                pool=samples,
                demo_max_words=config.demo_max_words,
                temperature=config.temperature,
                top_p=config.top_p,
                max_tokens=config.max_tokens,
                seed=config.seed,
                demo_seed=config.demo_seed,
                concurrency=1,
            )
            return generated_record(item, source)

        n_resumed, _ = await run_pending(
            run, [(s.id, s) for s in chosen], work, concurrency=in_flight, progress=progress
        )
    finally:
        run.close()
        if given is None:
            await model.aclose()
    return finish_acquired(run, chosen, n_resumed)


def retrieve_run(
    out: str | Path,
    config: ConnerRetrieveConfig,
    *,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    overwrite: bool = False,
    command: str | None = None,
) -> AcquireResult:
    """Retrieve each item's top ``config.k`` passages from ``config.corpus`` into the run ``out``.

    Raises:
        ConfigError: Bad options, or ``out`` holds a different run.
        DataError, DataNotFoundError: A missing or malformed corpus or task file.
        MissingDependency, ModelError: The embedding model cannot be loaded.
    """
    from citegraph.models import embedding_model

    samples = load_task(config.task, config.split, data_dir)
    chosen = samples[:limit] if limit is not None else samples
    corpus = load_corpus(config.corpus, samples)
    retriever = DenseRetriever.from_corpus(embedding_model(config.retriever), corpus)
    identity = config.model_dump(mode="json") | {"task_name": "conner.retrieve"}
    with RunDir.open(
        out,
        identity | {"retriever_name": retriever.model.name},
        data={"corpus": retriever.sha256},
        command=command,
        overwrite=overwrite,
        runtime={"limit": limit},
    ) as run:
        todo = [s for s in chosen if s.id not in run.done]
        n_resumed = len(chosen) - len(todo)
        found = retrieve_knowledge(todo, retriever, config.k, query=config.query) if todo else []
        for knowledge in found:
            run.append(knowledge_record(knowledge))
    return finish_acquired(run, chosen, n_resumed)
