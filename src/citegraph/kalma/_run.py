"""``kalma run``: answer every question of a benchmark with citations, then score the answers.

One question flows through: KG context (the dataset's graphs or citegraph's retrieval) ->
experiments (graphs replaced for the retrieval ablation, gold facts removed for conscious
incompetence) -> Table 13 prompt -> model -> parse -> scores (correctness against the KG the model
was given, precision / recall against gold, alignment, [NA]) -> optional text-quality judge -> one
line of ``samples.jsonl``. Questions run concurrently (bounded); each line is written as soon as
its question finishes, so a killed run loses nothing written and a re-run resumes. A question
whose model call failed is recorded with ``status: failed`` and tried again on resume.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import (
    BioKaLMASample,
    GoldRecord,
    kalma_dataset_path,
    load_kalma_dataset,
    read_gold,
)
from citegraph.errors import ConfigError, DataError
from citegraph.kalma._ablations import corrupt_retrieval, remove_knowledge
from citegraph.kalma._approx_gold import APPROX_GOLD, question_match_gold
from citegraph.kalma._generate import GeneratedAnswer, generate_answer
from citegraph.kalma._prompt import flatten_kg
from citegraph.kalma._retrieve import RetrievalConfig, Retriever
from citegraph.kalma._run_config import TASK, RunConfig, RunRuntime, gold_source
from citegraph.kalma._run_report import build_run_metrics
from citegraph.kalma._score_item import ScoreItem, score_items
from citegraph.kalma._text_quality import judge_text_quality, reference_subset
from citegraph.kg import KnowledgeGraph, Subgraph, open_kg
from citegraph.models import ChatModel, NLIModel, chat_model, default_response_cache, nli_model
from citegraph.runs import FAILED, RunDir, run_pending, sha256_file

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each question."""


class RunResult(BaseModel):
    """What :func:`run_kalma` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_done_now: int = Field(description="Questions answered in this call.")
    n_resumed: int = Field(description="Questions found already done in the run directory.")
    n_failed: int = Field(description="Questions whose model call failed (retried on resume).")


class _Models(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    answerer: ChatModel
    nli: NLIModel
    judge: ChatModel | None
    kg: KnowledgeGraph | None
    kg_identity: str | None
    retriever: Retriever | None


def select_samples(samples: Sequence[BioKaLMASample], runtime: RunRuntime) -> list[BioKaLMASample]:
    """The questions this process answers: the first ``limit``, then this shard's share.

    Shards split by dataset index (``index % N == i``), so they never overlap and their union is
    the whole selection whatever ``limit`` each machine was given.
    """
    chosen = list(samples[: runtime.limit] if runtime.limit else samples)
    parts = runtime.shard_parts()
    if parts is not None:
        i, n = parts
        chosen = [s for s in chosen if s.index % n == i]
    return chosen


def run_kalma(out: str | Path, config: RunConfig | None = None, **options: Any) -> RunResult:
    """Blocking form of :func:`run_kalma_async`."""
    return asyncio.run(run_kalma_async(out, config, **options))


async def run_kalma_async(
    out: str | Path,
    config: RunConfig | None = None,
    *,
    runtime: RunRuntime | None = None,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    judge: ChatModel | None = None,
    nli: NLIModel | None = None,
    kg: KnowledgeGraph | None = None,
    contact: str | None = None,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Generate attributed answers for a benchmark split and score them into a run directory.

    Args:
        out: The run directory (created; resumed when it holds the same run).
        config: What to run (see :class:`RunConfig`); defaults to the paper's setup with the
            embedded local model.
        runtime: limit, shard, concurrency, cache (not part of the run's identity).
        data_dir: Where the datasets are.
        model, judge, nli, kg: Ready objects to use instead of building them from ``config``
            (tests, notebooks, reuse across runs).
        contact: Contact for Wikidata's User-Agent policy (``--kg wikidata``).
        overwrite: Replace a different run in ``out``.
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total)`` callback.

    Raises:
        ConfigError: bad options, or ``out`` holds another run.
        DataError: the gold file is malformed or names unknown ids.
    """
    config = config or RunConfig()
    runtime = runtime or RunRuntime()
    all_samples = load_kalma_dataset(config.dataset, config.split, data_dir)
    samples = select_samples(all_samples, runtime)
    gold, data = _gold(config, all_samples, data_dir)
    graphs_by_id = _context_graphs(config, all_samples)
    judged = _judged_ids(config, all_samples)
    models = _models(config, runtime, data_dir, contact, model, judge, nli, kg)
    if models.kg_identity is not None:
        data["kg"] = models.kg_identity
    identity = config.model_dump(mode="json") | {
        "task": TASK,
        "model_name": models.answerer.name,
        "nli_name": models.nli.name,
        "judge_name": models.judge.name if models.judge else None,
    }
    run = RunDir.open(
        out,
        identity,
        data=data,
        command=command,
        overwrite=overwrite,
        runtime=runtime.model_dump(mode="json"),
    )
    limit = runtime.concurrency or _default_concurrency(models.answerer)

    async def work(sample: BioKaLMASample) -> dict[str, Any]:
        return await _answer_and_score(sample, config, models, graphs_by_id, gold, judged)

    try:
        n_resumed, n_now = await run_pending(
            run, [(s.id, s) for s in samples], work, concurrency=limit, progress=progress
        )
    finally:
        run.close()
        await _close(models, model, judge)
    metrics = finalize_run(run, samples=samples)
    n_failed = sum(1 for r in run.records if r.get("status") == FAILED)
    return RunResult(
        out=Path(out), metrics=metrics, n_done_now=n_now, n_resumed=n_resumed, n_failed=n_failed
    )


def finalize_run(run: RunDir, samples: Sequence[BioKaLMASample] | None = None) -> dict[str, Any]:
    """Aggregate ``samples.jsonl`` into ``metrics.json`` (also used after ``runs merge``)."""
    records = sorted(run.records, key=lambda r: int(r.get("index", 0)))
    if samples is not None:
        wanted = {s.id for s in samples}
        records = [r for r in records if r["id"] in wanted]
    metrics = build_run_metrics(records, run.info)
    run.write_metrics(metrics)
    return metrics


def _default_concurrency(model: ChatModel) -> int:
    """Questions in flight: the server's request limit, else 4."""
    return int(getattr(model, "concurrency", None) or 4)


def _gold(
    config: RunConfig, samples: Sequence[BioKaLMASample], data_dir: str | Path | None
) -> tuple[dict[str, GoldRecord] | None, dict[str, str]]:
    data = {"dataset": sha256_file(kalma_dataset_path(config.dataset, config.split, data_dir))}
    source = gold_source(config)
    if source is None:
        if config.remove_knowledge:
            raise ConfigError(
                f"--remove-knowledge needs gold: {config.dataset} has no gold.jsonl; give --gold"
            )
        return None, data
    if source == APPROX_GOLD:
        gold = {
            s.id: GoldRecord(id=s.id, knowledge=tuple(question_match_gold(s.question, s.graphs)))
            for s in samples
        }
        return gold, data
    path = Path(source)
    # A gold file may cover both splits (kalma build writes one): keep this split's ids.
    other = "general-" if config.split == "specific" else "specific-"
    gold = {k: v for k, v in read_gold(path).items() if not k.startswith(other)}
    known = {s.id for s in samples}
    for gid in gold:
        if gid not in known:
            raise DataError(
                f"id {gid!r} is not in the {config.split} split of {config.dataset}",
                path=path,
                field="id",
            )
    data["gold"] = sha256_file(path)
    return gold, data


def _judged_ids(config: RunConfig, samples: Sequence[BioKaLMASample]) -> set[str] | None:
    """The questions the text-quality judge sees (None: all), chosen over the whole split."""
    n = config.text_quality_sample
    if not config.text_quality or n is None:
        return None
    if config.mode == "reference":
        return set(reference_subset([s.id for s in samples], [s.has_graph for s in samples], n))
    with_graph = [s.id for s in samples if s.has_graph]
    return set(
        random.Random(f"{config.seed}:text-quality").sample(with_graph, min(n, len(with_graph)))
    )


def _context_graphs(
    config: RunConfig, samples: Sequence[BioKaLMASample]
) -> dict[str, tuple[Subgraph, ...]]:
    """The dataset graphs, with the retrieval ablation applied over the whole split."""
    graphs = {s.id: tuple(s.graphs) for s in samples}
    if config.retrieval_accuracy >= 100:
        return graphs
    corruption = corrupt_retrieval(graphs, config.retrieval_accuracy, seed=config.seed)
    return {k: tuple(v) for k, v in corruption.graphs_by_id.items()}


def _models(
    config: RunConfig,
    runtime: RunRuntime,
    data_dir: str | Path | None,
    contact: str | None,
    model: ChatModel | None,
    judge: ChatModel | None,
    nli: NLIModel | None,
    kg: KnowledgeGraph | None,
) -> _Models:
    cache = default_response_cache() if runtime.cache else None
    # --concurrency bounds the requests in flight per endpoint (answers and judge calls share
    # the limit when they go to the same server); without it each provider's default applies.
    limit = runtime.concurrency
    answerer = model or chat_model(
        config.model, base_url=config.base_url, cache=cache, concurrency=limit
    )
    if judge is None and config.text_quality:
        judge = chat_model(
            config.text_quality, base_url=config.judge_base_url, cache=cache, concurrency=limit
        )
    retriever = None
    identity = None
    if config.retrieval == "ner":
        if kg is None:
            opened = open_kg(config.kg, data_dir=data_dir, contact=contact)
            kg, identity = opened.kg, opened.identity
        else:
            identity = getattr(kg, "source_hash", None) or f"{type(kg).__name__} given by caller"
        retriever = Retriever(RetrievalConfig.reference() if config.mode == "reference" else None)
    return _Models(
        answerer=answerer,
        nli=nli or nli_model(config.nli),
        judge=judge,
        kg=kg,
        kg_identity=identity,
        retriever=retriever,
    )


async def _close(models: _Models, given_model: Any, given_judge: Any) -> None:
    if given_model is None:
        await models.answerer.aclose()
    if given_judge is None and models.judge is not None:
        await models.judge.aclose()


async def _answer_and_score(
    sample: BioKaLMASample,
    config: RunConfig,
    models: _Models,
    graphs_by_id: Mapping[str, tuple[Subgraph, ...]],
    gold: Mapping[str, GoldRecord] | None,
    judged: set[str] | None,
) -> dict[str, Any]:
    record: dict[str, Any] = {"id": sample.id, "index": sample.index}
    graphs: tuple[Subgraph, ...] = graphs_by_id[sample.id]
    if models.retriever is not None and models.kg is not None:
        retrieval = await models.retriever(sample.question, models.kg)
        graphs = tuple(retrieval.graphs)
        record["retrieval"] = {
            "qids": [g.center.id for g in graphs],
            "gold_qids": [g.center.id for g in sample.graphs],
            "mentions": [m.text for m in retrieval.mentions],
        }
    if config.retrieval_accuracy < 100:
        own = {g.center.id for g in sample.graphs}
        record["replaced_graphs"] = [g.center.id for g in graphs if g.center.id not in own]
    entry = gold.get(sample.id) if gold is not None else None
    if config.remove_knowledge and entry is not None:
        removal = remove_knowledge(
            graphs,
            entry.knowledge,
            config.remove_knowledge,
            strategy=config.remove_strategy,
            seed=config.seed,
            sample_id=sample.id,
        )
        graphs = tuple(removal.graphs)
        entry = GoldRecord(id=entry.id, knowledge=entry.knowledge, absent=tuple(removal.removed))
        record["removed"] = [t.as_list() for t in removal.removed]
        record["removal_note"] = removal.reason
    answer = await generate_answer(
        sample.question,
        graphs,
        models.answerer,
        config=config.generate_config(),
        prompt_version=config.prompt,
        split=config.split,
    )
    item = ScoreItem(
        id=sample.id,
        question=sample.question,
        answer=answer.text,
        graphs=graphs,
        gold=entry,
        gold_given=gold is not None,
    )
    [scored] = await score_items([item], config.score_config(), models.nli)
    record |= scored | _generation_fields(answer)
    record["graph_qids"] = [g.center.id for g in graphs]
    record["kg_given"] = [t.as_list() for g in graphs for t in g.triples]
    if models.judge is not None and not answer.error and (judged is None or sample.id in judged):
        quality = await judge_text_quality(
            sample.question,
            flatten_kg(graphs, config.prompt),
            answer.text,
            models.judge,
            mode=config.mode,
        )
        record["text_quality"] = quality.model_dump(mode="json")
    return record


def _generation_fields(answer: GeneratedAnswer) -> dict[str, Any]:
    gen = answer.generation
    return {
        "status": FAILED if answer.error else "ok",
        "empty_reason": answer.empty_reason,
        "prompt_version": answer.prompt_version,
        "generation": None if gen is None else gen.model_dump(mode="json", exclude={"text", "raw"}),
    }
