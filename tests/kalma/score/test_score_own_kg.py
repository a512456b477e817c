"""``kalma score --kg``: the README's example (examples/own-kg/) scored over its own Turtle KG.

The KG (people.ttl) has 34 facts about seven people under ``http://example.org/kg/``; two of them
are labelled "William Thomson". The answers cite with short ids (``ex:MarieCurie``), one with a
full IRI; the gold subjects are labels, CURIEs, a local name and full IRIs. Each answer's graph is
retrieved from its question (spaCy NER -> label lookup), except kelvin-birth's, given by its
``entities`` (``ex:WilliamThomson``, the physicist). By hand, paper mode, lexical matcher:

curie-awards   3 citations, all in the KG; gold {Physics prize, Chemistry prize}: 2 of them
               (birth place is not gold) -> precision 2/3, recall 2/2.
pierre-curie   2 citations: spouse Marie Curie (in the KG, gold), place of birth Lyon (the KG
               says Paris: wrong) -> correctness 1/2, precision 1/2, recall 1/2 (Paris missed).
einstein-work  1 citation with a full IRI, in the KG and gold -> 1/1, 1/1, recall 1/1.
bohr-advisor   1 citation, in the KG and gold -> 1/1, 1/1, recall 1/1; its [NA] sentence names
               the absent fact's value (Hendrik Kramers) -> [NA] precision 1/1, recall 1/1.
lovelace-birth no citation: left out of correctness and precision; recall 0/1.
kelvin-birth   2 citations, both in the KG and gold -> 2/2, 2/2, recall 2/2.

correctness micro (3+1+1+1+2)/(3+2+1+1+2) = 8/9,  macro mean(1, 1/2, 1, 1, 1) = 9/10
precision   micro (2+1+1+1+2)/9 = 7/9,            macro mean(2/3, 1/2, 1, 1, 1) = 5/6
recall      micro (2+1+1+1+0+2)/(2+2+1+1+1+2) = 7/9, macro mean(1, 1/2, 1, 1, 0, 1) = 3/4
F1          micro 2PR/(P+R) = 7/9,               macro 2(5/6)(3/4)/(5/6+3/4) = 15/19
alignment   every cited value is in its sentence (Lyon too: alignment does not check the KG)
            -> 9/9 micro and macro; [NA] precision and recall 1 (one answer measured).
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaScoreConfig, score_answers

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "own-kg"
KG = str(EXAMPLE / "people.ttl")
EXPECTED = {
    "correctness": (F(8, 9), F(9, 10)),
    "precision": (F(7, 9), F(5, 6)),
    "recall": (F(7, 9), F(3, 4)),
    "f1": (F(7, 9), F(15, 19)),
    "alignment": (F(1), F(1)),
    "na_precision": (F(1), F(1)),
    "na_recall": (F(1), F(1)),
}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.needs("spacy")
def test_example_scores_match_the_hand_computation(tmp_path: Path) -> None:
    result = score_answers(
        EXAMPLE / "answers.jsonl", tmp_path / "run", kg=KG, gold_path=EXAMPLE / "gold.jsonl"
    )
    metrics = result.metrics
    for name, (micro, macro) in EXPECTED.items():
        assert metrics[name]["micro"] == pytest.approx(float(micro)), name
        assert metrics[name]["macro"] == pytest.approx(float(macro)), name
    assert metrics["n_answers"] == 6
    assert metrics["n_citations"] == 9
    assert metrics["warnings"] == {}
    assert metrics["config"]["kg"] == KG
    assert "dataset" not in metrics["config"]


@pytest.mark.needs("spacy")
def test_records_keep_the_graphs_and_the_run_the_kg_identity(tmp_path: Path) -> None:
    score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run", kg=KG)
    records = {
        r["id"]: r
        for r in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())
    }
    assert list(records) == [
        "curie-awards",
        "pierre-curie",
        "einstein-work",
        "bohr-advisor",
        "lovelace-birth",
        "kelvin-birth",
    ]
    curie = records["curie-awards"]
    assert curie["retrieval"]["source"] == "ner"
    assert curie["retrieval"]["mentions"] == ["Marie Curie"]
    assert curie["retrieval"]["qids"] == ["http://example.org/kg/MarieCurie"]
    # Marie Curie has 8 facts in people.ttl, each shown with her name.
    assert len(curie["kg_triples"]) == 8
    assert {t["subject_label"] for t in curie["kg_triples"]} == {"Marie Curie"}
    assert curie["short_ids"] == {"http://example.org/kg/MarieCurie": "ex:MarieCurie"}
    kelvin = records["kelvin-birth"]["retrieval"]
    assert kelvin == {
        "source": "entities",
        "entities": ["ex:WilliamThomson"],
        "qids": ["http://example.org/kg/WilliamThomson"],
        "cited": ["http://example.org/kg/WilliamThomson"],  # [ex:WilliamThomson, ...]
        "graphs": {"http://example.org/kg/WilliamThomson": ["entities", "cited"]},
    }
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert set(info["data"]) == {"answers", "kg"}
    assert len(info["data"]["kg"]) == 64  # the SHA-256 of people.ttl's content


@pytest.mark.needs("spacy")
def test_resumes_without_scoring_again(tmp_path: Path) -> None:
    first = score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run", kg=KG)
    again = score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run", kg=KG)
    assert (first.n_scored_now, again.n_scored_now, again.n_resumed) == (6, 0, 6)
    assert again.metrics["correctness"] == first.metrics["correctness"]


@pytest.mark.needs("spacy")
def test_cli_scores_the_example(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "kalma",
            "score",
            str(EXAMPLE / "answers.jsonl"),
            "--kg",
            KG,
            "--gold",
            str(EXAMPLE / "gold.jsonl"),
            "--out",
            str(tmp_path / "run"),
        ],
        env={"CITEGRAPH_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "6 answers, 9 citations" in result.output
    assert "88.9" in result.output  # correctness micro 8/9
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["precision"]["micro"] == pytest.approx(7 / 9)


@pytest.mark.parametrize("flag", [["--dataset", "biokalma"], ["--split", "general"]])
def test_cli_kg_with_a_dataset_is_a_usage_error(tmp_path: Path, flag: list[str]) -> None:
    args = ["kalma", "score", str(EXAMPLE / "answers.jsonl"), "--kg", KG, *flag]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert f"{flag[0]} chooses a benchmark's questions" in result.output
    assert not (tmp_path / "run").exists()


def test_python_kg_with_another_dataset_is_an_error(tmp_path: Path) -> None:
    config = KalmaScoreConfig(dataset=str(tmp_path))
    with pytest.raises(ConfigError, match="not both"):
        score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run", config, kg=KG)


def test_ambiguous_gold_label_names_file_line_field_and_candidates(tmp_path: Path) -> None:
    gold = _write(
        tmp_path / "gold.jsonl",
        [
            {"id": "curie-awards", "knowledge": [["Marie Curie", "spouse", "Pierre Curie"]]},
            {"id": "kelvin-birth", "knowledge": [["William Thomson", "place of birth", "Belfast"]]},
        ],
    )
    with pytest.raises(DataError) as caught:
        score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run", kg=KG, gold_path=gold)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(gold), 2, "knowledge")
    assert "'William Thomson' is ambiguous: it names 2 entities" in str(error)
    assert (
        "http://example.org/kg/WilliamThomson, http://example.org/kg/WilliamThomsonArchbishop"
        in (str(error))
    )
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_unknown_entity_is_an_error(tmp_path: Path) -> None:
    answers = _write(
        tmp_path / "answers.jsonl",
        [
            {"id": "a", "question": "Who is Marie Curie?", "answer": "A physicist."},
            {"id": "b", "question": "Who?", "entities": ["Lise Meitner"], "answer": "x"},
        ],
    )
    with pytest.raises(DataError, match="entity 'Lise Meitner' names no entity in the KG") as e:
        score_answers(answers, tmp_path / "run", kg=KG)
    assert (e.value.path, e.value.line, e.value.field) == (str(answers), 2, "entities")


def test_answers_over_a_kg_need_their_question(tmp_path: Path) -> None:
    answers = _write(tmp_path / "answers.jsonl", [{"id": "a", "answer": "Marie Curie."}])
    with pytest.raises(DataError, match="need their question") as e:
        score_answers(answers, tmp_path / "run", kg=KG)
    assert (e.value.line, e.value.field) == (1, "question")


@pytest.mark.needs("spacy")
def test_gold_for_ids_without_answers_is_a_warning_or_an_error(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (EXAMPLE / "gold.jsonl").read_text().splitlines()]
    extra = _write(
        tmp_path / "gold.jsonl",
        [*rows, {"id": "meitner", "knowledge": [["Ada Lovelace", "field of work", "x"]]}],
    )
    metrics = score_answers(
        EXAMPLE / "answers.jsonl", tmp_path / "run", kg=KG, gold_path=extra
    ).metrics
    assert metrics["warnings"]["gold_unmatched"]["n"] == 1
    assert metrics["warnings"]["gold_unmatched"]["ids"] == ["meitner"]
    none = _write(tmp_path / "none.jsonl", [{"id": "q1", "knowledge": []}])
    with pytest.raises(DataError, match="none of the 1 gold ids is the id of an answer"):
        score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run2", kg=KG, gold_path=none)


def test_a_kg_file_given_as_the_dataset_points_to_kg(tmp_path: Path) -> None:
    # The first error: the KG passed where a dataset directory is expected.
    with pytest.raises(DataError, match=r"not a dataset directory.*give it as --kg"):
        score_answers(EXAMPLE / "answers.jsonl", tmp_path / "run", KalmaScoreConfig(dataset=KG))
