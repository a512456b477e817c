"""No silent hazard in ``kalma score`` over a dataset: each is a warning counted in metrics.json
(and printed by the CLI) or a DataError naming the file, line and field.

The demo answers and gold (src/citegraph/kalma/demo/, BioKaLMA specific split) score, by hand
(test_kalma_score.py): precision micro 8/22, recall micro 8/14. Changing how the gold names a
subject must not change those numbers; before, a subject given as a name matched nothing.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.datasets import load_biokalma
from citegraph.errors import DataError
from citegraph.kalma import score_answers
from citegraph.kalma.view._presenter import KalmaPresenter

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _answers_with_questions(tmp_path: Path, data_dir: Path) -> Path:
    """The demo answers with their questions: specific-0's is specific-1's (a mismatch),
    specific-1's its own in upper case with doubled spaces and specific-3's its own with
    BioKaLMA's 'question: ' prefix (both the same after folding)."""
    questions = {s.id: s.question for s in load_biokalma("specific", data_dir)[:7]}
    rows = _rows(DEMO / "answers.jsonl")
    rows[0]["question"] = questions["specific-1"]
    rows[1]["question"] = "  " + questions["specific-1"].upper().replace(" ", "  ")
    rows[2]["question"] = "Question: " + questions["specific-3"]
    return _write(tmp_path / "answers.jsonl", rows)


def test_question_of_another_entry_is_a_counted_warning(tmp_path: Path, data_dir: Path) -> None:
    answers = _answers_with_questions(tmp_path, data_dir)
    metrics = score_answers(answers, tmp_path / "run", data_dir=data_dir).metrics
    mismatch = metrics["warnings"]["question_mismatch"]
    assert (mismatch["n"], mismatch["ids"]) == (1, ["specific-0"])
    assert "scored against the entry's graphs" in mismatch["reason"]
    assert set(metrics["warnings"]) == {"question_mismatch"}
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    notes = KalmaPresenter.metrics(metrics, info).notes
    assert any(n.startswith("input warning: 1 x question_mismatch: answer's") for n in notes)


def test_cli_prints_the_warnings(tmp_path: Path, data_dir: Path) -> None:
    answers = _answers_with_questions(tmp_path, data_dir)
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(answers), "--data-dir", str(data_dir), "--out", str(tmp_path / "r")],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "warning: 1 x question_mismatch: answer's question differs" in result.output
    assert "(specific-0)" in result.output


def test_gold_subject_given_as_a_name_is_resolved_and_counted(
    tmp_path: Path, data_dir: Path
) -> None:
    rows = _rows(DEMO / "gold.jsonl")
    # specific-0's five facts and one absent fact name Stephen Crane, in any case.
    for field in ("knowledge", "absent"):
        rows[0][field] = [["stephen crane", r, v] for _, r, v in rows[0][field]]  # type: ignore[attr-defined]
    gold = _write(tmp_path / "gold.jsonl", rows)
    named = score_answers(DEMO / "answers.jsonl", tmp_path / "n", gold_path=gold, data_dir=data_dir)
    by_id = score_answers(
        DEMO / "answers.jsonl", tmp_path / "i", gold_path=DEMO / "gold.jsonl", data_dir=data_dir
    )
    warning = named.metrics["warnings"]["gold_subject_label"]
    assert (warning["n"], warning["ids"]) == (1, ["specific-0"])
    for name in ("precision", "recall", "na_precision", "na_recall"):
        assert named.metrics[name] == by_id.metrics[name], name
    assert named.metrics["precision"]["micro"] == pytest.approx(8 / 22)
    assert named.metrics["recall"]["micro"] == pytest.approx(8 / 14)
    assert by_id.metrics["warnings"] == {}


def test_gold_subject_that_names_no_entry_graph_is_an_error(tmp_path: Path, data_dir: Path) -> None:
    rows = _rows(DEMO / "gold.jsonl")
    rows[1]["knowledge"] = [["Ernst Hanfstängl", "spouse", "Helene Hanfstaengl"]]
    gold = _write(tmp_path / "gold.jsonl", rows)
    with pytest.raises(DataError, match="'Ernst Hanfstängl' names no entity among") as caught:
        score_answers(DEMO / "answers.jsonl", tmp_path / "run", gold_path=gold, data_dir=data_dir)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(gold), 2, "knowledge")
    assert "(Q58051)" in str(error)


def test_gold_for_ids_without_an_answer(tmp_path: Path, data_dir: Path) -> None:
    rows = _rows(DEMO / "gold.jsonl")
    extra = [{"id": f"specific-{i}", "knowledge": []} for i in (40, 41)] + [
        {"id": "q-unknown", "knowledge": []}
    ]
    gold = _write(tmp_path / "gold.jsonl", rows + extra)
    metrics = score_answers(
        DEMO / "answers.jsonl", tmp_path / "run", gold_path=gold, data_dir=data_dir
    ).metrics
    unmatched = metrics["warnings"]["gold_unmatched"]
    assert (unmatched["n"], unmatched["ids"]) == (3, ["specific-40", "specific-41", "q-unknown"])
    assert metrics["recall"]["micro"] == pytest.approx(8 / 14)  # the extra records are unused
    none = _write(tmp_path / "none.jsonl", extra)
    with pytest.raises(DataError, match="none of the 3 gold ids is the id of an answer") as e:
        score_answers(DEMO / "answers.jsonl", tmp_path / "r2", gold_path=none, data_dir=data_dir)
    assert (e.value.line, e.value.field) == (1, "id")


def test_gold_subject_id_outside_the_entry_graphs_is_kept_and_counted(
    tmp_path: Path, data_dir: Path
) -> None:
    rows = _rows(DEMO / "gold.jsonl")
    # specific-1 (Q58051) gets one more gold fact about Q1 (not one of its graphs): kept, so
    # recall's denominator grows by one: 8 hits of 14 gold facts -> 8 of 15.
    rows[1]["knowledge"].append(["Q1", "spouse", "Nobody"])  # type: ignore[attr-defined]
    gold = _write(tmp_path / "gold.jsonl", rows)
    metrics = score_answers(
        DEMO / "answers.jsonl", tmp_path / "run", gold_path=gold, data_dir=data_dir
    ).metrics
    outside = metrics["warnings"]["gold_subject_outside_graphs"]
    assert (outside["n"], outside["ids"]) == (1, ["specific-1"])
    assert metrics["recall"]["micro"] == pytest.approx(8 / 15)
