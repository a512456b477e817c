"""OxigraphKG over the real BioKaLMA graphs: lookup, subgraphs, facts, writes, the disk cache."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from citegraph.errors import KGError, KGQueryError
from citegraph.kg import KnowledgeGraph, OxigraphKG, Subgraph, Triple, load_biokalma_kg
from citegraph.kg._ondisk import default_cache_dir

BIOKALMA_FILES = ("simple_question_graph.json", "complex_question_graph.json")


def _entity_dicts(data_dir: Path) -> list[dict[str, str]]:
    out = []
    for name in BIOKALMA_FILES:
        for _question, entities in json.loads((data_dir / "biokalma" / name).read_text()):
            out.extend(entities)
    return out


@pytest.fixture(scope="module")
def kg(data_dir: Path) -> OxigraphKG:
    return load_biokalma_kg(data_dir, use_cache=False)


@pytest.fixture(scope="module")
def dicts(data_dir: Path) -> list[dict[str, str]]:
    return _entity_dicts(data_dir)


def test_is_a_knowledge_graph(kg: OxigraphKG) -> None:
    assert isinstance(kg, KnowledgeGraph)


def test_counts_match_an_independent_reading_of_the_files(
    kg: OxigraphKG, dicts: list[dict[str, str]]
) -> None:
    # Independent count: distinct (qid, key, value) over both files, skipping 'qid' and empty
    # values. Computed by hand once: 1,076 people and 19,311 facts (both files hold the same
    # graphs; 2,494 entity dicts in all).
    facts = {(d["qid"], k, v) for d in dicts for k, v in d.items() if k != "qid" and v != ""}
    people = {d["qid"] for d in dicts}
    assert len(people) == 1076
    assert len(facts) == 19311
    assert len(kg) == len(facts)
    assert len(dicts) == 2494


def test_stephen_crane_facts(kg: OxigraphKG) -> None:
    # simple_question_graph.json entry 0: Stephen Crane (Q206534), born in Newark, died
    # 1900-06-05 in Badenweiler; his dict has 27 keys, 26 of them facts (all but 'qid').
    assert kg.has_fact_sync(Triple(subject="Q206534", relation="place of birth", value="Newark"))
    assert kg.has_fact_sync(Triple(subject="Q206534", relation="date_of_death", value="1900-06-05"))
    assert kg.has_fact_sync(Triple(subject="Q206534", relation="name", value="Stephen Crane"))
    assert not kg.has_fact_sync(
        Triple(subject="Q206534", relation="place of birth", value="Munich")
    )
    assert not kg.has_fact_sync(
        Triple(subject="Q206534", relation="Place of birth", value="Newark")
    )
    assert not kg.has_fact_sync(Triple(subject="Q1", relation="place of birth", value="Newark"))
    sub = kg.subgraph_sync("Q206534")
    assert len(sub) == 26
    assert sub.center.name == "Stephen Crane"
    assert sub.center.types == ("human",)
    assert sub.values("place of death") == ["Badenweiler"]
    assert all(t.subject_label == "Stephen Crane" and t.value_id is None for t in sub)
    # BioKaLMA has labels only: relation ids are unknown.
    assert all(t.relation_id is None for t in sub)
    facts = kg.facts_sync("Q206534", "place of birth")
    assert [t.as_list() for t in facts] == [["Q206534", "place of birth", "Newark"]]
    assert kg.facts_sync("Q206534", "no such relation") == []


def test_every_subgraph_equals_the_entity_dicts(
    kg: OxigraphKG, dicts: list[dict[str, str]]
) -> None:
    expected: dict[str, set[Triple]] = {}
    for d in dicts:
        expected.setdefault(d["qid"], set()).update(Subgraph.from_entity_dict(d).triples)
    for qid, triples in expected.items():
        assert set(kg.subgraph_sync(qid).triples) == triples, qid


def test_find_entities_exact_and_case_insensitive(kg: OxigraphKG) -> None:
    [crane] = kg.find_entities_sync("Stephen Crane")
    assert (crane.id, crane.name, crane.types) == ("Q206534", "Stephen Crane", ("human",))
    assert kg.find_entities_sync("stephen crane") == []
    assert kg.find_entities_sync("stephen crane", case_sensitive=False) == [crane]
    assert kg.find_entities_sync("STEPHEN CRANE", case_sensitive=False) == [crane]
    # Two BioKaLMA people are called Thomas Jefferson (Q11812, Q76012398); QIDs sort numerically.
    both = kg.find_entities_sync("Thomas Jefferson")
    assert [e.id for e in both] == ["Q11812", "Q76012398"]
    assert [e.id for e in kg.find_entities_sync("Thomas Jefferson", limit=1)] == ["Q11812"]
    assert kg.find_entities_sync("Thomas Jefferson", limit=0) == []


def test_type_filter(kg: OxigraphKG) -> None:
    assert [e.id for e in kg.find_entities_sync("Stephen Crane", type="human")] == ["Q206534"]
    assert kg.find_entities_sync("Stephen Crane", type="city") == []
    assert kg.find_entities_sync("Stephen Crane", type="Human") == []
    found = kg.find_entities_sync("stephen crane", type="Human", case_sensitive=False)
    assert [e.id for e in found] == ["Q206534"]
    # BioKaLMA's "instance of" values carry no ids, so a type id cannot match them.
    assert kg.find_entities_sync("Stephen Crane", type="Q5") == []


def test_unknown_entities(kg: OxigraphKG) -> None:
    assert kg.find_entities_sync("No Such Person Anywhere") == []
    assert kg.find_entities_sync("") == []
    with pytest.raises(KGQueryError, match="unknown entity"):
        kg.subgraph_sync("Q1")
    with pytest.raises(KGQueryError):
        kg.subgraph_sync("")
    assert kg.facts_sync("Q1") == []
    assert kg.entity_sync("Q1") is None
    assert kg.entity_sync("Q206534") is not None
    # Relation labels are properties, not entities.
    assert kg.find_entities_sync("place of birth") == []


def test_async_protocol_methods(kg: OxigraphKG) -> None:
    async def run() -> tuple[object, ...]:
        return (
            await kg.find_entities("stephen crane", case_sensitive=False, type="human"),
            await kg.subgraph("Q206534"),
            await kg.has_fact(Triple(subject="Q206534", relation="religion", value="atheism")),
            await kg.facts("Q206534", "religion"),
        )

    found, sub, has, facts = asyncio.run(run())
    assert [e.id for e in found] == ["Q206534"]  # type: ignore[attr-defined]
    assert sub == kg.subgraph_sync("Q206534")
    assert has is True
    assert [t.value for t in facts] == ["atheism"]  # type: ignore[attr-defined]


def test_add_triples_in_memory(kg: OxigraphKG) -> None:
    mem = kg.to_memory()
    assert len(mem) == len(kg) == 19311
    assert mem.source_hash == kg.source_hash is not None
    new = [
        Triple(subject="Q206534", relation="place of birth", value="Newark"),  # already there
        Triple(subject="Q206534", relation="pet", value="Solomon", subject_label="ignored"),
        Triple(
            subject="Q999999001",
            relation="employer",
            value="Acme Newspapers",
            subject_label="Ada Example",
            relation_id="P108",
            value_id="Q999999002",
        ),
    ]
    assert mem.add_triples(new) == 2
    assert len(mem) == 19313
    assert mem.source_hash is None
    assert mem.add_triples(new) == 0
    assert len(kg) == 19311  # the original is untouched
    sub = mem.subgraph_sync("Q206534")
    assert sub.center.name == "Stephen Crane"  # an existing label is not replaced
    assert sub.values("pet") == ["Solomon"]
    [ada] = mem.find_entities_sync("ada example", case_sensitive=False)
    [fact] = mem.facts_sync(ada.id)
    assert fact.key == ("Q999999001", "employer", "Acme Newspapers")
    assert (fact.relation_id, fact.value_id) == ("P108", "Q999999002")
    assert [e.id for e in mem.find_entities_sync("Acme Newspapers")] == ["Q999999002"]
    assert Triple(subject="Q999999001", relation="employer", value="Acme Newspapers") in mem
    with pytest.raises(KGError):
        mem.add_triples([Triple(subject="http://bad iri", relation="r", value="v")])


def test_hand_built_store_with_non_wikidata_ids() -> None:
    kg = OxigraphKG.in_memory()
    assert len(kg) == 0
    kg.add_triples(
        [
            Triple(subject="e1", relation="instance of", value="city", subject_label="Springfield"),
            Triple(subject="e1", relation="twinned with", value="Shelbyville", value_id="e 2"),
        ]
    )
    [city] = kg.find_entities_sync("Springfield", type="city")
    assert city.id == "e1"
    assert kg.find_entities_sync("Shelbyville")[0].id == "e 2"
    assert [t.value_id for t in kg.facts_sync("e1", "twinned with")] == ["e 2"]


def test_disk_cache_is_reused(data_dir: Path, tmp_path: Path) -> None:
    first = load_biokalma_kg(data_dir, cache_dir=tmp_path)
    assert first.imported and first.read_only
    assert first.path == tmp_path / first.source_hash  # type: ignore[operator]
    assert (first.path / "COMPLETE.json").is_file()  # type: ignore[operator]
    second = load_biokalma_kg(data_dir, cache_dir=tmp_path)
    assert not second.imported
    assert second.path == first.path and second.source_hash == first.source_hash
    assert len(second) == 19311
    assert second.has_fact_sync(
        Triple(subject="Q206534", relation="place of birth", value="Newark")
    )
    with pytest.raises(KGError, match="read-only"):
        second.add_triples([Triple(subject="Q1", relation="r", value="v")])
    # Only the entry directory is left: the temporary import directory was renamed.
    assert [p.name for p in tmp_path.iterdir()] == [first.source_hash]
    writable = second.to_memory()
    assert writable.add_triples([Triple(subject="Q206534", relation="pet", value="Solomon")]) == 1
    assert len(writable) == 19312 and len(second) == 19311


def test_default_cache_dir_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "root"))
    assert default_cache_dir() == tmp_path / "root" / "kg"
    monkeypatch.delenv("CITEGRAPH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "citegraph" / "kg"


def test_changed_source_gets_a_new_entry_and_partial_entries_are_rebuilt(tmp_path: Path) -> None:
    src = tmp_path / "graph.json"
    cache = tmp_path / "cache"
    src.write_text(json.dumps([["q?", [{"qid": "Q1", "name": "A", "sex or gender": "male"}]]]))
    one = OxigraphKG.from_source("biokalma", [src], cache_dir=cache)
    assert len(one) == 2  # 'name' and 'sex or gender'
    src.write_text(json.dumps([["q?", [{"qid": "Q1", "name": "A", "sex or gender": "female"}]]]))
    two = OxigraphKG.from_source("biokalma", [src], cache_dir=cache)
    assert two.imported and two.source_hash != one.source_hash
    assert two.facts_sync("Q1", "sex or gender")[0].value == "female"
    # An entry without its marker (an interrupted import) is imported again.
    entry = two.path
    del two
    (entry / "COMPLETE.json").unlink()  # type: ignore[operator]
    three = OxigraphKG.from_source("biokalma", [src], cache_dir=cache)
    assert three.imported and three.path == entry and len(three) == 2
