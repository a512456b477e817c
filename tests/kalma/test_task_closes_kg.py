"""A task closes the SPARQL KG it opened from its ``kg`` spec when it ends, also when it fails.

``kalma score`` and ``kalma run`` over ``sparql+<url>`` (answered from a pyoxigraph store through
a transport that records being closed, no network): after a finished run, and after a run
stopped by a reference the KG does not hold (``DataError`` once the KG is open), the client's
HTTP transport is closed. The same run over a KG object the caller gave leaves it open.
``citegraph kalma retrieve --kg sparql+<url>`` closes the KG it opened too, after the report and
after a retrieval that failed; so does ``kalma build`` over a SPARQL KG of two people, after a
finished build and after one refused because its directory holds another build.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from _kg_helpers import GEO, GEO_KG
from _sparql_server import RecordingTransport, record_opened_clients
from citegraph import kalma
from citegraph.cli import main
from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaRunConfig, KalmaScoreConfig, run_kalma, score_answers
from citegraph.kalma.build import KalmaBuildConfig, build_benchmark
from citegraph.kg import SparqlClient, SparqlRdfKG, virtuoso
from citegraph.models import MockChat
from citegraph.runs import Runtime

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


def _retrieve(data_dir: Path, out: Path) -> list[str]:
    return ["kalma", "retrieve", "--kg", SPEC, "--ner", "capitalised", "--limit", "2",
            "--data-dir", str(data_dir), "--out", str(out)]  # fmt: skip


def test_kalma_retrieve_closes_the_kg_it_opened(
    tmp_path: Path, data_dir: Path, store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)
    result = CliRunner().invoke(main, _retrieve(data_dir, tmp_path / "ok"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ok" / "report.json").is_file()
    assert len(made) == 1 and made[0].queries and made[0].closed


def test_kalma_retrieve_closes_the_kg_when_retrieval_fails(
    tmp_path: Path, data_dir: Path, store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)
    evaluate = kalma.evaluate_retrieval_async

    async def failing(*args: object, **kwargs: object) -> object:
        await evaluate(*args, **kwargs)  # type: ignore[arg-type]  # asks the KG, then fails
        raise DataError("a question went wrong")

    monkeypatch.setattr(kalma, "evaluate_retrieval_async", failing)
    result = CliRunner().invoke(main, _retrieve(data_dir, tmp_path / "bad"))
    assert result.exit_code == 2 and "a question went wrong" in result.stderr
    assert not (tmp_path / "bad" / "report.json").exists()
    assert len(made) == 1 and made[0].queries and made[0].closed


#: Two people the KG connects by ``father`` (what ``kalma build`` resolves a pair to).
PEOPLE_KG = """@prefix ex: <http://people.test/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:father rdfs:label "father" .
ex:placeOfBirth rdfs:label "place of birth" .
ex:placeOfDeath rdfs:label "place of death" .
ex:Artemisia rdfs:label "Artemisia Gentileschi" ; ex:father ex:Orazio ; ex:placeOfBirth ex:Rome .
ex:Orazio rdfs:label "Orazio Gentileschi" ; ex:placeOfDeath ex:London .
ex:Rome rdfs:label "Rome" .
ex:London rdfs:label "London" .
"""
SEED = "Artemisia Gentileschi was born in Rome."


async def _flat_perplexity(texts: Sequence[str]) -> list[float | None]:
    return [10.0 for _ in texts]


def _build(tmp_path: Path, rounds: int) -> int:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(
        f"name1,relation,name2,paragraph\nArtemisia Gentileschi,father,Orazio Gentileschi,{SEED}\n",
        encoding="utf-8",
    )
    result = build_benchmark(
        tmp_path / "bench",
        KalmaBuildConfig(kg=SPEC, pairs=str(pairs), rounds=rounds),
        model=MockChat(f"Generated Answer: {SEED}"),
        perplexity=_flat_perplexity,
        runtime=Runtime(cache=False),
    )
    return result.metrics["selection"]["n_resolved"]


def test_kalma_build_closes_the_kg_it_opened_and_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ox.Store()
    store.load(PEOPLE_KG.encode(), format=ox.RdfFormat.TURTLE)
    made = record_opened_clients(monkeypatch, store)
    assert _build(tmp_path, rounds=1) == 1  # the pair was resolved in the KG
    assert len(made) == 1 and made[0].queries and made[0].closed
    with pytest.raises(ConfigError, match="different configuration"):  # another build there
        _build(tmp_path, rounds=2)
    assert len(made) == 2 and made[1].queries and made[1].closed
