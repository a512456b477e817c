"""``--kg`` options on the command line: a SPARQL KG scored as it is now, ``--prefix`` checks,
a mistyped KG path, and the options on every command that takes ``--kg``.

The served KG: ``geo:Warsaw`` lies on ``geo:Vistula``. The answer cites (Warsaw, located on
river, Vistula): by hand correctness 1/1 while the KG says so, 0/1 once the served KG says
Oder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from _cli_helpers import _cache, invoke  # noqa: F401 (_cache: autouse fixture)

from _sparql_server import SparqlServer, serving

GEO = "https://data.example.net/geo#"
TURTLE = f"""\
@prefix geo: <{GEO}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
geo:river rdfs:label "located on river" .
geo:Warsaw rdfs:label "Warsaw" ; geo:river geo:Vistula .
geo:Vistula rdfs:label "Vistula" .
geo:Oder rdfs:label "Oder" .
"""
ANSWER = {
    "id": "warsaw-river",
    "question": "Which river does Warsaw lie on?",
    "answer": f"Warsaw lies on the Vistula [{GEO}Warsaw, located on river: Vistula].",
    "entities": [f"{GEO}Warsaw"],
}


@pytest.fixture
def kg_file(tmp_path: Path) -> Path:
    path = tmp_path / "geo.ttl"
    path.write_text(TURTLE, encoding="utf-8")
    return path


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(ANSWER) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def endpoint(kg_file: Path) -> Iterator[SparqlServer]:
    with serving(kg_file) as server:
        yield server


def _correctness(out: Path) -> float:
    return float(json.loads((out / "metrics.json").read_text())["correctness"]["micro"])


@pytest.mark.needs("spacy")
def test_a_kg_changed_behind_its_endpoint_is_scored_as_it_is_now(
    endpoint: SparqlServer, answers: Path, tmp_path: Path
) -> None:
    kg = "sparql+" + endpoint.url
    first = invoke("kalma", "score", answers, "--kg", kg, "--out", tmp_path / "first")
    assert first.exit_code == 0, first.output
    assert _correctness(tmp_path / "first") == 1.0
    warsaw, river = ox.NamedNode(GEO + "Warsaw"), ox.NamedNode(GEO + "river")
    endpoint.store.remove(ox.Quad(warsaw, river, ox.NamedNode(GEO + "Vistula")))
    endpoint.store.add(ox.Quad(warsaw, river, ox.NamedNode(GEO + "Oder")))
    again = invoke("kalma", "score", answers, "--kg", kg, "--out", tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert _correctness(tmp_path / "again") == 0.0


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        ("geo", "expects NAME=VALUE, got 'geo'"),
        ("geo=", "expects NAME=VALUE, got 'geo='"),
        ("1geo=https://data.example.net/geo#", "'1geo' is not a prefix name"),
        ("geo=data.example.net/geo#", "'data.example.net/geo#' is not an IRI"),
    ],
)
def test_a_malformed_prefix_is_exit_2_saying_why(
    prefix: str, message: str, answers: Path, kg_file: Path, tmp_path: Path
) -> None:
    args = ["kalma", "score", answers, "--kg", kg_file, "--out", tmp_path / "out"]
    result = invoke(*args, "--prefix", prefix)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


def test_prefix_without_a_kg_and_a_mistyped_kg_path(answers: Path, tmp_path: Path) -> None:
    no_kg = invoke("kalma", "score", answers, "--prefix", f"geo={GEO}", "--out", tmp_path / "a")
    assert no_kg.exit_code == 2, no_kg.output
    assert "--label-predicate and --prefix read your own KG: give it with --kg" in no_kg.output
    missing = tmp_path / "kgg.ttl"
    typo = invoke("kalma", "score", answers, "--kg", missing, "--out", tmp_path / "b")
    assert typo.exit_code == 2, typo.output
    text = " ".join(typo.output.split())
    assert f"{missing}: the KG file does not exist" in text
    assert "data directory" not in text


@pytest.mark.parametrize(
    "command", [("kalma", "score"), ("kalma", "run"), ("kalma", "retrieve"), ("ask",)]
)
def test_every_command_with_kg_takes_the_kg_options(command: tuple[str, ...]) -> None:
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    for flag in ("--kg ", "--label-predicate IRI", "--prefix NAME=IRI", "--kg-cache"):
        assert flag in result.output, (command, flag)


@pytest.mark.needs("spacy")
def test_ask_over_sparql_shows_the_given_prefix(endpoint: SparqlServer) -> None:
    kg = "sparql+" + endpoint.url
    question = ["ask", "Which river does Warsaw lie on?", "--kg", kg, "--model", "mock"]
    args = [*question, "--citations", "free", "--json"]
    plain = invoke(*args)
    assert plain.exit_code == 0, plain.output
    [centre] = [g["center"] for g in json.loads(plain.output)["retrieval"]["graphs"]]
    assert (centre["id"], centre["short_id"]) == (GEO + "Warsaw", None)
    given = invoke(*args, "--prefix", f"geo={GEO}")
    assert given.exit_code == 0, given.output
    [centre] = [g["center"] for g in json.loads(given.output)["retrieval"]["graphs"]]
    assert (centre["id"], centre["short_id"]) == (GEO + "Warsaw", "geo:Warsaw")
