"""Issue 36's acceptance check: hand-computed verdicts over a KG of our own, citation by citation.

The KG has a ``#`` namespace (``geo: <https://data.example.net/geo#>``), local names unlike the
labels (``geo:city_waw``), and its names under four label predicates: Warsaw's
``skos:prefLabel`` "Warsaw" and ``skos:altLabel`` "Warszawa", Berlin's ``schema:name``, Kraków's
``foaf:name`` (relations keep ``rdfs:label``). Warsaw and Kraków lie on the Vistula, Berlin on
the Spree. Every answer is about Warsaw, cites one ``located on river: Vistula`` fact, and has
Warsaw's river as gold. What its bracket names as the subject decides, by hand:

id        subject written            judged on       correct  precise  in the KG
w-curie   geo:city_waw               Warsaw          yes      yes      yes
w-iri     <full IRI of Warsaw>       Warsaw          yes      yes      yes
w-local   city_waw (local name)      Warsaw          yes      yes      yes
w-label   Warsaw (skos:prefLabel)    Warsaw          yes      yes      yes
w-alt     Warszawa (skos:altLabel)   Warsaw          yes      yes      yes
b-curie   geo:city_ber               Berlin          no       no       yes
b-label   Berlin (schema:name)       Berlin          no       no       yes
k-label   Kraków (foaf:name)         Kraków          yes      no       yes
u-curie   geo:city_gda (no entity)   geo:city_gda    no       no       no
u-label   Gdańsk (no entity)         "Gdańsk"        no       no       no

correctness 6/10, precision 5/10, recall 5/10 (micro and macro: one citation and one gold fact
per answer); 2 citations of ids not in the KG. Outside the retrieved graphs: with the answers'
``entities`` (Warsaw) the 5 not of Warsaw's graph; with NER (finding Warsaw in the question, or
nothing) the cited entities count as retrieved, so the 4 wrong ones. The same verdicts over the
Turtle file and over a SPARQL endpoint serving it, read with ``--prefix geo=...``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_score_own_kg import _cache, _write  # noqa: F401 (_cache: autouse fixture)

from _sparql_server import serving
from citegraph.cli import main

GEO = "https://data.example.net/geo#"
KG = f"""@prefix geo: <{GEO}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix schema: <http://schema.org/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
geo:river rdfs:label "located on river" .
geo:country rdfs:label "country" .
geo:city_waw skos:prefLabel "Warsaw" ; skos:altLabel "Warszawa" ;
    geo:river geo:Vistula ; geo:country geo:Poland .
geo:city_ber schema:name "Berlin" ; geo:river geo:Spree ; geo:country geo:Germany .
geo:city_krk foaf:name "Kraków" ; geo:river geo:Vistula ; geo:country geo:Poland .
geo:Vistula rdfs:label "Vistula" .
geo:Spree rdfs:label "Spree" .
geo:Poland rdfs:label "Poland" .
geo:Germany rdfs:label "Germany" .
"""
WAW, BER, KRK = f"{GEO}city_waw", f"{GEO}city_ber", f"{GEO}city_krk"
#: id -> (the subject as written, the subject judged on, correct, precise)
CASES = {
    "w-curie": ("geo:city_waw", WAW, True, True),
    "w-iri": (WAW, WAW, True, True),
    "w-local": ("city_waw", WAW, True, True),
    "w-label": ("Warsaw", WAW, True, True),
    "w-alt": ("Warszawa", WAW, True, True),
    "b-curie": ("geo:city_ber", BER, False, False),
    "b-label": ("Berlin", BER, False, False),
    "k-label": ("Kraków", KRK, True, False),
    "u-curie": ("geo:city_gda", f"{GEO}city_gda", False, False),
    "u-label": ("Gdańsk", "Gdańsk", False, False),
}
#: how Warsaw is found -> (question, extra answer fields, outside the retrieved graphs)
RETRIEVAL = {
    "entities": ("Which river flows through it?", {"entities": ["geo:city_waw"]}, 5),
    "ner-finds": ("Which river flows through Warsaw?", {}, 4),
    "ner-misses": ("Which river flows through it?", {}, 4),
}


@pytest.fixture(params=["file", "sparql"])
def kg_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    path = tmp_path / "cities.ttl"
    path.write_text(KG, encoding="utf-8")
    if request.param == "file":
        yield ["--kg", str(path)]
        return
    with serving(path) as server:
        yield ["--kg", f"sparql+{server.url}", "--prefix", f"geo={GEO}"]


@pytest.mark.needs("spacy")
@pytest.mark.parametrize("how", list(RETRIEVAL))
def test_verdicts_match_the_hand_computation(tmp_path: Path, kg_spec: list[str], how: str) -> None:
    question, extra, outside = RETRIEVAL[how]
    rows = [
        {"id": key, "question": question, "answer": f"It lies on the Vistula [{subject}, "
         "located on river: Vistula]."} | extra
        for key, (subject, _, _, _) in CASES.items()
    ]  # fmt: skip
    answers = _write(tmp_path / "answers.jsonl", rows)
    gold = _write(
        tmp_path / "gold.jsonl",
        [
            {"id": key, "knowledge": [["geo:city_waw", "located on river", "Vistula"]]}
            for key in CASES
        ],
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(answers), *kg_spec, "--gold", str(gold), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    for key, (_, subject, correct, precise) in CASES.items():
        [verdict] = records[key]["citations"]["verdicts"]
        triple = verdict["triple"]
        assert (triple["subject"], triple["relation"], triple["value"]) == (
            subject,
            "located on river",
            "Vistula",
        ), key
        assert (verdict["correct"], verdict["precise"]) == (correct, precise), key
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    for name, expected in (("correctness", F(6, 10)), ("precision", F(1, 2)), ("recall", F(1, 2))):
        assert F(metrics[name]["micro"]).limit_denominator(100) == expected, name
        assert F(metrics[name]["macro"]).limit_denominator(100) == expected, name
    validity = metrics["citation_validity"]
    assert (validity["kg_citations"], validity["not_in_kg"]) == (10, 2)
    assert validity["outside_retrieved"] == outside
    if how == "ner-finds":
        assert records["w-curie"]["retrieval"]["qids"] == [WAW]
    if how == "ner-misses":
        assert records["w-curie"]["retrieval"]["qids"] == []
