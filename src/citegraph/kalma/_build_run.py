"""``kalma build``: a KaLMA benchmark with gold minimum knowledge sets, built from a KG.

Pipeline (paper §2.2, Appendix A): person pairs (a CSV of ``name1,relation,name2[,paragraph]``
or pairs sampled from the KG) -> complete names only (A.1) -> name disambiguation in the KG
(A.2: the two entities connected by the stated relation) -> knowledge pool (their one-hop
subgraphs) -> evolutionary question generation (A.3, :func:`evolve`) -> a dataset directory
(:mod:`citegraph.kalma._build_output`).

The build is a run directory: ``run.json`` (configuration, KG and input hashes, prompt version,
models), ``samples.jsonl`` (one record per item, appended as it finishes: the pool, every round
with its scored candidates, the questions, the gold), ``metrics.json`` (selection report and
statistics). Re-running the command resumes; items whose model calls failed are retried.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citegraph.errors import ConfigError, EndpointError, MissingDependency, ModelError
from citegraph.kalma._build_disambiguate import Resolution, disambiguate_many
from citegraph.kalma._build_evolve import EvolveConfig, evolve
from citegraph.kalma._build_output import write_dataset
from citegraph.kalma._build_pairs import PersonPair, filter_complete, read_pairs_csv, sample_pairs
from citegraph.kalma._build_prompts import BUILD_PROMPTS
from citegraph.kalma._build_select import CoherenceNorm, PerplexityFn, relation_counts
from citegraph.kalma._build_templates import fact_sentence
from citegraph.kg import KnowledgeGraph, OxigraphKG, open_kg
from citegraph.models import ChatModel, GenerateConfig, chat_model, default_response_cache
from citegraph.runs import FAILED, RunDir, run_pending, sha256_file

Progress = Callable[[int, int], None]


class BuildConfig(BaseModel):
    """What a build does; written verbatim into ``run.json`` (its hash identifies the build)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kg: str = Field(default="biokalma", description="The KG: biokalma, codex-s, RDF paths...")
    pairs: str | None = Field(
        default=None, description="CSV of person pairs: name1,relation,name2[,paragraph]."
    )
    sample_pairs: int | None = Field(
        default=None, ge=1, description="Sample this many connected person pairs from the KG."
    )
    model: str = Field(default="local", description="Generating model (provider/model).")
    base_url: str | None = Field(default=None, description="Server URL (OpenAI-compatible).")
    lm: str = Field(
        default="local",
        description="Causal LM for the coherence perplexity: local (SmolLM2), hf:<id or path>.",
    )
    rounds: int = Field(default=5, ge=1, description="Rounds (1 = annotation only).")
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="Rarity weight in selection.")
    coherence: CoherenceNorm = Field(
        default="softmax",
        description="Coherence term: softmax of 1/perplexity over the round (paper) or minmax "
        "(1/perplexity rescaled to [0, 1] in the round, so it can compete with rarity).",
    )
    temperature: float = Field(default=0.1, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=512, ge=1, description="Most tokens per model reply.")
    seed: int = Field(default=0, description="Seed of pair sampling, generation, human sheet.")
    complete_names: bool = Field(
        default=True, description="Drop pairs whose names are incomplete (Appendix A.1)."
    )
    prompts: str = Field(default=BUILD_PROMPTS, description="Prompt version.")

    @model_validator(mode="after")
    def _one_source(self) -> BuildConfig:
        if (self.pairs is None) == (self.sample_pairs is None):
            raise ConfigError("give exactly one of --pairs FILE.csv or --sample-pairs N")
        return self

    def evolve_config(self) -> EvolveConfig:
        """Rounds, alpha and sampling parameters of each item."""
        generate = GenerateConfig(
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed
        )
        return EvolveConfig(
            rounds=self.rounds, alpha=self.alpha, coherence=self.coherence, generate=generate
        )


class BuildResult(BaseModel):
    """What :func:`build_benchmark` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_items: int
    n_failed: int
    n_resumed: int


def build_benchmark(out: str | Path, config: BuildConfig, **options: Any) -> BuildResult:
    """Blocking form of :func:`build_benchmark_async`."""
    return asyncio.run(build_benchmark_async(out, config, **options))


async def build_benchmark_async(
    out: str | Path,
    config: BuildConfig,
    *,
    data_dir: str | Path | None = None,
    kg: KnowledgeGraph | None = None,
    model: ChatModel | None = None,
    perplexity: PerplexityFn | None = None,
    concurrency: int | None = None,
    cache: bool = True,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> BuildResult:
    """Build a benchmark into the directory ``out`` (see the module docstring).

    Args:
        out: The dataset / run directory.
        config: What to build.
        data_dir: Where the datasets are (for the embedded KGs).
        kg, model, perplexity: Ready objects instead of building them from ``config``.
        concurrency: Items evolving at once (default: the model's request limit).
        cache: Use the SQLite response cache for model calls.
        overwrite: Replace a different build in ``out``.
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total)`` callback.
    """
    kg_identity = "given by caller"
    if kg is None:
        opened = open_kg(config.kg, data_dir=data_dir)
        kg, kg_identity = opened.kg, opened.identity
    pairs, data = _pairs(config, kg)
    kept, dropped = filter_complete(pairs) if config.complete_names else (pairs, [])
    resolutions = await disambiguate_many(kept, kg)
    resolved = [r for r in resolutions if r.status == "resolved"]
    counts = relation_counts([r.pool for r in resolved])
    given_model = model
    responses = default_response_cache() if cache else None
    model = model or chat_model(config.model, base_url=config.base_url, cache=responses)
    lm_name = getattr(perplexity, "__qualname__", "perplexity function given by caller")
    if perplexity is None:
        perplexity, lm_name = _perplexity(config.lm)
    identity = config.model_dump(mode="json") | {
        "task": "kalma.build",
        "model_name": model.name,
        "lm_name": lm_name,
    }
    run = RunDir.open(
        out,
        identity,
        data=data | {"kg": kg_identity},
        command=command,
        overwrite=overwrite,
        runtime={"concurrency": concurrency, "cache": cache},
    )
    items = [(f"item-{i}", r) for i, r in enumerate(resolved)]
    limit = concurrency or int(getattr(model, "concurrency", 0) or 2)

    async def work(resolution_item: tuple[str, Resolution]) -> dict[str, Any]:
        item_id, resolution = resolution_item
        return await _build_item(item_id, resolution, model, perplexity, counts, config)

    try:
        n_resumed, _ = await run_pending(
            run, [(k, (k, r)) for k, r in items], work, concurrency=limit, progress=progress
        )
    finally:
        run.close()
        if given_model is None:  # a caller's model stays open for the caller
            await model.aclose()
    order = {item_id: k for k, (item_id, _) in enumerate(items)}
    records = sorted((r for r in run.records if r["id"] in order), key=lambda r: order[r["id"]])
    ok = [r for r in records if r.get("status") != FAILED]
    stats = await write_dataset(Path(out), ok, kg, seed=config.seed)
    metrics = {
        "selection": _selection_report(pairs, dropped, resolutions),
        "n_items": len(ok),
        "n_failed": len(records) - len(ok),
        "stats": stats,
        "relation_counts": {"n_items": counts.n_items, "counts": counts.counts},
        "setup": {
            "model": model.name,
            "lm": lm_name,
            "prompts": config.prompts,
            "rounds": config.rounds,
            "alpha": config.alpha,
            "coherence": config.coherence,
            "temperature": config.temperature,
            "seed": config.seed,
            "kg": config.kg,
            "kg_identity": kg_identity,
        },
    }
    run.write_metrics(metrics)
    return BuildResult(
        out=Path(out),
        metrics=metrics,
        n_items=len(ok),
        n_failed=len(records) - len(ok),
        n_resumed=n_resumed,
    )


def _pairs(config: BuildConfig, kg: KnowledgeGraph) -> tuple[list[PersonPair], dict[str, str]]:
    if config.pairs is not None:
        return read_pairs_csv(config.pairs), {"pairs": sha256_file(config.pairs)}
    if not isinstance(kg, OxigraphKG):
        raise ConfigError("--sample-pairs needs an embedded KG (biokalma, codex-s, RDF files)")
    assert config.sample_pairs is not None
    return sample_pairs(kg, config.sample_pairs, seed=config.seed), {}


def _perplexity(spec: str) -> tuple[PerplexityFn, str]:
    from citegraph.models import causal_lm_scorer

    scorer = causal_lm_scorer(spec)
    return scorer.perplexities, scorer.name


async def _build_item(
    item_id: str,
    resolution: Resolution,
    model: ChatModel,
    perplexity: PerplexityFn,
    counts: Any,
    config: BuildConfig,
) -> dict[str, Any]:
    pair = resolution.pair
    pool = resolution.pool
    names = {g.center.id: g.center.name for g in pool}
    link = resolution.facts[0]
    seed = pair.paragraph or fact_sentence(link, names.get(link.subject, link.subject_label or ""))
    record: dict[str, Any] = {
        "id": item_id,
        "pair": pair.model_dump(mode="json"),
        "qids": [g.center.id for g in pool],
        "link": [f.as_list() for f in resolution.facts],
        "seed_paragraph": seed,
        "seed_source": "pairs file" if pair.paragraph else "template of the connecting fact",
        "entities": [g.as_entity_dict() for g in pool],
    }
    try:
        evolution = await evolve(seed, pool, model, perplexity, counts, config.evolve_config())
    except MissingDependency:
        raise
    except (EndpointError, ModelError) as exc:
        return record | {"status": FAILED, "error": f"{type(exc).__name__}: {exc}"}
    return record | {
        "status": "ok",
        "rounds": [r.model_dump(mode="json") for r in evolution.rounds],
        "round1_knowledge": [t.as_list() for t in evolution.round1_knowledge],
        "injected": [t.as_list() for t in evolution.injected],
        "knowledge": [t.as_list() for t in evolution.knowledge],
        "paragraph": evolution.paragraph,
        "general_question": evolution.general_question,
        "specific_question": evolution.specific_question,
        "stopped_early": evolution.stopped_early,
    }


def _selection_report(
    pairs: Sequence[PersonPair], dropped: Sequence[Any], resolutions: Sequence[Resolution]
) -> dict[str, Any]:
    status = Counter(r.status for r in resolutions)
    return {
        "n_pairs": len(pairs),
        "n_incomplete_names": len(dropped),
        "n_resolved": status.get("resolved", 0),
        "n_ambiguous": status.get("ambiguous", 0),
        "n_unresolved": status.get("unresolved", 0),
        "not_resolved": [
            {"pair": r.pair.model_dump(mode="json"), "status": r.status, "reason": r.reason}
            for r in resolutions
            if r.status != "resolved"
        ],
    }
