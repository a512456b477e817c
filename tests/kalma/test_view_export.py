"""``runs export`` of a real ``kalma score`` run (the README's own-KG example, one answer
rewritten to hold two malformed brackets): the ``citations`` table has a row for every bracket,
and each sample's ``unmeasured_<metric>`` says what ``metrics.json`` counts (issue 36, 8)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from citegraph.kalma.score import score_answers
from citegraph.runs import export_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own-kg"
NO_CITATION = "answer cites no KG triple (left out of the macro average)"
NO_ABSENT = "no absent-knowledge set (gold 'absent' field) for this answer"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict[str, list[dict]]]:
    root = tmp_path_factory.mktemp("export")
    lines = (EXAMPLE / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    answers = [json.loads(line) for line in lines if line.strip()]
    for answer in answers:
        if answer["id"] == "einstein-work":  # one KG citation, then two brackets that give none
            answer["answer"] += " He moved to Princeton [citation needed]. He was famous [ex:X]."
    path = root / "answers.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    run = root / "run"
    score_answers(path, run, kg=str(EXAMPLE / "people.ttl"), gold_path=EXAMPLE / "gold.jsonl")
    files = export_run(run, root / "tables", "jsonl")
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    return metrics, {name: _rows(p) for name, p in files.items()}


@pytest.mark.needs("spacy")  # the example's answers are retrieved by NER
def test_every_bracket_has_a_row(exported: tuple[dict, dict[str, list[dict]]]) -> None:
    _, tables = exported
    einstein = [r for r in tables["citations"] if r["sample_id"] == "einstein-work"]
    cited = "[http://example.org/kg/AlbertEinstein, employer: Institute for Advanced Study]"
    assert [(r["kind"], r["sentence_index"], r["bracket"]) for r in einstein] == [
        ("triple", 0, cited),
        ("malformed", 1, "[citation needed]"),
        ("malformed", 2, "[ex:X]"),
    ]
    assert all(r["reason"] for r in einstein[1:]) and einstein[0]["reason"] is None
    # Over the run: one row per KG citation, [NA] marker and malformed bracket of the samples
    kinds = Counter(r["kind"] for r in tables["citations"])
    samples = tables["samples"]
    assert kinds["triple"] == sum(s["n_citations"] for s in samples) == 9  # 3+2+1+1+0+2
    assert kinds["na"] == sum(s["n_na_markers"] for s in samples) == 1
    assert kinds["malformed"] == sum(s["n_malformed_brackets"] for s in samples) == 2


@pytest.mark.needs("spacy")  # the example's answers are retrieved by NER
def test_unmeasured_columns_count_as_the_metrics(
    exported: tuple[dict, dict[str, list[dict]]],
) -> None:
    metrics, tables = exported
    by_id = {s["id"]: s for s in tables["samples"]}
    # Ada Lovelace's answer cites nothing: correctness and precision are 0 / 0.
    lovelace = by_id["lovelace-birth"]
    assert lovelace["unmeasured_correctness"] == lovelace["unmeasured_precision"] == NO_CITATION
    assert lovelace["unmeasured_recall"] is None  # 0 of 1 gold fact: measured
    assert metrics["unmeasured"]["precision"] == {NO_CITATION: 1}
    # Only Bohr's gold entry has an absent set: the 5 others are unmeasured in [NA] precision.
    assert metrics["unmeasured"]["na_precision"] == {NO_ABSENT: 5}
    for metric in ("correctness", "precision", "recall", "alignment", "na_precision", "na_recall"):
        column = Counter(
            s[f"unmeasured_{metric}"] for s in tables["samples"] if s[f"unmeasured_{metric}"]
        )
        assert column == Counter(metrics["unmeasured"].get(metric, {})), metric
