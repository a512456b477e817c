"""User strings reach the store only as RDF terms: injection attempts match nothing, change
nothing, and an entity literally named like an attack is found verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.errors import KGQueryError
from citegraph.kg import OxigraphKG, Triple, load_biokalma_kg

ATTACKS = [
    'x" } DROP ALL #',
    '"; DELETE WHERE { ?s ?p ?o } #',
    'Stephen Crane"@en . ?x ?y ?z',
    "Stephen Crane'@en",
    "Stephen Crane\\",
    "Stephen\\u0020Crane",
    "Stephen Crane\n",
    "Stephen\nCrane",
    "Stephen Crane\x00",
    "<http://www.wikidata.org/entity/Q206534>",
    "Q206534> <http://x> <http://y",
    "?s",
    "}}}}",
    "Stéphen Crâne ✓ 斯蒂芬·克莱恩",
]

BAD_IDS = ["", "Q206534 ", "Q206534> <x", "http://a b", "_:not valid", "Q0", "wd:Q206534"]


@pytest.fixture(scope="module")
def kg(data_dir: Path) -> OxigraphKG:
    return load_biokalma_kg(data_dir, use_cache=False)


def _snapshot(kg: OxigraphKG) -> tuple[int, int]:
    return len(kg), len(kg.store)


@pytest.mark.parametrize("attack", ATTACKS)
def test_attacks_match_nothing_and_change_nothing(kg: OxigraphKG, attack: str) -> None:
    before = _snapshot(kg)
    assert kg.find_entities_sync(attack) == []
    assert kg.find_entities_sync(attack, case_sensitive=False) == []
    assert kg.find_entities_sync("Stephen Crane", type=attack) == []
    assert kg.find_entities_sync("Stephen Crane", type=attack, case_sensitive=False) == []
    with pytest.raises(KGQueryError):
        kg.subgraph_sync(attack)
    assert kg.facts_sync(attack) == []
    assert kg.facts_sync("Q206534", attack) == []
    assert not kg.has_fact_sync(Triple(subject=attack, relation=attack, value=attack))
    assert not kg.has_fact_sync(Triple(subject="Q206534", relation="place of birth", value=attack))
    assert not kg.has_fact_sync(Triple(subject="Q206534", relation=attack, value="Newark"))
    assert _snapshot(kg) == before == (19311, before[1])
    assert [e.id for e in kg.find_entities_sync("Stephen Crane")] == ["Q206534"]


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_bad_ids_are_no_match_not_a_pyoxigraph_error(kg: OxigraphKG, bad_id: str) -> None:
    with pytest.raises(KGQueryError, match="unknown entity"):
        kg.subgraph_sync(bad_id)
    assert kg.entity_sync(bad_id) is None
    assert kg.facts_sync(bad_id) == []
    assert not kg.has_fact_sync(Triple(subject=bad_id, relation="place of birth", value="Newark"))


def test_unencodable_text_is_no_match(kg: OxigraphKG) -> None:
    lone_surrogate = "Stephen \ud800Crane"
    assert kg.find_entities_sync(lone_surrogate) == []
    assert kg.find_entities_sync(lone_surrogate, case_sensitive=False) == []
    assert kg.facts_sync(lone_surrogate) == []


def test_entities_named_like_attacks_are_found_verbatim(kg: OxigraphKG) -> None:
    mem = kg.to_memory()
    named = [
        Triple(
            subject=f"Q{990000000 + i}",
            relation=attack,  # the relation label is an attack too
            value=attack,
            subject_label=attack,
        )
        for i, attack in enumerate(ATTACKS)
        if "\x00" not in attack  # NUL is storable, but keep labels printable for the message
    ]
    assert mem.add_triples(named) == len(named)
    assert len(mem) == 19311 + len(named)
    for triple in named:
        [found] = mem.find_entities_sync(triple.value)
        assert (found.id, found.name) == (triple.subject, triple.value)
        [folded] = mem.find_entities_sync(triple.value.upper(), case_sensitive=False)
        assert folded.id == triple.subject
        assert mem.has_fact_sync(triple)
        assert [t.key for t in mem.facts_sync(triple.subject, triple.value)] == [triple.key]
    # Near misses of a stored attack label do not match it.
    assert mem.find_entities_sync('x" } DROP ALL') == []
    assert mem.find_entities_sync("Stephen Crane\\\\") == []
    # The real Stephen Crane is untouched and still unique.
    assert [e.id for e in mem.find_entities_sync("Stephen Crane")] == ["Q206534"]
    assert len(mem.subgraph_sync("Q206534")) == 26
