"""``kalma score`` with ``--prefix``, ``--label-predicate`` and the KG cache settings: over
SPARQL as over the file, and ``run.json`` / ``metrics.json`` saying how the KG's answers were
cached. (Needs ``kalma/score/_task.py`` to pass ``config.kg_options(cache=runtime.cache)`` to
``kg_with_identity`` and to record :func:`citegraph.kg.kg_cache_note`.)

The KG (a ``#`` namespace, names by ``skos:prefLabel`` only): Warsaw lies on the Vistula and is
in Poland, Berlin lies on the Spree; Warsaw's ``ex:officialName`` is "Capital City of Warsaw".
The answers cite by CURIE (``geo:Warsaw``) and name their entities by CURIE; the gold subjects
are CURIEs and a label. By hand: 3 citations, each the KG's fact and gold -> correctness,
precision and recall 3/3 (micro), over the file and, given ``--prefix geo=...``, over SPARQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from _sparql_server import SparqlServer
from citegraph.errors import DataError
from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.runs import Runtime

GEO = "https://data.example.net/geo#"
OFFICIAL = "https://data.example.net/vocab#officialName"
TURTLE = f"""\
@prefix geo: <{GEO}> .
@prefix ex: <https://data.example.net/vocab#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
geo:river rdfs:label "located on river" .
geo:country rdfs:label "country" .
geo:Warsaw skos:prefLabel "Warsaw" ; ex:officialName "Capital City of Warsaw" ;
    geo:river geo:Vistula ; geo:country geo:Poland .
geo:Vistula skos:prefLabel "Vistula" .
geo:Poland skos:prefLabel "Poland" .
geo:Berlin skos:prefLabel "Berlin" ; geo:river geo:Spree .
geo:Spree skos:prefLabel "Spree" .
"""
ANSWERS = [
    {
        "id": "warsaw",
        "question": "Where is Warsaw?",
        "answer": "Warsaw lies on the Vistula [geo:Warsaw, located on river: Vistula]. "
        "It is in Poland [geo:Warsaw, country: Poland].",
        "entities": ["geo:Warsaw"],
    },
    {
        "id": "berlin",
        "question": "Which river does Berlin lie on?",
        "answer": "Berlin lies on the Spree [geo:Berlin, located on river: Spree].",
        "entities": ["geo:Berlin"],
    },
]
GOLD = [
    {
        "id": "warsaw",
        "knowledge": [
            ["geo:Warsaw", "located on river", "Vistula"],
            ["Warsaw", "country", "Poland"],
        ],
    },
    {"id": "berlin", "knowledge": [["geo:Berlin", "located on river", "Spree"]]},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    kg = tmp_path / "geo.ttl"
    kg.write_text(TURTLE, encoding="utf-8")
    return {
        "kg": kg,
        "answers": _jsonl(tmp_path / "answers.jsonl", ANSWERS),
        "gold": _jsonl(tmp_path / "gold.jsonl", GOLD),
    }


@pytest.fixture
def endpoint(files: dict[str, Path]) -> Iterator[SparqlServer]:
    store = ox.Store()
    store.load(path=str(files["kg"]), format=ox.RdfFormat.TURTLE)
    server = SparqlServer(store)
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def _micro(metrics: dict[str, Any]) -> tuple[float, ...]:
    return tuple(metrics[m]["micro"] for m in ("correctness", "precision", "recall"))


def test_curies_over_sparql_with_prefix_score_as_over_the_file(
    files: dict[str, Path], endpoint: SparqlServer, tmp_path: Path
) -> None:
    answers, gold = files["answers"], files["gold"]
    over_file = score_answers(answers, tmp_path / "file", kg=str(files["kg"]), gold_path=gold)
    assert _micro(over_file.metrics) == (1.0, 1.0, 1.0)
    assert over_file.metrics["n_citations"] == 3
    spec = "sparql+" + endpoint.url
    # the endpoint declares no prefixes: geo:Warsaw names nothing there
    with pytest.raises(DataError, match="geo:Warsaw"):
        score_answers(answers, tmp_path / "bare", kg=spec, gold_path=gold)
    config = KalmaScoreConfig(kg=spec, prefixes={"geo": GEO})
    over_sparql = score_answers(answers, tmp_path / "sparql", config, gold_path=gold)
    for name in ("correctness", "precision", "recall", "f1", "alignment"):
        assert over_sparql.metrics[name] == over_file.metrics[name], name
    info = json.loads((tmp_path / "sparql" / "run.json").read_text())
    assert info["config"]["prefixes"] == {"geo": GEO}
    assert "kg_cache" not in info["config"]  # not identity
    note = info["notes"]["kg_cache"]
    assert (note["mode"], note["answers_from_earlier_runs"]) == ("run", False)
    assert "path" not in note and over_sparql.metrics["kg_cache"]["requests"] > 0


def test_a_label_predicate_names_entities_over_the_file_and_sparql(
    files: dict[str, Path], endpoint: SparqlServer, tmp_path: Path
) -> None:
    rows = [dict(ANSWERS[0], entities=["Capital City of Warsaw"])]
    answers = _jsonl(tmp_path / "official.jsonl", rows)
    geo = {"geo": GEO}
    for where, spec in (("file", str(files["kg"])), ("sparql", "sparql+" + endpoint.url)):
        with pytest.raises(DataError, match="Capital City of Warsaw"):
            score_answers(
                answers, tmp_path / f"{where}-plain", KalmaScoreConfig(kg=spec, prefixes=geo)
            )
        config = KalmaScoreConfig(kg=spec, prefixes=geo, label_predicates=(OFFICIAL,))
        result = score_answers(answers, tmp_path / where, config)
        assert result.metrics["correctness"]["micro"] == 1.0, where
        info = json.loads((tmp_path / where / "run.json").read_text())
        assert info["config"]["label_predicates"] == [OFFICIAL]


def test_persisted_answers_are_recorded_and_no_cache_bypasses_them(
    files: dict[str, Path], endpoint: SparqlServer, tmp_path: Path
) -> None:
    answers, spec = files["answers"], "sparql+" + endpoint.url
    persist = KalmaScoreConfig(
        kg=spec, prefixes={"geo": GEO}, kg_cache="persist", kg_cache_max_age=600
    )
    first = score_answers(answers, tmp_path / "first", persist)
    assert first.metrics["correctness"]["micro"] == 1.0
    warsaw, river = ox.NamedNode(GEO + "Warsaw"), ox.NamedNode(GEO + "river")
    endpoint.store.remove(ox.Quad(warsaw, river, ox.NamedNode(GEO + "Vistula")))
    endpoint.store.add(ox.Quad(warsaw, river, ox.NamedNode(GEO + "Spree")))
    stale = score_answers(answers, tmp_path / "stale", persist)
    assert stale.metrics["correctness"]["micro"] == 1.0  # the persisted answers, asked for
    note = json.loads((tmp_path / "stale" / "run.json").read_text())["notes"]["kg_cache"]
    assert (note["mode"], note["answers_from_earlier_runs"], note["max_age_s"]) == (
        "persist",
        True,
        600,
    )
    assert stale.metrics["kg_cache"]["hits"] > 0
    assert stale.metrics["kg_cache"]["requests"] == 0
    fresh = score_answers(answers, tmp_path / "fresh", persist, runtime=Runtime(cache=False))
    assert fresh.metrics["correctness"]["micro"] == pytest.approx(2 / 3)  # Vistula: now wrong
    note = json.loads((tmp_path / "fresh" / "run.json").read_text())["notes"]["kg_cache"]
    assert (note["mode"], note["answers_from_earlier_runs"]) == ("off", False)
    assert fresh.metrics["kg_cache"]["hits"] == 0
