"""``caqa build``: a CAQA benchmark built from a KG and KGQA questions (§4).

Pipeline: KGQA questions with logical queries (a dataset reader, or queries sampled from the KG)
-> grounding in the KG -> per question (:func:`build_item`): query extension, the four structured
attributions, text -> train / dev / test splits by question -> Table 4 statistics.

The output directory is a run directory: ``run.json`` (configuration, KG identity, versions),
``samples.jsonl`` (one record per question, appended as it finishes, with its CAQA samples or
the reason it gave none), then ``train.jsonl``, ``dev.jsonl``, ``test.jsonl`` (one
:class:`CaqaSample` per line), ``stats.json`` / ``stats.md`` and ``metrics.json``. Re-running
the command resumes; questions whose model calls failed are retried; ``--limit`` can grow.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citegraph.caqa._build_item import build_item
from citegraph.caqa._extend import UnionPartners
from citegraph.caqa._graph import CaqaKG
from citegraph.caqa._kgqa import KGQA_SETS, KGQASample, ground_set, load_kgqa
from citegraph.caqa._sampler import sample_queries
from citegraph.caqa._samples_io import write_samples
from citegraph.caqa._splits import assign_splits, parse_fractions, render_statistics, statistics
from citegraph.caqa._text_llm import LLMTextualiser, TemplateTextualiser, Textualiser
from citegraph.caqa._types import CATEGORIES, CaqaSample, Category
from citegraph.errors import ConfigError
from citegraph.io import atomic_write
from citegraph.kg import OxigraphKG, open_kg
from citegraph.models import ChatModel, chat_model, default_response_cache
from citegraph.runs import FAILED, RunDir, run_pending

Progress = Callable[[int, int], None]
SAMPLED = "sample"
_ENTITY_IN_REASON = re.compile(r"\b(answer|replacement) (?!entit)\S+")


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
    base_url: str | None = Field(default=None, description="Server URL for the text model.")
    splits: str = Field(default="0.8,0.1,0.1", description="Train,dev,test fractions.")

    @field_validator("questions")
    @classmethod
    def _known_set(cls, value: str) -> str:
        if value != SAMPLED and value not in KGQA_SETS:
            names = ", ".join([*sorted(KGQA_SETS), SAMPLED])
            raise ValueError(f"unknown question set {value!r}; choose from {names}")
        return value


class CaqaBuildResult(BaseModel):
    """What :func:`build_caqa` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_questions: int
    n_samples: int
    n_failed: int
    n_resumed: int


def build_caqa(out: str | Path, config: CaqaBuildConfig, **options: Any) -> CaqaBuildResult:
    """Blocking form of :func:`build_caqa_async`."""
    return asyncio.run(build_caqa_async(out, config, **options))


async def build_caqa_async(
    out: str | Path,
    config: CaqaBuildConfig,
    *,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    cache: bool = True,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> CaqaBuildResult:
    """Build a CAQA benchmark into ``out`` (see the module docstring).

    Args:
        out: The output / run directory.
        config: What to build.
        data_dir: Where the datasets are.
        model: A ready chat model for the text (instead of ``config.text``).
        limit: Build from the first N questions only (can be raised later; resumes).
        concurrency: Questions in flight (default: the text model's request limit, else 4).
        cache: Use the SQLite response cache for model calls.
        overwrite: Replace a different build in ``out``.
        command: The command line, for ``run.json``.
        progress: Optional ``(done, total)`` callback.
    """
    fractions = parse_fractions(config.splits)
    started = time.perf_counter()
    kg, kg_identity, items, input_report = _questions(config, data_dir)
    if limit is not None:
        items = items[:limit]
    given_model = model
    textualiser: Textualiser
    if config.text == "template" and model is None:
        textualiser = TemplateTextualiser()
    else:
        responses = default_response_cache() if cache else None
        model = model or chat_model(config.text, base_url=config.base_url, cache=responses)
        textualiser = LLMTextualiser(model, seed=config.seed)
    identity = config.model_dump(mode="json") | {
        "task": "caqa.build",
        "textualiser": textualiser.name,
        "text_version": textualiser.version,
    }
    run = RunDir.open(
        out,
        identity,
        data={"kg": kg_identity},
        command=command,
        overwrite=overwrite,
        runtime={"limit": limit, "concurrency": concurrency, "cache": cache},
    )
    in_flight = concurrency or int(getattr(model, "concurrency", 0) or 4)

    async def work(item: KGQASample) -> dict[str, Any]:
        return await build_item(
            item,
            kg,
            textualiser,
            seed=config.seed,
            max_answers=config.max_answers,
            max_facts=config.max_facts,
            union_partners=config.union_partners,
            categories=config.categories,
        )

    try:
        n_resumed, _ = await run_pending(
            run, [(i.id, i) for i in items], work, concurrency=in_flight, progress=progress
        )
    finally:
        run.close()
        if model is not None and given_model is None:
            await model.aclose()
    wanted = {i.id for i in items}
    records = [r for r in run.records if r["id"] in wanted]
    metrics = _finish(Path(out), records, config, fractions)
    metrics["inputs"] = input_report | {"n_questions_built": len(items)}
    metrics["setup"] = {
        "kg": config.kg,
        "kg_identity": kg_identity,
        "questions": config.questions,
        "textualiser": textualiser.name,
        "text_version": textualiser.version,
        "seed": config.seed,
        "max_answers": config.max_answers,
        "max_facts": config.max_facts,
        "splits": list(fractions),
    }
    metrics["seconds"] = round(time.perf_counter() - started, 3)
    run.write_metrics(metrics)
    return CaqaBuildResult(
        out=Path(out),
        metrics=metrics,
        n_questions=len(items),
        n_samples=metrics["n_samples"],
        n_failed=metrics["records"]["failed"],
        n_resumed=n_resumed,
    )


def _questions(
    config: CaqaBuildConfig, data_dir: str | Path | None
) -> tuple[CaqaKG, str, list[KGQASample], dict[str, Any]]:
    """The KG and the grounded questions to build from, plus what was dropped and why."""
    kgqa = None if config.questions == SAMPLED else load_kgqa(config.questions, data_dir)
    spec = config.kg or (kgqa.kg if kgqa is not None else "codex-s")
    opened = open_kg(spec, data_dir=data_dir)
    if not isinstance(opened.kg, OxigraphKG):
        raise ConfigError(
            f"caqa build needs an embedded KG (codex-s, pathquestion-2h, RDF files...); {spec!r} "
            "is a remote endpoint"
        )
    kg = CaqaKG(opened.kg, name=spec)
    if kgqa is None:
        items = sample_queries(kg, config.sample, seed=config.seed, max_answers=config.max_answers)
        return kg, opened.identity, items, {"source": "sampled from the KG", "n_read": len(items)}
    grounded, dropped = ground_set(kgqa, kg)
    report = {
        "source": config.questions,
        "n_read": len(kgqa.samples),
        "skipped_reading": dict(kgqa.skipped),
        "skipped_grounding": dict(dropped),
        "n_grounded": len(grounded),
    }
    return kg, opened.identity, grounded, report


def _finish(
    out: Path,
    records: Sequence[dict[str, Any]],
    config: CaqaBuildConfig,
    fractions: tuple[float, float, float],
) -> dict[str, Any]:
    """Write the splits and statistics; return the build metrics."""
    status = Counter(r.get("status") for r in records)
    samples = [
        CaqaSample.model_validate(s)
        for r in records
        if r.get("status") == "ok"
        for s in r.get("samples", [])
    ]
    by_split = assign_splits(samples, fractions, config.seed)
    for split, part in by_split.items():
        write_samples(out / f"{split}.jsonl", part)
    table = statistics(by_split)
    atomic_write(out / "stats.md", render_statistics(table))
    unavailable: Counter[str] = Counter()
    for r in records:
        for category, reason in (r.get("unavailable") or {}).items():
            # counted by kind: the entity in the reason is kept in the question's record only
            kind = _ENTITY_IN_REASON.sub(r"\1 <entity>", reason)
            unavailable[f"{category}: {kind}"] += 1
    metrics: dict[str, Any] = {
        "n_samples": len(samples),
        "records": {
            "ok": status.get("ok", 0),
            "skipped": status.get("skipped", 0),
            "failed": status.get(FAILED, 0),
        },
        "skipped": dict(Counter(r["reason"] for r in records if r.get("status") == "skipped")),
        "failed": [
            {"id": r["id"], "error": r.get("error")} for r in records if r.get("status") == FAILED
        ],
        "extensions": dict(Counter(r.get("extension") for r in records if r.get("status") == "ok")),
        "extensions_drawn": dict(
            Counter(r.get("extension_drawn") for r in records if r.get("status") == "ok")
        ),
        "unavailable": dict(unavailable.most_common()),
        "statistics": table,
    }
    atomic_write(out / "stats.json", json.dumps(table, indent=2) + "\n")
    return metrics
