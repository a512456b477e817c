"""A task closes the SPARQL KG it opened from its ``kg`` spec when it ends, also when it fails.

``kalma score`` and ``kalma run`` over ``sparql+<url>`` (answered from a pyoxigraph store through
a transport that records being closed, no network): after a finished run, and after a run
stopped by a reference the KG does not hold (``DataError`` once the KG is open), the client's
HTTP transport is closed. The same run over a KG object the caller gave leaves it open.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from _kg_helpers import GEO, GEO_KG
from _sparql_server import RecordingTransport, record_opened_clients
from citegraph.errors import DataError
from citegraph.kalma import KalmaRunConfig, KalmaScoreConfig, run_kalma, score_answers
from citegraph.kg import SparqlClient, SparqlRdfKG, virtuoso
from citegraph.models import MockChat

SPEC = "sparql+http://kg.test/sparql"
ANSWER = "Berlin is in Germany [geo:Berlin, country: Germany]."


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def store() -> ox.Store:
    store = ox.Store()
    store.load(GEO_KG.encode(), format=ox.RdfFormat.TURTLE)
    return store


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _answers(tmp_path: Path, entity: str) -> Path:
    row = {"id": "berlin", "question": "Where is Berlin?", "answer": ANSWER, "entities": [entity]}
    return _jsonl(tmp_path / f"answers-{entity.replace(':', '-')}.jsonl", [row])


def test_kalma_score_closes_the_kg_it_opened(
    tmp_path: Path, store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)
    config = KalmaScoreConfig(kg=SPEC, prefixes={"geo": GEO})
    result = score_answers(_answers(tmp_path, "geo:Berlin"), tmp_path / "ok", config)
    assert result.metrics["correctness"]["micro"] == 1.0  # the KG was asked, and answered
    assert len(made) == 1 and made[0].queries and made[0].closed


def test_kalma_score_closes_the_kg_when_the_run_fails(
    tmp_path: Path, store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)
    config = KalmaScoreConfig(kg=SPEC, prefixes={"geo": GEO})
    with pytest.raises(DataError, match="geo:Danzig"):
        score_answers(_answers(tmp_path, "geo:Danzig"), tmp_path / "bad", config)
    assert len(made) == 1 and made[0].queries and made[0].closed


def _questions(tmp_path: Path, entity: str) -> Path:
    row = {"id": "berlin", "question": "Where is it?", "entities": [entity]}
    return _jsonl(tmp_path / f"questions-{entity}.jsonl", [row])


def test_kalma_run_closes_the_kg_it_opened_and_when_it_fails(
    tmp_path: Path, store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)
    config = KalmaRunConfig(model="mock", questions=str(_questions(tmp_path, "Berlin")), kg=SPEC)
    result = run_kalma(tmp_path / "ok", config, model=MockChat(ANSWER))
    assert result.n_done_now == 1
    assert len(made) == 1 and made[0].queries and made[0].closed
    config = KalmaRunConfig(model="mock", questions=str(_questions(tmp_path, "Danzig")), kg=SPEC)
    with pytest.raises(DataError, match="names no entity"):
        run_kalma(tmp_path / "bad", config, model=MockChat(ANSWER))
    assert len(made) == 2 and made[1].queries and made[1].closed


def test_a_kg_the_caller_gave_is_left_open(tmp_path: Path, store: ox.Store) -> None:
    transport = RecordingTransport(store)
    kg = SparqlRdfKG(SparqlClient(virtuoso("http://kg.test/sparql"), transport=transport))
    config = KalmaScoreConfig(kg=SPEC, prefixes={"geo": GEO})
    score_answers(_answers(tmp_path, "Berlin"), tmp_path / "given", config, kg=kg)
    assert transport.queries and not transport.closed
