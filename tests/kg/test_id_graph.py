"""``OxigraphKG.ids``: the id-level view CAQA reads (ids and IRIs, labels, types, edges, SELECT)."""

from __future__ import annotations

import pytest

from citegraph.errors import KGQueryError
from citegraph.kg import WIKIDATA_DIRECT, WIKIDATA_ENTITY, IdGraph, OxigraphKG, Triple, is_qid


@pytest.fixture()
def ids() -> IdGraph:
    kg = OxigraphKG.in_memory()
    kg.add_triples(
        [
            Triple(subject="Q1", relation="country", value="Mexico", subject_label="Frida",
                   relation_id="P17", value_id="Q96"),
            Triple(subject="Q2", relation="country", value="Mexico", subject_label="frida",
                   relation_id="P17", value_id="Q96"),
            Triple(subject="Q1", relation="instance of", value="human", relation_id="P31",
                   value_id="Q5"),
            Triple(subject="Q2", relation="instance of", value="human", relation_id="P31",
                   value_id="Q5"),
            Triple(subject="Q1", relation="note", value="a painter"),  # a literal: not an edge
            Triple(subject="Q96", relation="continent", value="North America",
                   relation_id="P30", value_id="Q49"),
            Triple(subject="e 1", relation="place_of_birth", value="Q96", value_id="Q96"),
        ]
    )  # fmt: skip
    assert kg.ids is kg.ids  # made once per store
    return kg.ids


def test_ids_and_iris_round_trip() -> None:
    assert IdGraph.entity_iri("Q5") == WIKIDATA_ENTITY + "Q5"
    assert IdGraph.relation_iri("P17") == WIKIDATA_DIRECT + "P17"
    for entity in ("Q5", "e 1", "ludwig_ii_of_bavaria", "http://example.org/x"):
        assert IdGraph.entity_id(IdGraph.entity_iri(entity)) == entity
    for relation in ("P17", "place_of_birth", "people.person.place_of_birth", "http://ex.org/r"):
        assert IdGraph.relation_id(IdGraph.relation_iri(relation)) == relation
    assert IdGraph.relation_iri("http://ex.org/r") == "http://ex.org/r"
    with pytest.raises(KGQueryError):
        IdGraph.entity_iri("")
    assert is_qid("Q5") and not is_qid("P5") and not is_qid("Q05")


def test_labels_types_and_namesakes(ids: IdGraph) -> None:
    assert ids.label("Q1") == "Frida"
    assert ids.label("P17") == "country"
    assert ids.label("place_of_birth") == "place_of_birth"
    assert ids.label("Q404") is None and ids.label("") is None
    assert ids.types("Q1") == ("Q5",) and ids.types("Q96") == ()
    assert ids.members("Q5") == ("Q1", "Q2")
    assert ids.namesakes("Q1") == ["Q2"] and ids.namesakes("Q96") == []


def test_edges(ids: IdGraph) -> None:
    assert sorted(ids.edges("Q1")) == [("Q1", "P17", "Q96"), ("Q1", "P31", "Q5")]
    assert sorted(ids.edges("Q96", outgoing=False)) == [
        ("Q1", "P17", "Q96"),
        ("Q2", "P17", "Q96"),
        ("e 1", "place_of_birth", "Q96"),
    ]
    assert list(ids.edges("Q1", relation="P31")) == [("Q1", "P31", "Q5")]
    assert list(ids.edges("Q1", relation="note")) == []  # literal values are not edges
    assert len(list(ids.edges("Q1", scan=1))) <= 1
    assert list(ids.edges("nobody")) == [] and list(ids.edges("")) == []
    assert ("Q96", "P30", "Q49") in set(ids.all_edges())
    assert len(list(ids.all_edges())) == 6
    assert ids.relations_between("Q1", "Q96") == ["P17"]
    assert ids.has_edge("Q96", "P30", "Q49") and not ids.has_edge("Q49", "P30", "Q96")
    assert ids.has_relation("Q1", "note")  # any value counts
    assert ids.has_relation("Q96", "P17", outgoing=False)
    assert not ids.has_relation("Q96", "P17")
    assert ids.relation_ends("P17", objects=False) == {"Q1", "Q2"}
    assert ids.relation_ends("P17", objects=True) == {"Q96"}


def test_select(ids: IdGraph) -> None:
    country = IdGraph.relation_iri("P17")
    rows = ids.select(f"SELECT ?s ?o WHERE {{ ?s <{country}> ?o }} ORDER BY ?s", ["?s", "?o"])
    assert rows == [{"?s": "Q1", "?o": "Q96"}, {"?s": "Q2", "?o": "Q96"}]
    note = IdGraph.relation_iri("note")
    assert ids.select(f"SELECT ?o WHERE {{ ?s <{note}> ?o }}", ["o"]) == [None]
    with pytest.raises(KGQueryError):
        ids.select("SELECT nonsense", ["?a"])
    with pytest.raises(KGQueryError):
        ids.select("ASK { ?s ?p ?o }", ["?a"])
