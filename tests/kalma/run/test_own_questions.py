"""``kalma run --questions questions.jsonl --kg kg.ttl``: your own questions over your own KG.

A Turtle KG with a ``#`` namespace (``geo:``); three questions: ``warsaw`` (its entity found by
NER, gold in the line), ``berlin`` (``entities`` by label, gold subject a label) and ``none``
(no entity, no gold). The scripted model cites what its prompt showed, plus one wrong fact for
Warsaw. By hand, paper mode:

warsaw  [geo:Warsaw, located on river: Vistula] correct, gold; [geo:Warsaw, country: Germany]
        wrong -> correctness 1/2, precision 1/2, recall 1/1
berlin  [geo:Berlin, country: Germany] correct, gold -> 1/1, 1/1, 1/1
none    no entity retrieved: "I cannot say [NA]." -> no KG citation; no gold

correctness micro 2/3, macro mean(1/2, 1) = 3/4; precision the same; recall micro 2/2, macro 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from _kg_helpers import GEO
from _kg_helpers import GEO_KG as KG
from citegraph.cli import main
from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import ChatRequest, MockChat

QUESTIONS = [
    {
        "id": "warsaw",
        "question": "Which river flows through Warsaw?",
        "gold": [["geo:Warsaw", "located on river", "Vistula"]],
    },
    {
        "id": "berlin",
        "question": "In which country is the city on the Spree?",
        "entities": ["Berlin"],
        "gold": [["Berlin", "country", "Germany"]],
    },
    {"id": "none", "question": "Which river is it on?"},
]


def script(request: ChatRequest) -> str:
    user = request.messages[-1].content
    if "geo:Warsaw" in user:
        return (
            "Warsaw lies on the Vistula [geo:Warsaw, located on river: Vistula]. "
            "It is in Germany [geo:Warsaw, country: Germany]."
        )
    if "geo:Berlin" in user:
        return "Berlin is in Germany [geo:Berlin, country: Germany]."
    return "I cannot say [NA]."


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _files(tmp_path: Path, questions: list[dict[str, object]] = QUESTIONS) -> tuple[Path, Path]:
    kg = tmp_path / "geo.ttl"
    kg.write_text(KG, encoding="utf-8")
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return path, kg


def _run(tmp_path: Path, **options: object):
    path, kg = _files(tmp_path)
    config = KalmaRunConfig(model="mock", questions=str(path), kg=str(kg), **options)
    return run_kalma(tmp_path / "run", config, model=MockChat(script))


def _records(out: Path) -> dict[str, dict]:
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.mark.needs("spacy")
def test_own_questions_are_answered_and_scored_by_hand(tmp_path: Path) -> None:
    result = _run(tmp_path)
    m = result.metrics
    assert m["correctness"]["micro"] == pytest.approx(2 / 3)
    assert m["correctness"]["macro"] == pytest.approx(3 / 4)
    assert m["precision"]["micro"] == pytest.approx(2 / 3)
    assert m["precision"]["macro"] == pytest.approx(3 / 4)
    assert m["recall"]["micro"] == pytest.approx(1.0)
    assert m["recall"]["macro"] == pytest.approx(1.0)
    records = _records(tmp_path / "run")
    assert records["warsaw"]["retrieval"]["source"] == "ner"
    assert records["warsaw"]["retrieval"]["mentions"] == ["Warsaw"]
    assert records["berlin"]["retrieval"] == {
        "source": "entities",
        "entities": ["Berlin"],
        "qids": [f"{GEO}Berlin"],
    }
    assert records["none"]["retrieval"]["found_none"] == "retrieval found no entity"
    assert records["berlin"]["short_ids"] == {f"{GEO}Berlin": "geo:Berlin"}
    assert m["retrieval"]["sources"] == {"ner": 2, "entities": 1}
    assert m["retrieval"]["n_found_none"] == 1
    info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert set(info["data"]) == {"questions", "kg"}
    assert info["config"]["questions"].endswith("questions.jsonl")
    assert not {"dataset", "split", "retrieval"} & set(info["config"])


@pytest.mark.needs("spacy")
def test_own_questions_resume(tmp_path: Path) -> None:
    first = _run(tmp_path)
    again = _run(tmp_path)
    assert (first.n_done_now, again.n_done_now, again.n_resumed) == (3, 0, 3)


def test_gold_facts_are_removed_for_conscious_incompetence(tmp_path: Path) -> None:
    path, kg = _files(tmp_path, QUESTIONS[1:2])
    config = KalmaRunConfig(model="mock", questions=str(path), kg=str(kg), remove_knowledge=1)
    run_kalma(tmp_path / "run", config, model=MockChat(script))
    record = _records(tmp_path / "run")["berlin"]
    assert record["removed"] == [[f"{GEO}Berlin", "country", "Germany"]]
    assert [f"{GEO}Berlin", "country", "Germany"] not in record["kg_given"]


def test_dataset_runs_keep_their_identity() -> None:
    assert "questions" not in KalmaRunConfig().identity()
    assert KalmaRunConfig().identity()["dataset"] == "biokalma"


@pytest.mark.parametrize(
    ("questions", "message", "line", "field"),
    [
        ([{"id": "a", "question": "Q?", "entities": ["Danzig"]}], "names no entity", 1, "entities"),
        ([{"id": "a", "question": " "}], "missing or not a non-empty string", 1, "question"),
        ([{"id": "a", "question": "Q?", "answer": "x"}], "unknown field", 1, "answer"),
        (
            [{"id": "a", "question": "Q?"}, {"id": "b", "question": "Q?", "gold": [["x", "y"]]}],
            "must be",
            2,
            "gold",
        ),
    ],
)
def test_bad_questions_stop_before_any_model_call(
    tmp_path: Path, questions: list[dict[str, object]], message: str, line: int, field: str
) -> None:
    path, kg = _files(tmp_path, questions)
    model = MockChat(script)
    config = KalmaRunConfig(model="mock", questions=str(path), kg=str(kg))
    with pytest.raises(DataError) as caught:
        run_kalma(tmp_path / "run", config, model=model)
    assert message in str(caught.value)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert model.requests == []


def test_gold_given_twice_is_refused(tmp_path: Path) -> None:
    path, kg = _files(tmp_path)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "warsaw", "knowledge": []}) + "\n", encoding="utf-8")
    config = KalmaRunConfig(model="mock", questions=str(path), kg=str(kg), gold=str(gold))
    with pytest.raises(DataError, match="has gold in the questions file already"):
        run_kalma(tmp_path / "run", config, model=MockChat(script))


def test_question_match_gold_is_for_biokalma() -> None:
    with pytest.raises(ConfigError, match="your own questions take their gold"):
        KalmaRunConfig(questions="q.jsonl", gold="question-match")


@pytest.mark.needs("spacy")
def test_cli_answers_own_questions(tmp_path: Path) -> None:
    path, kg = _files(tmp_path)
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        main,
        [
            *("kalma", "run", "--questions", str(path), "--kg", str(kg)),
            *("--model", "mock", "--citations", "constrained", "--out", str(out)),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "kalma run: your questions" in result.output
    assert len(_records(out)) == 3
