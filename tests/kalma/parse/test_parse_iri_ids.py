"""Citations of entities whose ids are IRIs (a KG from a Turtle file, not Wikidata): every way an
answer may write the subject maps back to the full IRI, in the paper and the reference parser,
and no ``(qid, http://...)`` / ``(http, //...)`` phantom facts are made."""

from __future__ import annotations

import pytest

from citegraph.kalma import KalmaRules, parse_answer
from citegraph.kalma.parse import parse_answer_reference, parse_with
from citegraph.kalma.score import score_citations
from citegraph.kg import Subgraph, Triple, load_rdf_kg

EX = "http://example.org/kg/"
CURIE_ID = EX + "MarieCurie"
PRIZE = "Nobel Prize in Physics"

TTL = """\
@prefix ex: <http://example.org/kg/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:MarieCurie rdfs:label "Marie Curie"@en ;
    ex:awardReceived ex:NobelPhysics ;
    ex:spouse ex:PierreCurie ;
    ex:date_of_birth "1867" .
ex:PierreCurie rdfs:label "Pierre Curie"@en ; ex:awardReceived ex:NobelPhysics .
ex:NobelPhysics rdfs:label "Nobel Prize in Physics"@en .
ex:awardReceived rdfs:label "award received"@en .
ex:spouse rdfs:label "spouse"@en .
"""

AWARD = (CURIE_ID, "award received", PRIZE)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> list[Subgraph]:
    """Marie's and Pierre's graphs: both hold 'award received: Nobel Prize in Physics', so a
    bracket's facts alone cannot tell whose it is; its subject must be read."""
    path = tmp_path_factory.mktemp("kg") / "curie.ttl"
    path.write_text(TTL, encoding="utf-8")
    kg = load_rdf_kg([path], use_cache=False)
    return [kg.subgraph_sync(CURIE_ID), kg.subgraph_sync(EX + "PierreCurie")]


@pytest.fixture(scope="module")
def graphs(both: list[Subgraph]) -> list[Subgraph]:
    """Marie's graph only (the user's case: one retrieved graph)."""
    return both[:1]


def keys(parsed: object) -> list[tuple[str, str, str]]:
    return [c.triple.key for c in parsed.kg_citations if c.triple is not None]  # type: ignore[attr-defined]


FORMS = [
    "[ex:MarieCurie, award received: Nobel Prize in Physics]",
    "[MarieCurie, award received: Nobel Prize in Physics]",
    "[http://example.org/kg/MarieCurie, award received: Nobel Prize in Physics]",
    "[qid: http://example.org/kg/MarieCurie, award received: Nobel Prize in Physics]",
    "[qid: ex:MarieCurie, award received: Nobel Prize in Physics]",
    "[<http://example.org/kg/MarieCurie>, award received: Nobel Prize in Physics]",
]


PAPER_ONLY_FORMS = [
    "[ex:MarieCurie: award received: Nobel Prize in Physics]",
    "[MarieCurie: award received: Nobel Prize in Physics]",
    "[qid: http://example.org/kg/MarieCurie: award received: Nobel Prize in Physics]",
    "[QID=MarieCurie, award received: Nobel Prize in Physics]",
    "[id: ex:MarieCurie, award received: Nobel Prize in Physics]",
]


@pytest.mark.parametrize("bracket", [*FORMS, *PAPER_ONLY_FORMS])
def test_paper_parser_maps_every_form_to_the_full_iri(both: list[Subgraph], bracket: str) -> None:
    parsed = parse_answer(f"She won the prize {bracket}.", both)
    assert keys(parsed) == [AWARD]
    assert parsed.issues == ()


@pytest.mark.parametrize("bracket", FORMS)
def test_reference_parser_maps_every_form_to_the_full_iri(
    both: list[Subgraph], bracket: str
) -> None:
    parsed = parse_answer_reference(f"She won the prize {bracket}.", both)
    assert keys(parsed) == [AWARD]


def test_reference_parser_keeps_the_authors_reading_of_qids(graphs: list[Subgraph]) -> None:
    # QIDs are read exactly as the authors' regex does, graphs or not: '[qid: Q1, ...]' gives the
    # subject 'qid: Q1' and a lower-case 'q1' stays as written.
    answer = (
        "A [qid: Q1, award received: X]. B [q1, award received: X]. C [Q7186, name: M]. "
        "D [id: Q7186, name: M]."
    )
    expected = [("qid: Q1", "award received", "X"), ("q1", "award received", "X")]
    expected += [("Q7186", "name", "M"), ("id: Q7186", "name", "M")]
    graphs = [*graphs, Subgraph.from_entity_dict({"qid": "Q7186", "name": "M"})]
    assert keys(parse_answer_reference(answer, graphs)) == expected
    assert keys(parse_answer_reference(answer)) == expected
    # Without graphs nothing is mapped: the authors' qid string is the subject.
    assert keys(parse_answer_reference(f"A {FORMS[0]}."))[0][0] == "ex:MarieCurie"


def test_several_subjects_and_facts_in_one_bracket(graphs: list[Subgraph]) -> None:
    answer = (
        "They married [ex:MarieCurie, spouse: Pierre Curie, date_of_birth: 1867, "
        "http://example.org/kg/PierreCurie, award received: Nobel Prize in Physics]."
    )
    assert keys(parse_answer(answer, graphs)) == [
        (CURIE_ID, "spouse", "Pierre Curie"),
        (CURIE_ID, "date_of_birth", "1867"),
        # Pierre is not a centre of the graphs, but his IRI is in the namespace of one: it is
        # the subject (cited, and counted wrong by the scorer), never a phantom 'http: //...'.
        (EX + "PierreCurie", "award received", PRIZE),
    ]
    # 'date_of_birth:1867' and 'spouse:Pierre Curie' have colons but are neither a known short
    # id nor an IRI written in full: they stay facts.
    answer = "Born 1867 [ex:MarieCurie, date_of_birth:1867; spouse:Pierre Curie]."
    assert keys(parse_answer(answer, graphs)) == [
        (CURIE_ID, "date_of_birth", "1867"),
        (CURIE_ID, "spouse", "Pierre Curie"),
    ]


def test_a_web_address_in_a_value_continues_the_value(graphs: list[Subgraph]) -> None:
    # A value listing web pages: the IRI pieces after the first are part of the value (before,
    # each was a new fact ('Q1', 'http', '//b.org')); a later IRI is a subject only in the
    # namespace of a centre (http://example.org/kg/ here), the first piece of a bracket always.
    answer = "See [Q1, website: http://a.org, http://b.org]. And [Q1, w: http://a.org, http://b.org/x, occupation: poet]."  # noqa: E501
    expected = [("Q1", "website", "http://a.org, http://b.org")]
    expected += [("Q1", "w", "http://a.org, http://b.org/x"), ("Q1", "occupation", "poet")]
    assert keys(parse_answer(answer)) == expected
    assert keys(parse_answer(answer, graphs)) == expected
    assert keys(parse_answer("X [http://b.org/x, occupation: poet].", graphs)) == [
        ("http://b.org/x", "occupation", "poet")
    ]


def test_graphs_from_json_with_iri_qids_get_compact_ids() -> None:
    # Entity dicts whose qid is a full IRI (a 'kalma build' output over an RDF KG) carry no
    # short id; the parser learns the local names from the centres themselves.
    graphs = [
        Subgraph.from_entity_dict({"qid": CURIE_ID, "name": "Marie Curie", "spouse": "Pierre"}),
        Subgraph.from_entity_dict({"qid": "urn:people:7", "name": "X", "spouse": "Y"}),
    ]
    answer = "A [MarieCurie, spouse: Pierre]. B [urn:people:7, spouse: Y]."
    assert keys(parse_answer(answer, graphs)) == [
        (CURIE_ID, "spouse", "Pierre"),
        ("urn:people:7", "spouse", "Y"),
    ]
    graphs = [
        Subgraph.from_entity_dict({"qid": "http://a.org/Curie", "name": "A", "r": "v"}),
        Subgraph.from_entity_dict({"qid": "http://b.org/Curie", "name": "B", "r": "w"}),
    ]
    parsed = parse_answer("X [Curie, r: w]. Y [http://a.org/Curie, r: w].", graphs)
    # 'Curie' names two centres, so it is a label; the subject comes from the facts (r: w).
    assert keys(parsed) == [("http://b.org/Curie", "r", "w"), ("http://a.org/Curie", "r", "w")]


# The user's answer from issue 26, one sentence per citation form.
ANSWER = (
    "Marie Curie received the Nobel Prize in Physics "
    "[qid: http://example.org/kg/MarieCurie, award received: Nobel Prize in Physics]. "
    "She married Pierre Curie [ex:MarieCurie, spouse: Pierre Curie]."
)
GOLD = [Triple(subject=CURIE_ID, relation="award received", value=PRIZE)]
GOLD.append(Triple(subject=CURIE_ID, relation="spouse", value="Pierre Curie"))


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_no_phantom_citations_halve_the_scores(graphs: list[Subgraph], mode: str) -> None:
    # By hand: two citations, (MarieCurie, award received, Nobel Prize in Physics) and
    # (MarieCurie, spouse, Pierre Curie), both in Marie Curie's graph and both gold:
    # correctness 2/2, precision 2/2, recall 2/2. Before, the paper parser also read the
    # phantoms (MarieCurie, qid, http://example.org/kg/MarieCurie) and (MarieCurie, ex,
    # MarieCurie): 2 correct of 4 citations, correctness and precision 50%; the reference parser
    # read the subjects 'qid: http://...' and 'ex:MarieCurie': 0 of 2.
    rules = KalmaRules.for_mode(mode)
    parsed = parse_with(ANSWER, graphs, rules)
    scores = score_citations(parsed, graphs, GOLD, mode=rules)
    assert scores.n_citations == 2
    assert (scores.n_correct, scores.n_precise, scores.n_gold_hit) == (2, 2, 2)
    assert (scores.correctness, scores.precision, scores.recall) == (1.0, 1.0, 1.0)
