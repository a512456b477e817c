"""List-valued entity dicts (kalma build keeps every fact) and OxigraphKG.entity_ids_sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.errors import DataError
from citegraph.kg import Entity, OxigraphKG, Subgraph, Triple, load_biokalma_kg

PELE = {
    "instance of": "human",
    "name": "Pelé",
    "member of sports team": ["Santos FC", "", "New York Cosmos", "Santos FC"],
    "occupation": ["association football player"],
    "award received": [],
    "date_of_death": "",
    "qid": "Q12897",
}


def test_from_entity_dict_one_triple_per_list_element() -> None:
    graph = Subgraph.from_entity_dict(PELE)
    assert graph.center == Entity(id="Q12897", name="Pelé", types=("human",))
    # Empty strings and empty lists are no facts; a repeated element is one fact.
    assert [t.key for t in graph.triples] == [
        ("Q12897", "instance of", "human"),
        ("Q12897", "name", "Pelé"),
        ("Q12897", "member of sports team", "Santos FC"),
        ("Q12897", "member of sports team", "New York Cosmos"),
        ("Q12897", "occupation", "association football player"),
    ]
    assert all(t.subject_label == "Pelé" for t in graph.triples)
    assert graph.values("member of sports team") == ["Santos FC", "New York Cosmos"]
    # as_dict stays one value per relation: the first.
    assert graph.as_dict() == {
        "name": "Pelé",
        "instance of": "human",
        "member of sports team": "Santos FC",
        "occupation": "association football player",
        "qid": "Q12897",
    }


def test_list_valued_types_and_name() -> None:
    graph = Subgraph.from_entity_dict(
        {"qid": "Q1", "name": ["", "Ada Example", "Ada E."], "instance of": ["human", "poet"]}
    )
    assert graph.center == Entity(id="Q1", name="Ada Example", types=("human", "poet"))
    assert graph.values("name") == ["Ada Example", "Ada E."]
    assert graph.as_entity_dict() == {
        "name": ["Ada Example", "Ada E."],
        "instance of": ["human", "poet"],
        "qid": "Q1",
    }


def test_as_entity_dict_round_trip_is_lossless() -> None:
    graph = Subgraph.from_entity_dict(PELE)
    entity = graph.as_entity_dict()
    assert entity == {
        "instance of": "human",
        "name": "Pelé",
        "member of sports team": ["Santos FC", "New York Cosmos"],
        "occupation": "association football player",
        "qid": "Q12897",
    }
    assert list(entity) == ["instance of", "name", "member of sports team", "occupation", "qid"]
    again = Subgraph.from_entity_dict(json.loads(json.dumps(entity)))
    assert again.center == graph.center
    assert [t.model_dump() for t in again.triples] == [t.model_dump() for t in graph.triples]


def test_as_entity_dict_of_a_store_subgraph_without_name_fact() -> None:
    kg = OxigraphKG.in_memory()
    kg.add_triples(
        [
            Triple(subject="Q5", relation="child", value="B", subject_label="A", value_id="Q6"),
            Triple(subject="Q5", relation="child", value="C", subject_label="A", value_id="Q7"),
        ]
    )
    entity = kg.subgraph_sync("Q5").as_entity_dict()
    assert entity == {"name": "A", "child": ["B", "C"], "qid": "Q5"}
    assert list(entity) == ["name", "child", "qid"]


def _write(path: Path, entries: object) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_biokalma_loader_accepts_list_values(tmp_path: Path) -> None:
    one = _write(tmp_path / "a.json", [["q?", [PELE]]])
    two = _write(
        tmp_path / "b.json",
        [["q2?", [{"qid": "Q12897", "name": "Pelé", "member of sports team": "Santos FC"}]]],
    )
    kg = OxigraphKG.from_source("biokalma", [one, two], use_cache=False)
    # instance of, name, two teams, occupation; b.json repeats a known fact.
    assert len(kg) == 5
    assert kg.subgraph_sync("Q12897").values("member of sports team") == [
        "New York Cosmos",
        "Santos FC",
    ]
    assert set(kg.subgraph_sync("Q12897").triples) == set(Subgraph.from_entity_dict(PELE).triples)
    assert [e.id for e in kg.find_entities_sync("Pelé", type="human")] == ["Q12897"]


def test_biokalma_loader_list_name_is_the_first_element(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.json", [["q?", [{"qid": "Q1", "name": ["", "Ada Example", "A E"]}]]])
    kg = OxigraphKG.from_source("biokalma", [src], use_cache=False)
    [ada] = kg.find_entities_sync("Ada Example")
    assert ada.id == "Q1"
    assert kg.subgraph_sync("Q1").values("name") == ["A E", "Ada Example"]


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (["Santos FC", 3], "[0][1][0].member of sports team[1]"),
        ({"a": 1}, "[0][1][0].member of sports team"),
    ],
)
def test_biokalma_loader_rejects_non_string_values(
    tmp_path: Path, value: object, field: str
) -> None:
    src = _write(tmp_path / "a.json", [["q?", [{"qid": "Q1", "member of sports team": value}]]])
    with pytest.raises(DataError) as info:
        OxigraphKG.from_source("biokalma", [src], use_cache=False)
    assert (info.value.path, info.value.field) == (str(src), field)


def test_entity_ids_sync_hand_built() -> None:
    kg = OxigraphKG.in_memory()
    assert kg.entity_ids_sync() == []
    kg.add_triples(
        [
            Triple(subject="e1", relation="r", value="x", value_id="Q5"),
            Triple(subject="Q10", relation="r", value="y"),
            Triple(subject="Q9", relation="r", value="z"),
            Triple(subject="Q9", relation="s", value="w"),
        ]
    )
    # QIDs by number, then other ids; Q5 is only a value, so it is not listed.
    assert kg.entity_ids_sync() == ["Q9", "Q10", "e1"]


def test_entity_ids_sync_on_biokalma(data_dir: Path, tmp_path: Path) -> None:
    qids: set[str] = set()
    for name in ("simple_question_graph.json", "complex_question_graph.json"):
        for _question, entities in json.loads((data_dir / "biokalma" / name).read_text()):
            qids.update(e["qid"] for e in entities)
    kg = load_biokalma_kg(data_dir, cache_dir=tmp_path)
    ids = kg.entity_ids_sync()
    assert len(ids) == 1076
    assert ids == sorted(qids, key=lambda q: int(q[1:]))
