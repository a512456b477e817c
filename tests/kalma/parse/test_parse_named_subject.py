"""The paper parser reads a bracket's subject as the entity it names, never as the centre whose
graph happens to hold the fact (issue 36, defect 1). Hand-checked on two graphs of a KG with a
``#`` namespace: Warsaw (``geo:Warsaw``) and Kraków (``geo:Krakow``) both lie on the Vistula."""

from __future__ import annotations

from citegraph.kalma.parse import parse_answer
from citegraph.kg import Entity, Subgraph, Triple

GEO = "https://data.example.net/geo#"


def _graph(local: str, name: str, *facts: tuple[str, str]) -> Subgraph:
    centre = Entity(id=GEO + local, name=name, short_id=f"geo:{local}")
    triples = tuple(Triple(subject=centre.id, relation=r, value=v) for r, v in facts)
    return Subgraph(center=centre, triples=triples)


WARSAW = _graph("Warsaw", "Warsaw", ("located on river", "Vistula"), ("country", "Poland"))
KRAKOW = _graph("Krakow", "Kraków", ("located on river", "Vistula"), ("country", "Poland"))


def _cited(answer: str, graphs: list[Subgraph]) -> list[tuple[str, str, str]]:
    parsed = parse_answer(answer, graphs)
    assert not parsed.issues, parsed.issues
    return [
        (c.triple.subject, c.triple.relation, c.triple.value)
        for c in parsed.kg_citations
        if c.triple is not None
    ]


def test_a_curie_of_the_centres_prefix_names_its_entity_even_without_a_graph() -> None:
    # before: a phantom (Warsaw, geo, Berlin) and the river fact, both given to Warsaw
    assert _cited("It lies on the Vistula [geo:Berlin, located on river: Vistula].", [WARSAW]) == [
        (GEO + "Berlin", "located on river", "Vistula")
    ]
    # an entity the KG does not have is cited as itself, never moved to Warsaw
    assert _cited("X [geo:Warszawa, located on river: Vistula].", [WARSAW]) == [
        (GEO + "Warszawa", "located on river", "Vistula")
    ]
    assert _cited("X [geo:Warsaw, located on river: Vistula].", [WARSAW]) == [
        (GEO + "Warsaw", "located on river", "Vistula")
    ]


def test_a_label_names_the_centre_of_that_name_before_the_facts_decide() -> None:
    # both centres hold the fact: the label decides; before, "Kraków" counted for less than
    # holding the facts and the bracket was ambiguous
    graphs = [WARSAW, KRAKOW]
    assert _cited("X [Kraków, located on river: Vistula].", graphs) == [
        (GEO + "Krakow", "located on river", "Vistula")
    ]
    # a label that names no centre is the subject as written (an entity outside the graphs)
    assert _cited("X [Berlin, located on river: Vistula].", [WARSAW]) == [
        ("Berlin", "located on river", "Vistula")
    ]
    assert _cited("X [Warszawa, country: Poland].", graphs) == [("Warszawa", "country", "Poland")]


def test_facts_without_a_subject_still_go_to_the_one_centre_that_holds_them() -> None:
    assert _cited("X [located on river: Vistula].", [WARSAW]) == [
        (GEO + "Warsaw", "located on river", "Vistula")
    ]
    parsed = parse_answer("X [country: Poland].", [WARSAW, KRAKOW])  # both hold it
    assert parsed.kg_citations == [] and len(parsed.issues) == 1
    assert "no unique subject" in parsed.issues[0].reason


def test_a_label_two_centres_share_is_settled_by_the_facts() -> None:
    poland = _graph("WarsawPoland", "Warsaw", ("country", "Poland"))
    indiana = _graph("WarsawIndiana", "Warsaw", ("country", "United States"))
    assert _cited("X [Warsaw, country: United States].", [poland, indiana]) == [
        (GEO + "WarsawIndiana", "country", "United States")
    ]
    parsed = parse_answer("X [Warsaw, mayor: Nobody].", [poland, indiana])
    assert parsed.kg_citations == []
    assert "'Warsaw' names more than one centre" in parsed.issues[0].reason


def test_a_first_piece_written_as_a_curie_is_a_subject_never_a_phantom_fact() -> None:
    """Seen on the README's own KG (examples/own-kg): ``[ex:Marie Curie, spouse: ...]`` and
    ``[foaf:Person, spouse: ...]`` were each read as a phantom ``(centre, ex, Marie Curie)``
    beside the fact, given to the centre that holds it."""
    # a prefix the centres use, then a name: the centre of that name
    assert _cited("X [geo: Warsaw, country: Poland].", [WARSAW, KRAKOW]) == [
        (GEO + "Warsaw", "country", "Poland")
    ]
    # another prefix: the CURIE as written, an entity outside the graphs
    assert _cited("X [foaf:Person, located on river: Vistula].", [WARSAW]) == [
        ("foaf:Person", "located on river", "Vistula")
    ]
    # a relation of the graphs before the colon is a fact, as before
    assert _cited("X [country:Poland, located on river: Vistula].", [WARSAW]) == [
        (GEO + "Warsaw", "country", "Poland"),
        (GEO + "Warsaw", "located on river", "Vistula"),
    ]
