"""The two halves of ``kalma build``: choosing the items, and building one item.

:func:`select_items` runs before any model (paper Appendix A.1-A.2): person pairs (a CSV or
sampled from the KG) -> complete names only -> name disambiguation in the KG -> the resolved
pairs, their knowledge pools and the relation counts the fact selection needs. It is
deterministic, so every shard of a build selects the same items. :func:`build_item` evolves one
item (A.3, :func:`evolve`) and checks its gold facts against the KG; its result is the item's
line of ``samples.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, EndpointError, MissingDependency, ModelError
from citegraph.kalma.build._config import KalmaBuildConfig
from citegraph.kalma.build._disambiguate import Resolution, disambiguate_many_async
from citegraph.kalma.build._evolve import evolve_async
from citegraph.kalma.build._pairs import PersonPair, filter_complete, read_pairs_csv, sample_pairs
from citegraph.kalma.build._select import PerplexityFn, RelationCounts, relation_counts
from citegraph.kalma.build._templates import fact_sentence
from citegraph.kg import KnowledgeGraph, OpenedKG, OxigraphKG, Triple
from citegraph.models import ChatModel
from citegraph.runs import FAILED, error_fields, sha256_file


class BuildSelection(BaseModel):
    """The items of a build and how they were chosen (before any model runs)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    kg: KnowledgeGraph
    kg_identity: str
    data: dict[str, str] = Field(description="Input files and their SHA-256 (build identity).")
    resolved: list[Resolution] = Field(description="The items: pairs resolved in the KG.")
    counts: RelationCounts = Field(description="Relation counts over the resolved pools.")
    report: dict[str, Any] = Field(description="The selection report of metrics.json.")


async def select_items(
    config: KalmaBuildConfig, *, kg: KnowledgeGraph | OpenedKG
) -> BuildSelection:
    """Read or sample the pairs, keep complete names, disambiguate them in ``kg``: the caller's
    KG, or the one ``config.kg`` names, opened (its identity recorded; its opener closes it).

    Raises:
        ConfigError: ``--sample-pairs`` with a KG that is not embedded.
        DataError: the pairs file is malformed.
    """
    kg_identity = "given by caller"
    if isinstance(kg, OpenedKG):
        kg_identity, kg = kg.identity, kg.kg
    pairs, data = _pairs(config, kg)
    kept, dropped = filter_complete(pairs) if config.complete_names else (pairs, [])
    resolutions = await disambiguate_many_async(kept, kg)
    resolved = [r for r in resolutions if r.status == "resolved"]
    return BuildSelection(
        kg=kg,
        kg_identity=kg_identity,
        data=data | {"kg": kg_identity},
        resolved=resolved,
        counts=relation_counts([r.pool for r in resolved]),
        report=_selection_report(pairs, dropped, resolutions),
    )


def _pairs(config: KalmaBuildConfig, kg: KnowledgeGraph) -> tuple[list[PersonPair], dict[str, str]]:
    if config.pairs is not None:
        return read_pairs_csv(config.pairs), {"pairs": sha256_file(config.pairs)}
    if not isinstance(kg, OxigraphKG):
        raise ConfigError("--sample-pairs needs an embedded KG (biokalma, codex-s, RDF files)")
    assert config.sample_pairs is not None
    return sample_pairs(kg, config.sample_pairs, seed=config.seed), {}


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


async def build_item(
    item_id: str,
    resolution: Resolution,
    model: ChatModel,
    perplexity: PerplexityFn,
    counts: RelationCounts,
    config: KalmaBuildConfig,
    kg: KnowledgeGraph,
) -> dict[str, Any]:
    """Evolve one item; a failed model call gives ``status: failed`` (retried on resume)."""
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
        evolution = await evolve_async(
            seed, pool, model, perplexity, counts, config.evolve_config()
        )
    except MissingDependency:
        raise
    except (EndpointError, ModelError) as exc:
        return record | {"status": FAILED, **error_fields(exc)}
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
        "gold_facts_not_in_kg": await facts_not_in_kg(evolution.knowledge, kg),
    }


async def facts_not_in_kg(facts: Sequence[Triple], kg: KnowledgeGraph) -> list[list[str]]:
    """The facts the KG does not hold (the build's check that every gold fact is real), each
    looked up as ``samples.jsonl`` records it."""
    rows = [fact.as_list() for fact in facts]
    return [row for row in rows if not await kg.has_fact(Triple.from_list(row))]
