"""End-to-end ``kalma score`` on the bundled demo answers, checked against hand computation.

The demo answers (src/citegraph/kalma/demo/) cite real BioKaLMA facts (specific split). By hand,
paper mode, exact matching:

specific-0 (Stephen Crane): 9 citations, all in the KG. Gold {place of birth, father, medical
  condition, movement, mother}: hits Newark, father, movement -> 3 precise, recall 3/5.
specific-1 (Hanfstaengl): 6 citations, 'friend: Adolf Hitler' not in the KG -> 5 correct.
  Gold {party, Beer Hall Putsch, employer, spouse}: 3 hits (spouse only under [NA]) -> 3/4.
specific-3 (Akshara Haasan): no citations ('[citation needed]' is a parse issue). Gold 2 facts,
  0 hits.
specific-6 (Enda Kenny): 7 citations; Q99999999 is unknown -> 6 correct. Gold {Taoiseach,
  Fine Gael, father Henry Kenny}: 2 hits -> 2 precise, recall 2/3.

correctness micro 20/22, macro mean(9/9, 5/6, 6/7) (specific-3 has no citation: excluded)
precision   micro 8/22,  macro mean(3/9, 3/6, 2/7)
recall      micro 8/14,  macro mean(3/5, 3/4, 0, 2/3)
F1 from the aggregated P and R.
alignment (lexical matcher): every cited value is in its sentence except 'spouse: Fionnuala
  Kenny' -> micro 21/22, macro mean(1, 1, 6/7).
[NA]: specific-0's [NA] sentence does not mention its absent fact (mother); specific-1's "He
  married Helene Hanfstaengl [NA]." does -> precision 1/2 and recall 1/2, micro and macro.
"""

from __future__ import annotations

import json
import shutil
from fractions import Fraction as F
from importlib import resources
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.metrics import BootstrapConfig
from citegraph.runs import Runtime, finalize, merge_runs, task_type

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def _f1(p: F, r: F) -> float:
    return float(2 * p * r / (p + r))


def _expected_paper() -> dict[str, tuple[float, float]]:
    p_micro, p_macro = F(8, 22), (F(3, 9) + F(3, 6) + F(2, 7)) / 3
    r_micro, r_macro = F(8, 14), (F(3, 5) + F(3, 4) + 0 + F(2, 3)) / 4
    return {
        "correctness": (20 / 22, float((1 + F(5, 6) + F(6, 7)) / 3)),
        "precision": (float(p_micro), float(p_macro)),
        "recall": (float(r_micro), float(r_macro)),
        "f1": (_f1(p_micro, r_micro), _f1(p_macro, r_macro)),
        "alignment": (21 / 22, float((1 + 1 + F(6, 7)) / 3)),
        "na_precision": (0.5, 0.5),
        "na_recall": (0.5, 0.5),
    }


def test_demo_answers_paper_mode(tmp_path: Path, data_dir: Path) -> None:
    result = score_answers(
        DEMO / "answers.jsonl",
        tmp_path / "run",
        gold_path=DEMO / "gold.jsonl",
        data_dir=data_dir,
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics == result.metrics
    for name, (micro, macro) in _expected_paper().items():
        assert metrics[name]["micro"] == pytest.approx(micro), name
        assert metrics[name]["macro"] == pytest.approx(macro), name
    assert metrics["n_answers"] == 4 and metrics["n_citations"] == 22
    assert metrics["n_parse_issues"] == 1  # [citation needed]
    assert metrics["config"]["nli_name"] == "lexical"
    assert metrics["config"]["parser_version"] == "paper-v1"
    # specific-3 and specific-6 carry no absent set: [NA] unmeasured for them, with the reason.
    assert sum(metrics["unmeasured"]["na_recall"].values()) == 2
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert [s["id"] for s in samples] == ["specific-0", "specific-1", "specific-3", "specific-6"]
    kenny = samples[3]["citations"]["verdicts"]
    assert [v["correct"] for v in kenny] == [True] * 6 + [False]


def test_reference_mode_counts_na_pairs_against_uncited_gold(
    tmp_path: Path, data_dir: Path
) -> None:
    config = KalmaScoreConfig(mode="reference")
    metrics = score_answers(
        DEMO / "answers.jsonl",
        tmp_path,
        config,
        gold_path=DEMO / "gold.jsonl",
        data_dir=data_dir,
    ).metrics
    # Absent = gold facts not cited: specific-0 {medical condition, mother}: its [NA] sentence
    # entails neither; specific-1 {spouse}: entailed. Answers without [NA] do not count.
    assert metrics["na_precision"]["micro"] == pytest.approx(1 / 2)
    assert metrics["na_recall"]["micro"] == pytest.approx(1 / 3)
    assert metrics["na_recall"]["macro"] == pytest.approx(1 / 2)
    assert metrics["config"]["alignment_cap"] == 400


def test_without_gold_precision_recall_and_na_are_unmeasured(
    tmp_path: Path, data_dir: Path
) -> None:
    metrics = score_answers(DEMO / "answers.jsonl", tmp_path, data_dir=data_dir).metrics
    for name in ("precision", "recall", "f1", "na_precision", "na_recall"):
        assert metrics[name] == {"micro": None, "macro": None}, name
    assert metrics["unmeasured"]["precision"] == {"no gold minimum knowledge set": 4}
    assert metrics["correctness"]["micro"] == pytest.approx(20 / 22)


def test_resume_scores_only_new_answers(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    lines = (DEMO / "answers.jsonl").read_text().splitlines()
    answers.write_text("\n".join(lines[:2]) + "\n")
    first = score_answers(answers, tmp_path / "run", data_dir=data_dir)
    assert (first.n_scored_now, first.n_resumed) == (2, 0)
    # The answers file grows: the run identity (its hash) changes, so the same --out is refused...
    answers.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"data\.answers"):
        score_answers(answers, tmp_path / "run", data_dir=data_dir)
    # ...while re-running the identical command resumes without re-scoring anything.
    shutil.copy(DEMO / "answers.jsonl", answers)
    score_answers(answers, tmp_path / "run2", data_dir=data_dir)
    again = score_answers(answers, tmp_path / "run2", data_dir=data_dir)
    assert (again.n_scored_now, again.n_resumed) == (0, 4)
    assert again.metrics["correctness"]["micro"] == pytest.approx(20 / 22)


def test_unknown_id_names_line(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "specific-0", "answer": ""}\n{"id": "general-3", "answer": "x"}\n')
    with pytest.raises(DataError, match=r"a.jsonl:2, field 'id': id 'general-3' is not in"):
        score_answers(answers, tmp_path / "run", data_dir=data_dir)
    assert not (tmp_path / "run").exists()


def test_empty_answer_paper_scores_reference_skips(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "specific-0", "answer": null}\n')
    gold = tmp_path / "g.jsonl"
    gold.write_text(
        '{"id": "specific-0", "knowledge": [["Q206534", "father", "Jonathan Townley Crane"]]}\n'
    )
    paper = score_answers(answers, tmp_path / "p", gold_path=gold, data_dir=data_dir).metrics
    assert paper["recall"] == {"micro": 0.0, "macro": 0.0}  # paper: an empty answer scores 0
    ref = score_answers(
        answers,
        tmp_path / "r",
        KalmaScoreConfig(mode="reference"),
        gold_path=gold,
        data_dir=data_dir,
    ).metrics
    assert ref["recall"] == {"micro": None, "macro": None}  # reference: skipped, with a reason
    assert "empty answer" in next(iter(ref["unmeasured"]["recall"]))


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_shards_merge_to_the_single_run(tmp_path: Path, data_dir: Path, mode: str) -> None:
    config = KalmaScoreConfig(mode=mode, bootstrap=20, batch_size=2)
    gold = DEMO / "gold.jsonl"
    answers = DEMO / "answers.jsonl"
    whole = score_answers(answers, tmp_path / "whole", config, gold_path=gold, data_dir=data_dir)
    shards = []
    for i in range(2):
        out = tmp_path / f"shard{i}"
        part = score_answers(
            answers, out, config, runtime=Runtime(shard=f"{i}/2"), gold_path=gold, data_dir=data_dir
        )
        assert part.n_scored_now == 2  # four demo answers, two per shard
        shards.append(out)
    merged = merge_runs(shards, tmp_path / "merged")
    assert finalize(task_type("kalma.score"), merged) == whole.metrics
    assert json.loads((tmp_path / "merged" / "metrics.json").read_text()) == json.loads(
        (tmp_path / "whole" / "metrics.json").read_text()
    )


def test_limit_scores_the_first_answers(tmp_path: Path, data_dir: Path) -> None:
    result = score_answers(
        DEMO / "answers.jsonl", tmp_path / "two", runtime=Runtime(limit=2), data_dir=data_dir
    )
    assert result.metrics["n_answers"] == 2 and result.n_scored_now == 2


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_streamed_metrics_equal_the_aggregates_of_the_full_scores(
    tmp_path: Path, data_dir: Path, mode: str
) -> None:
    """Issue 18, item 4: metrics.json is aggregated in one pass over the stored records, keeping
    of each answer only what the averages need; it equals the aggregates of the full per-answer
    scores (verdicts, NLI pairs, absent facts kept), and the metrics of the records as a list."""
    from citegraph.kalma.score import (
        AnswerAlignment,
        AnswerCitationScores,
        AnswerNAScores,
        aggregate_alignment,
        aggregate_citation_scores,
        aggregate_na_scores,
    )
    from citegraph.runs import RunDir

    config = KalmaScoreConfig(mode=mode, bootstrap=20)  # type: ignore[arg-type]
    result = score_answers(
        DEMO / "answers.jsonl", tmp_path, config, gold_path=DEMO / "gold.jsonl", data_dir=data_dir
    )
    run = RunDir.read(tmp_path)
    records = list(run.records)
    bootstrap = BootstrapConfig(n_resamples=20, seed=0)
    citations = aggregate_citation_scores(
        [AnswerCitationScores.model_validate(r["citations"]) for r in records],
        bootstrap=bootstrap,
        mode=config.mode,
    )
    alignment = aggregate_alignment(
        [
            AnswerAlignment.model_validate(r["alignment"]) if r["alignment"] else None
            for r in records
        ],
        mode=config.mode,
        bootstrap=bootstrap,
    )
    na = aggregate_na_scores(
        [AnswerNAScores.model_validate(r["na"]) for r in records if r["na"]],
        bootstrap=bootstrap,
        mode=config.mode,
    )
    details = result.metrics["details"]
    for name in ("correctness", "precision", "recall", "f1"):
        assert details[name] == getattr(citations, name).model_dump(mode="json"), name
    assert details["alignment"] == alignment.alignment.model_dump(mode="json")
    assert result.metrics["config"]["alignment_sources"] == alignment.sources
    assert details["na_precision"] == na.precision.model_dump(mode="json")
    assert details["na_recall"] == na.recall.model_dump(mode="json")
    assert result.metrics["na_edge_case"]["n_sentences"] == na.n_edge_case
    summary = task_type("kalma.score").summarize(records, run.info)
    assert summary == {
        k: v for k, v in result.metrics.items() if k not in ("progress", "samples_file")
    }


def test_equal_answer_summaries_are_shared_and_count_once_each(
    tmp_path: Path, data_dir: Path
) -> None:
    """The metrics keep one object per distinct answer summary; an answer scored twice (under
    two ids) still counts twice: the demo's hand-checked micro averages come out unchanged, and
    the macro averages too, since each answer's ratio appears twice."""
    from citegraph.kalma.score._report import _Scores, build_metrics
    from citegraph.runs import RunDir

    config = KalmaScoreConfig()
    result = score_answers(
        DEMO / "answers.jsonl", tmp_path, config, gold_path=DEMO / "gold.jsonl", data_dir=data_dir
    )
    records = list(RunDir.read(tmp_path).records)
    doubled = records + [r | {"id": f"{r['id']}-again"} for r in records]
    scores = _Scores.of(doubled)
    n = len(records)
    assert all(scores.citations[i] is scores.citations[n + i] for i in range(n))
    assert all(scores.outlines[i] is scores.outlines[n + i] for i in range(n))
    metrics = build_metrics(doubled, config, "lexical", gold_given=True)
    for name, (micro, macro) in _expected_paper().items():
        assert metrics[name]["micro"] == pytest.approx(micro), name
        assert metrics[name]["macro"] == pytest.approx(macro), name
    assert metrics["n_answers"] == 2 * result.metrics["n_answers"]
    assert metrics["n_citations"] == 2 * result.metrics["n_citations"]
    assert metrics["unmeasured"] == {
        k: {reason: 2 * c for reason, c in v.items()}
        for k, v in result.metrics["unmeasured"].items()
    }
