"""KaLMA baseline retrieval: NER cleaning, the lenient type filter, re-ranking, and ``retrieve``
over an in-memory store, the real BioKaLMA KG (real spaCy) and a SPARQL endpoint (mock transport).

Every expected value is worked out by hand from the facts written in the test (or, for BioKaLMA,
from the raw entity dicts quoted in the comments).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs

import httpx2
import pyoxigraph as ox
import pytest

from citegraph.errors import ConfigError, MissingDependency
from citegraph.kalma.retrieve._ner import (
    CAPITALISED_LABEL,
    Mention,
    capitalised_ner,
    clean_mention,
    clean_mentions,
    spacy_ner,
)
from citegraph.kalma.retrieve._retrieve import (
    SINGLE_TOKEN,
    Retrieval,
    RetrievalConfig,
    Retriever,
    matched_values,
    rerank,
    retrieve_async,
    retrieve_many_async,
    type_matches,
)
from citegraph.kg import (
    Entity,
    OxigraphKG,
    SparqlClient,
    SparqlClientConfig,
    SparqlEndpointKG,
    Subgraph,
    Triple,
    load_biokalma_kg,
)


def mention(text: str, label: str = "PERSON", start: int = 0) -> Mention:
    return Mention(text=text, label=label, start=start, end=start + len(text))


class ScriptedNER:
    """A recognizer that returns fixed mentions, whatever the text."""

    def __init__(self, mentions: Sequence[Mention]) -> None:
        self.mentions = list(mentions)
        self.calls: list[str] = []

    def __call__(self, text: str) -> list[Mention]:
        self.calls.append(text)
        return list(self.mentions)


def graph(qid: str, name: str, facts: dict[str, str], types: tuple[str, ...] = ()) -> Subgraph:
    triples = tuple(Triple(subject=qid, relation=r, value=v) for r, v in facts.items())
    return Subgraph(center=Entity(id=qid, name=name, types=types), triples=triples)


# ---------------------------------------------------------------- mention cleaning and NER
@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Orazio Gentileschi's", "Orazio Gentileschi"),
        ("Anne Hathaway’s", "Anne Hathaway"),
        ("James'", "James"),
        ("Achilles’", "Achilles"),
        ("Stephen Crane", "Stephen Crane"),
        ("'s", ""),
    ],
)
def test_clean_mention(raw: str, clean: str) -> None:
    assert clean_mention(raw) == clean


def test_clean_mentions_moves_the_end_and_drops_repeats_in_order() -> None:
    question = "Orazio Gentileschi's daughter met Rome's Orazio Gentileschi in Rome"
    raw = [
        Mention(text="Orazio Gentileschi's", label="PERSON", start=0, end=20),
        Mention(text="Rome's", label="GPE", start=34, end=40),
        Mention(text="Orazio Gentileschi", label="PERSON", start=41, end=59),
        Mention(text="Rome", label="GPE", start=63, end=67),
    ]
    assert clean_mentions(raw) == [
        Mention(text="Orazio Gentileschi", label="PERSON", start=0, end=18),
        Mention(text="Rome", label="GPE", start=34, end=38),
    ]
    assert question[0:18] == "Orazio Gentileschi" and question[34:38] == "Rome"


def test_capitalised_ner() -> None:
    ner = capitalised_ner()
    question = "Who was Leonardo da Vinci's teacher, and did Anne Hathaway’s husband visit Rome?"
    found = ner(question)
    assert [(m.text, m.start, m.end) for m in found] == [
        ("Leonardo da Vinci", 8, 25),
        ("Anne Hathaway", 45, 58),
        ("Rome", 75, 79),
    ]
    assert {m.label for m in found} == {CAPITALISED_LABEL}
    assert all(question[m.start : m.end] == m.text for m in found)
    # "What" opens the question but is a question word; "The" opens a run and is dropped.
    assert [m.text for m in ner("What did The Beatles play in New York?")] == [
        "Beatles",
        "New York",
    ]


def test_spacy_ner_cleans_and_is_cached() -> None:
    pytest.importorskip("spacy")
    ner = spacy_ner()
    question = "What did Orazio Gentileschi's daughter learn from him?"
    found = ner(question)
    assert found == [Mention(text="Orazio Gentileschi", label="PERSON", start=9, end=27)]
    assert spacy_ner().nlp is ner.nlp  # one pipeline per process
    assert ner.batch([question, "Nothing here."]) == [found, []]


def test_spacy_ner_missing_pipeline_names_the_extra() -> None:
    pytest.importorskip("spacy")
    with pytest.raises(MissingDependency) as info:
        spacy_ner("no_such_spacy_pipeline_xyz")
    assert info.value.extra == "retrieval"
    assert info.value.package == "no_such_spacy_pipeline_xyz"


# ---------------------------------------------------------------- re-ranking
# The two Anne Hathaways of the paper (§3.2), in the KG's order: the actress first.
ACTRESS = graph(
    "Q1",
    "Anne Hathaway",
    {"name": "Anne Hathaway", "occupation": "actor", "spouse": "Adam Shulman"},
)
WIFE = graph(
    "Q2",
    "Anne Hathaway",
    {"name": "Anne Hathaway", "spouse": "William Shakespeare", "place of birth": "Shottery"},
)


def test_rerank_prefers_the_graph_whose_neighbours_the_question_names() -> None:
    question = "Who was Anne Hathaway, the wife of William Shakespeare?"
    # ACTRESS: "actor", "Adam Shulman" absent -> 0 (its own name is not counted).
    # WIFE: "William Shakespeare" present, "Shottery" absent -> 1.
    assert rerank(question, [ACTRESS, WIFE]) == [(WIFE, 1), (ACTRESS, 0)]
    assert matched_values(question, WIFE) == ["William Shakespeare"]
    assert matched_values(question, ACTRESS) == []


def test_rerank_tie_keeps_the_first_candidate() -> None:
    question = "Tell me about Anne Hathaway."
    assert rerank(question, [ACTRESS, WIFE]) == [(ACTRESS, 0), (WIFE, 0)]
    assert rerank(question, [WIFE, ACTRESS]) == [(WIFE, 0), (ACTRESS, 0)]
    assert rerank(question, []) == []


def test_overlap_is_exact_case_sensitive_substring_per_triple() -> None:
    g = graph(
        "Q7",
        "Max Wolf",
        {"place of birth": "Heidelberg", "place of death": "Heidelberg", "sex": "male", "x": ""},
    )
    # Heidelberg twice (two triples); "male" is inside "female" (the authors' substring test);
    # the empty value does not count; "heidelberg" in lower case would not match.
    assert matched_values("A female astronomer from Heidelberg?", g) == [
        "Heidelberg",
        "Heidelberg",
        "male",
    ]
    assert matched_values("a female astronomer from heidelberg?", g) == ["male"]


# ---------------------------------------------------------------- type filter
def test_type_filter_is_lenient_about_unknown_types() -> None:
    untyped = Entity(id="Q9", name="William Shakespeare")
    human = Entity(id="Q692", name="William Shakespeare", types=("human",))
    ship = Entity(id="Q3", name="Anne Hathaway", types=("ship",))
    assert type_matches(untyped, "human")
    assert type_matches(human, "human") and type_matches(human, "Human")
    assert not type_matches(ship, "human")
    assert type_matches(ship, None)


# ---------------------------------------------------------------- retrieve on an in-memory KG
def facts(qid: str, name: str, pairs: Sequence[tuple[str, str]]) -> list[Triple]:
    return [Triple(subject=qid, relation=r, value=v, subject_label=name) for r, v in pairs]


@pytest.fixture
def small_kg() -> OxigraphKG:
    kg = OxigraphKG.in_memory()
    kg.add_triples(
        [
            *facts("Q1", "Anne Hathaway", [("instance of", "human"), ("spouse", "Adam Shulman")]),
            *facts(
                "Q2", "Anne Hathaway", [("instance of", "human"), ("place of birth", "Shottery")]
            ),
            *facts("Q3", "Anne Hathaway", [("instance of", "ship"), ("home port", "Stratford")]),
            # No 'instance of': types unknown, so it passes the human filter.
            *facts("Q692", "William Shakespeare", [("spouse", "Anne Hathaway")]),
            *facts("Q8", "Queen Mary", [("instance of", "ship")]),
        ]
    )
    return kg


QUESTION = "Was Anne Hathaway of Shottery married to William Shakespeare in Stratford?"


def test_retrieve_over_an_in_memory_kg(small_kg: OxigraphKG) -> None:
    ner = ScriptedNER(
        [
            mention("Anne Hathaway", start=4),
            mention("William Shakespeare", start=41),
            mention("Stratford", "GPE", start=64),
            mention("Queen Mary"),
            mention("anne hathaway"),  # same entity again (case-insensitive lookup)
        ]
    )
    result = asyncio.run(retrieve_async(QUESTION, small_kg, ner=ner))
    assert ner.calls == [QUESTION]
    anne, will, stratford, mary, anne_again = result.results
    # Q3 is a ship: filtered out. Q1 matches nothing ("human", "Adam Shulman" are absent);
    # Q2 matches "Shottery" -> 1, so Q2 wins.
    assert anne.type_filter == "human"
    assert [(c.entity.id, c.score) for c in anne.candidates] == [("Q1", 0), ("Q2", 1)]
    assert anne.candidates[1].matched == ("Shottery",)
    assert anne.chosen == "Q2" and anne.reason is None
    # Untyped William Shakespeare passes; "Anne Hathaway" is one of his values -> 1.
    assert [(c.entity.id, c.score) for c in will.candidates] == [("Q692", 1)]
    assert will.chosen == "Q692"
    assert stratford.type_filter is None  # GPE is not in the type map
    assert stratford.reason == "no entity named 'Stratford' in the KG"
    assert mary.reason == "1 entities named 'Queen Mary', none of type 'human'"
    assert anne_again.chosen == "Q2"
    assert result.qids == ["Q2", "Q692"]  # de-duplicated, in mention order
    assert result.graphs[0] == small_kg.subgraph_sync("Q2")
    assert [(u.mention.text, u.reason) for u in result.unresolved] == [
        ("Stratford", stratford.reason),
        ("Queen Mary", mary.reason),
    ]


def test_reference_options(small_kg: OxigraphKG) -> None:
    mentions = [mention("Anne Hathaway"), mention("Shakespeare"), mention("Stratford", "GPE")]
    config = RetrievalConfig.reference()
    assert (config.person_only, config.drop_single_token_names, config.case_sensitive) == (
        True,
        True,
        True,
    )
    result = asyncio.run(retrieve_async(QUESTION, small_kg, config, ner=ScriptedNER(mentions)))
    anne, shakespeare, stratford = result.results
    assert anne.chosen == "Q2"
    assert shakespeare.reason == SINGLE_TOKEN and shakespeare.candidates == ()
    assert stratford.reason == SINGLE_TOKEN and stratford.type_filter == "human"
    # Exact case: the lower-case name finds nothing.
    lower = ScriptedNER([mention("anne hathaway")])
    exact = RetrievalConfig(case_sensitive=True)
    assert asyncio.run(retrieve_async(QUESTION, small_kg, exact, ner=lower)).qids == []
    # person_only: a GPE mention must be human too, so the ship Q8 is refused.
    ship = ScriptedNER([mention("Queen Mary", "GPE")])
    assert asyncio.run(retrieve_async(QUESTION, small_kg, ner=ship)).qids == ["Q8"]
    persons = RetrievalConfig(person_only=True)
    assert asyncio.run(retrieve_async(QUESTION, small_kg, persons, ner=ship)).qids == []


def test_a_full_lookup_triggers_a_typed_lookup() -> None:
    kg = OxigraphKG.in_memory()
    kg.add_triples(
        [
            *facts("Q10", "John Smith", [("instance of", "ship")]),
            *facts("Q11", "John Smith", [("instance of", "ship")]),
            *facts("Q12", "John Smith", [("instance of", "human")]),
        ]
    )
    config = RetrievalConfig(candidates_limit=2)
    # The untyped lookup returns Q10 and Q11 (the limit), both ships; the typed one adds Q12.
    result = asyncio.run(
        retrieve_async("John Smith?", kg, config, ner=ScriptedNER([mention("John Smith")]))
    )
    assert [c.entity.id for c in result.results[0].candidates] == ["Q12"]
    assert result.qids == ["Q12"]


def test_retriever_reuses_its_recognizer_over_many_questions(small_kg: OxigraphKG) -> None:
    ner = ScriptedNER([mention("Anne Hathaway")])
    retriever = Retriever(ner=ner)
    questions = ["Anne Hathaway of Shottery?", "Anne Hathaway, wife of Adam Shulman?", "Anne?"]
    seen: list[tuple[int, int]] = []
    results = asyncio.run(
        retriever.retrieve_many(
            questions, small_kg, concurrency=2, progress=lambda d, t: seen.append((d, t))
        )
    )
    # Shottery -> Q2; Adam Shulman -> Q1; nothing matched -> tie -> the first, Q1.
    assert [r.qids for r in results] == [["Q2"], ["Q1"], ["Q1"]]
    assert [r.question for r in results] == questions
    assert ner.calls == questions
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    assert asyncio.run(retriever("Anne Hathaway of Shottery?", small_kg)).qids == ["Q2"]
    with pytest.raises(ConfigError):
        asyncio.run(retriever.retrieve_many(questions, small_kg, concurrency=0))
    capitalised = RetrievalConfig(ner="capitalised")
    found = asyncio.run(
        retrieve_many_async(["Did Anne Hathaway live in Shottery?"], small_kg, capitalised)
    )
    # Mentions "Anne Hathaway" and "Shottery" (no type filter); Q3 (ship) is a candidate too,
    # scores Q1 0, Q2 1 ("Shottery"), Q3 0 -> Q2; "Shottery" is a value, not an entity.
    assert [c.entity.id for c in found[0].results[0].candidates] == ["Q1", "Q2", "Q3"]
    assert found[0].qids == ["Q2"]


# ---------------------------------------------------------------- the real BioKaLMA KG
@pytest.fixture(scope="module")
def biokalma_kg(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> OxigraphKG:
    return load_biokalma_kg(data_dir, cache_dir=tmp_path_factory.mktemp("kg"))


def test_biokalma_kg_types_every_entity_as_human(biokalma_kg: OxigraphKG) -> None:
    # Every BioKaLMA entity dict has "instance of": "human", so the human filter really applies.
    [crane] = biokalma_kg.find_entities_sync("Stephen Crane")
    assert crane.types == ("human",)


# (specific-split index, question, gold QIDs from complex_question_graph.json)
BIOKALMA_CASES = [
    (0, "What were some significant aspects of Stephen Crane's early life, family background, "
        "health issues, and how did these factors influence his contribution to the literary "
        "realism movement?", {"Q206534"}),
    (148, "What was the relationship between John Wayles, Betty Hemings, Sally Hemings, and "
          "Thomas Jefferson, and how did this complex dynamic shape their lives at the "
          "Monticello plantation?", {"Q257464", "Q11812", "Q16859631"}),
    (487, "Who was Max Wolf, where was he born, and what significant contributions did he make "
          "in his career at Heidelberg University?", {"Q76712"}),
    (891, "What is the professional partnership between John Green and his brother Hank Green, "
          "and how did it evolve into a podcast and live stream project?", {"Q550996", "Q630446"}),
]  # fmt: skip


def test_retrieve_real_biokalma_questions_with_spacy(
    data_dir: Path, biokalma_kg: OxigraphKG
) -> None:
    pytest.importorskip("spacy")
    from citegraph.datasets import load_biokalma

    samples = load_biokalma("specific", data_dir)
    for index, question, gold in BIOKALMA_CASES:
        assert samples[index].question == question
        assert {g.center.id for g in samples[index].graphs} == gold
    results = asyncio.run(retrieve_many_async([q for _, q, _ in BIOKALMA_CASES], biokalma_kg))
    for (_, _, gold), result in zip(BIOKALMA_CASES, results, strict=True):
        assert set(result.qids) == gold
    # Two "Thomas Jefferson" entities. Q11812's values in question 148: given name "Thomas",
    # surname "Jefferson", place of death and residence "Monticello" -> 4. Q76012398 has only
    # given name "Thomas" and surname "Jefferson" -> 2.
    [jefferson] = [r for r in results[1].results if r.mention.text == "Thomas Jefferson"]
    assert {c.entity.id: c.score for c in jefferson.candidates} == {"Q11812": 4, "Q76012398": 2}
    # Two "Max Wolf": Q76712 matches Heidelberg (birth, death, work location), Heidelberg
    # University (employer, alma mater), Max, Wolf -> 7; the gymnast Q4124764 Max, Wolf -> 2.
    [wolf] = [r for r in results[2].results if r.mention.text == "Max Wolf"]
    assert {c.entity.id: c.score for c in wolf.candidates} == {"Q76712": 7, "Q4124764": 2}


# ---------------------------------------------------------------- a SPARQL endpoint
TURTLE = """
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
wd:Q1 rdfs:label "Anne Hathaway"@en ; wdt:P31 wd:Q5 ; wdt:P106 wd:Q33999 ; wdt:P26 wd:Q10 .
wd:Q2 rdfs:label "Anne Hathaway"@en ; wdt:P31 wd:Q5 ; wdt:P26 wd:Q692 ; wdt:P19 wd:Q20 .
wd:Q3 rdfs:label "Anne Hathaway"@en ; wdt:P31 wd:Q11446 .
wd:Q692 rdfs:label "William Shakespeare"@en ; wdt:P26 wd:Q2 .
wd:Q5 rdfs:label "human"@en .
wd:Q11446 rdfs:label "ship"@en .
wd:Q33999 rdfs:label "actor"@en .
wd:Q10 rdfs:label "Adam Shulman"@en .
wd:Q20 rdfs:label "Shottery"@en .
wd:P31 wikibase:directClaim wdt:P31 ; rdfs:label "instance of"@en .
wd:P106 wikibase:directClaim wdt:P106 ; rdfs:label "occupation"@en .
wd:P26 wikibase:directClaim wdt:P26 ; rdfs:label "spouse"@en .
wd:P19 wikibase:directClaim wdt:P19 ; rdfs:label "place of birth"@en .
"""


def sparql_transport(store: ox.Store, queries: list[str]) -> httpx2.MockTransport:
    """Answers each POSTed SPARQL query from ``store`` with SPARQL JSON results."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        query = parse_qs(request.content.decode())["query"][0]
        queries.append(query)
        results = store.query(query)
        assert isinstance(results, ox.QuerySolutions)
        body = results.serialize(format=ox.QueryResultsFormat.JSON)
        return httpx2.Response(
            200, content=body, headers={"Content-Type": "application/sparql-results+json"}
        )

    return httpx2.MockTransport(handler)


def test_retrieve_over_a_sparql_endpoint() -> None:
    store = ox.Store()
    store.load(input=TURTLE, format=ox.RdfFormat.TURTLE)
    queries: list[str] = []
    config = SparqlClientConfig(
        endpoint="https://sparql.example.org/sparql",
        user_agent="citegraph-tests/1.0 (tests@example.org)",
        max_retries=0,
    )
    client = SparqlClient(config, transport=sparql_transport(store, queries))
    kg = SparqlEndpointKG(client)
    question = "Did Anne Hathaway of Shottery marry William Shakespeare?"
    ner = ScriptedNER([mention("Anne Hathaway", start=4), mention("William Shakespeare", start=36)])

    async def run() -> Retrieval:
        try:
            return await retrieve_async(question, kg, ner=ner)
        finally:
            await kg.aclose()

    result = asyncio.run(run())
    anne, will = result.results
    # Q3 is a ship; Q1 (actor, Adam Shulman) matches nothing; Q2 matches "William Shakespeare"
    # (spouse) and "Shottery" (place of birth) -> 2. Q692 has no P31: unknown type, kept; its
    # spouse "Anne Hathaway" is in the question -> 1.
    assert [(c.entity.id, c.score) for c in anne.candidates] == [("Q1", 0), ("Q2", 2)]
    assert [(c.entity.id, c.score) for c in will.candidates] == [("Q692", 1)]
    assert result.qids == ["Q2", "Q692"]
    assert any("rdfs:label ?label" in q for q in queries)  # went through the endpoint
