"""Own-KG scoring does not depend on NER finding the entities (issue 36, defect 2).

A KG of our own with a ``#`` namespace and labels NER trips on ("The Thames", "Frankfurt
(Oder)", "Washington, D.C."). The questions name no entity ("Which sea does it flow into?"),
so NER finds nothing; the answers cite by CURIE, full IRI, label (with a comma; in another case)
or give what their own system retrieved. By hand, paper mode:

thames      [geo:Thames, flows into: North Sea] correct; [geo:Thames, flows into: Baltic Sea]
            wrong (a deliberately wrong fact, judged on the Thames' graph)            -> 1/2
oder        [<full IRI of Frankfurt (Oder)>, located on river: Oder]                  -> 1/1
dc          [Washington, D.C., located on river: Potomac] (label with a comma)        -> 1/1
lower       [the thames, flows into: North Sea] (label in another case)               -> 1/1
retrieved   "retrieved": [[geo:Thames, flows into, North Sea]]; cites that fact and
            [geo:Thames, flows through: London] (in the KG, not retrieved)            -> 2/2
nothing     [flows into: North Sea]: no subject written, nothing retrieved or cited: no
            citation, the bracket says "retrieval found no entity"                   -> unmeasured

correctness micro (1+1+1+1+2)/(2+1+1+1+2) = 6/7, macro mean(1/2, 1, 1, 1, 1) = 9/10.
Validity: 7 KG citations, 0 not in the KG; outside the retrieved graphs 2: the Baltic fact (the
retrieved set is NER's nothing plus the cited Thames, whose graph lacks it) and London (not in
the 1 retrieved fact); 0 malformed brackets, 1 left unjudged because retrieval found no entity
(nothing's).

Before the fix: CURIE citations over no graph were read as ids the KG does not have, the label
with a comma named nothing, and the bracket of "nothing" said "no graphs were given".
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_score_own_kg import _cache, _write  # noqa: F401 (_cache: autouse fixture)

from citegraph.cli import main

GEO = "https://data.example.net/geo#"
KG = f"""@prefix geo: <{GEO}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
geo:flowsInto rdfs:label "flows into" .
geo:flowsThrough rdfs:label "flows through" .
geo:locatedOnRiver rdfs:label "located on river" .
geo:Thames rdfs:label "The Thames" ; geo:flowsInto geo:NorthSea ; geo:flowsThrough geo:London .
geo:FrankfurtOder rdfs:label "Frankfurt (Oder)" ; geo:locatedOnRiver geo:Oder .
geo:WashingtonDC rdfs:label "Washington, D.C." ; geo:locatedOnRiver geo:Potomac .
geo:London rdfs:label "London" .
geo:NorthSea rdfs:label "North Sea" .
geo:BalticSea rdfs:label "Baltic Sea" .
geo:Oder rdfs:label "Oder" .
geo:Potomac rdfs:label "Potomac" .
"""
QUESTION = "Which sea does it flow into?"
ANSWERS = [
    {
        "id": "thames",
        "answer": "It flows into the North Sea [geo:Thames, flows into: North Sea]. "
        "It flows into the Baltic Sea [geo:Thames, flows into: Baltic Sea].",
    },
    {
        "id": "oder",
        "answer": f"The town lies on the Oder [{GEO}FrankfurtOder, located on river: Oder].",
    },
    {
        "id": "dc",
        "answer": "The city lies on the Potomac [Washington, D.C., located on river: Potomac].",
    },
    {"id": "lower", "answer": "It reaches the North Sea [the thames, flows into: North Sea]."},
    {
        "id": "retrieved",
        "retrieved": [["geo:Thames", "flows into", "North Sea"]],
        "answer": "It flows into the North Sea [geo:Thames, flows into: North Sea] "
        "through London [geo:Thames, flows through: London].",
    },
    {"id": "nothing", "answer": "It flows into the North Sea [flows into: North Sea]."},
]


def _run(tmp_path: Path, answers: list[dict[str, object]]) -> tuple[int, str, Path]:
    kg = tmp_path / "rivers.ttl"
    kg.write_text(KG, encoding="utf-8")
    path = _write(tmp_path / "answers.jsonl", [{"question": QUESTION} | a for a in answers])
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main, ["kalma", "score", str(path), "--kg", str(kg), "--out", str(out)]
    )
    return result.exit_code, result.output, out


def _records(out: Path) -> dict[str, dict]:
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.mark.needs("spacy")
def test_cited_entities_are_judged_when_ner_finds_nothing(tmp_path: Path) -> None:
    code, output, out = _run(tmp_path, ANSWERS)
    assert code == 0, output
    records = _records(out)
    verdicts = {
        sid: [
            (v["triple"]["subject"].removeprefix(GEO), v["triple"]["value"], v["correct"])
            for v in r["citations"]["verdicts"]
        ]
        for sid, r in records.items()
    }
    assert verdicts == {
        "thames": [("Thames", "North Sea", True), ("Thames", "Baltic Sea", False)],
        "oder": [("FrankfurtOder", "Oder", True)],
        "dc": [("WashingtonDC", "Potomac", True)],
        "lower": [("Thames", "North Sea", True)],
        "retrieved": [("Thames", "North Sea", True), ("Thames", "London", True)],
        "nothing": [],
    }
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert F(metrics["correctness"]["micro"]).limit_denominator(100) == F(6, 7)
    assert F(metrics["correctness"]["macro"]).limit_denominator(100) == F(9, 10)
    validity = metrics["citation_validity"]
    assert (validity["kg_citations"], validity["not_in_kg"]) == (7, 0)
    assert validity["outside_retrieved"] == 2
    # nothing's bracket is no malformed one: retrieval found no entity to judge it on
    assert (validity["malformed_brackets"], validity["no_entity_brackets"]) == (0, 1)


@pytest.mark.needs("spacy")
def test_each_record_says_where_its_graphs_came_from(tmp_path: Path) -> None:
    code, output, out = _run(tmp_path, ANSWERS)
    assert code == 0, output
    records = _records(out)
    thames = records["thames"]["retrieval"]
    assert thames["source"] == "ner" and thames["mentions"] == [] and thames["qids"] == []
    assert thames["graphs"] == {f"{GEO}Thames": ["cited"]}
    given = records["retrieved"]["retrieval"]
    assert (given["source"], given["facts"]) == ("retrieved", 1)
    assert given["graphs"] == {f"{GEO}Thames": ["retrieved", "cited"]}
    outside = records["retrieved"]["citation_validity"]["outside"]
    assert outside == [[f"{GEO}Thames", "flows through", "London"]]
    nothing = records["nothing"]
    found_none = nothing["retrieval"]["found_none"]
    assert found_none == "retrieval found no entity, and no citation names one"
    assert nothing["citation_validity"]["malformed"] == []
    (unjudged,) = nothing["citation_validity"]["no_entity"]
    assert "retrieval found no entity" in unjudged["reason"]
    assert "no graphs were given" not in unjudged["reason"]


def test_given_retrieval_needs_no_ner(tmp_path: Path) -> None:
    """Answers that say what was retrieved (facts or entities) are scored without spaCy."""
    answers = [
        {
            "id": "facts",
            "retrieved": [["geo:Thames", "flows into", "North Sea"], "geo:FrankfurtOder"],
            "answer": "It flows into the North Sea [geo:Thames, flows into: North Sea]. The town "
            "is on the Oder [Frankfurt (Oder), located on river: Oder].",
        },
        {
            "id": "entity",
            "retrieved": ["The Thames"],
            "answer": "It flows through London [geo:Thames, flows through: London].",
        },
    ]
    code, output, out = _run(tmp_path, answers)
    assert code == 0, output
    records = _records(out)
    assert [v["correct"] for v in records["facts"]["citations"]["verdicts"]] == [True, True]
    assert records["facts"]["citation_validity"]["outside_retrieved"] == 0
    assert records["entity"]["citation_validity"]["outside_retrieved"] == 0
    assert records["entity"]["retrieval"]["qids"] == [f"{GEO}Thames"]


@pytest.mark.parametrize(
    ("retrieved", "message"),
    [
        (
            [["geo:Thames", "flows into", "Baltic Sea"]],
            "retrieved item 0 ['geo:Thames', 'flows into', 'Baltic Sea'] is no fact of the KG",
        ),
        (["geo:Danube"], "retrieved item 0 entity 'geo:Danube' names no entity in the KG"),
        ([["geo:Thames", "flows into"]], "item 0 must be an entity reference"),
        ("geo:Thames", "must be a list"),
    ],
)
def test_a_bad_retrieved_field_stops_the_run_naming_the_line(
    tmp_path: Path, retrieved: object, message: str
) -> None:
    answers = [
        {"id": "ok", "answer": "x [geo:Thames, flows into: North Sea]."},
        {"id": "bad", "retrieved": retrieved, "answer": "x [geo:Thames, flows into: North Sea]."},
    ]
    code, output, out = _run(tmp_path, answers)
    assert code == 2, output
    assert "answers.jsonl:2" in output and "retrieved" in output
    assert message in output
    assert not (out / "samples.jsonl").exists()


@pytest.mark.needs("spacy")
def test_the_sample_page_says_where_the_graphs_came_from(tmp_path: Path) -> None:
    from citegraph.kalma.view._run_fields import retrieval_fields

    code, output, out = _run(tmp_path, ANSWERS)
    assert code == 0, output
    records = _records(out)
    thames = dict(retrieval_fields(records["thames"]).fields)
    assert thames["retrieved by"] == "NER over the question, label lookup, re-ranking"
    assert thames["retrieved graphs"] == "—" and thames["NER mentions"] == "—"
    assert thames["graphs scored against"] == f"geo:Thames = {GEO}Thames (cited)"
    given = dict(retrieval_fields(records["retrieved"]).fields)
    assert given["retrieved by"].startswith("the answer's 'retrieved' field")
    assert given["graphs scored against"] == f"geo:Thames = {GEO}Thames (retrieved, cited)"
    nothing = dict(retrieval_fields(records["nothing"]).fields)
    assert nothing["found"] == "retrieval found no entity, and no citation names one"


@pytest.mark.needs("spacy")
def test_unjudged_brackets_are_shown_apart_from_malformed_ones(tmp_path: Path) -> None:
    from citegraph.cli._kalma import validity_line
    from citegraph.kalma.view._presenter import KalmaPresenter
    from citegraph.kalma.view._validity import validity_fields, validity_tags

    code, output, out = _run(tmp_path, ANSWERS[-1:])
    assert code == 0, output
    [record] = _records(out).values()
    assert validity_tags(record) == ["validity:no-entity", "validity:no-citations"]
    fields = dict(validity_fields(record).fields)
    assert fields["malformed brackets"] == "0 / 1 = 0.0%"
    assert "[flows into: North Sea]" in fields["left unjudged (retrieval found no entity)"]
    [row] = KalmaPresenter.tables(record)["citations"]
    assert (row["kind"], row["bracket"]) == ("no_entity", "[flows into: North Sea]")
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    line = validity_line(metrics["citation_validity"], None)
    assert "0 (0.0%) malformed, 1 (100.0%) left unjudged (retrieval found no entity)" in line
