"""How CONNER runs are shown: hand-written score records and ``metrics.json`` with the view
worked out by hand, and one real score run made with the stub models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _conner_stubs import StubLM, StubRelevance, SubstringNLI, WordCount
from citegraph.conner import ConnerScoreConfig, score_knowledge
from citegraph.conner.acquire._view import KnowledgePresenter
from citegraph.conner.metrics import SENTENCE_LABELS
from citegraph.conner.score import ScoreModels
from citegraph.conner.score._view import LABEL_MARKS, ConnerScorePresenter
from citegraph.conner.score._view_charts import histogram
from citegraph.runs import (
    FieldsBlock,
    RawBlock,
    RunData,
    Segment,
    TableBlock,
    TextBlock,
    task_type,
)

P = ConnerScorePresenter
S1 = "Paris is in France."
S2 = "It has a <script>alert(1)</script> tower."
S3 = "The Moon is cheese."
KNOWLEDGE = f"{S1} {S2}\n{S3}"


def sentence(i: int, text: str, label: str, p: float, j: int, evidence: str) -> dict[str, Any]:
    return {
        "index": i, "text": text, "label": label, "entailment": p,
        "evidence_index": j, "evidence": evidence,
    }  # fmt: skip


ROWS = [
    sentence(0, S1, "consistent", 0.9, 1, "Paris is the capital of France."),
    sentence(1, S2, "non-verified", 0.2, 0, "A tower stands in Paris."),
    sentence(2, S3, "inconsistent", 0.05, 0, "The Moon is rock."),
]


def record(**extra: Any) -> dict[str, Any]:
    return {
        "id": "nq:7",
        "status": "ok",
        "source": "llm:m:v1",
        "query": "where is paris",
        "knowledge": KNOWLEDGE,
        "metrics": {
            "factuality": {
                "value": 0.05,
                "reason": None,
                "model": "nli-x",
                "details": {"label": 0, "sentences": ROWS},
            },
            "relevance": {"value": 0.8, "reason": None, "model": "rer", "details": {}},
            "coherence_para": {
                "value": None,
                "reason": "no paragraph model",
                "model": "none",
                "details": {},
            },
        },
        "answer": "<b>Paris</b>",
        "answer_prompt": "conner-v1/nq-ans-1/0shot-seed0",
    } | extra


def test_label_marks_cover_every_sentence_label() -> None:
    assert set(LABEL_MARKS) == set(SENTENCE_LABELS)


def test_summary_scores_and_tags() -> None:
    s = P.summary(record())
    assert (s.id, s.title, s.status) == ("nq:7", "where is paris", "ok")
    assert s.scores == {"factuality": 0.05, "relevance": 0.8, "coherence_para": None}
    assert s.tags == [
        "unmeasured", "unmeasured:coherence_para", "verdict:inconsistent", "verdict:non-verified",
    ]  # fmt: skip


def test_summary_title_is_the_shortened_query_or_the_id() -> None:
    long = "turn one [SEP]\n" + "word " * 40
    s = P.summary(record(query=long))
    assert len(s.title) == 120 and s.title.endswith("…") and "\n" not in s.title
    failed = P.summary({"id": "nq:3", "status": "failed", "metrics": {}})
    assert (failed.title, failed.tags, failed.scores) == ("nq:3", ["failed"], {})


def _tip(label: str, p: str, j: int, evidence: str) -> str:
    return f"{label} (P(entailment) {p}); evidence #{j}: {evidence}"


def test_sample_marks_each_sentence_and_keeps_model_text_verbatim() -> None:
    blocks = P.sample(record(), {})
    assert [type(b) for b in blocks] == [
        FieldsBlock, TextBlock, TableBlock, FieldsBlock, RawBlock, RawBlock,
    ]  # fmt: skip
    item, text, table, metrics, answer, raw = blocks
    assert isinstance(item, FieldsBlock)
    assert item.fields == [("query", "where is paris"), ("source", "llm:m:v1")]
    assert isinstance(text, TextBlock) and [m for m, _ in text.legend] == [
        "correct",
        "wrong",
        "unknown",
    ]
    tip1 = _tip("consistent", "0.900", 1, "Paris is the capital of France.")
    tip2 = _tip("non-verified", "0.200", 0, "A tower stands in Paris.")
    tip3 = _tip("inconsistent", "0.050", 0, "The Moon is rock.")
    assert text.paragraphs == [
        [
            Segment(text=S1, mark="correct", tip=tip1),
            Segment(text=" "),
            Segment(text=S2, mark="unknown", tip=tip2),  # "<script>" stays plain text
        ],
        [Segment(text=S3, mark="wrong", tip=tip3)],
    ]
    assert isinstance(table, TableBlock)
    assert table.row_marks == ["correct", "unknown", "wrong"]
    assert [[c.text for c in row] for row in table.rows][1] == [
        "1", S2, "non-verified", "0.200", "#0: A tower stands in Paris.",
    ]  # fmt: skip
    assert [row[2].mark for row in table.rows] == ["correct", "unknown", "wrong"]
    assert isinstance(metrics, FieldsBlock)
    assert metrics.fields == [
        ("factuality", "0.0500 (nli-x)"),
        ("relevance", "0.8000 (rer)"),
        ("coherence_para", "unmeasured: no paragraph model (none)"),
    ]
    assert isinstance(answer, RawBlock) and answer.text == "<b>Paris</b>"
    assert answer.title == "Answer (validity; prompt conner-v1/nq-ans-1/0shot-seed0)"
    assert isinstance(raw, RawBlock) and json.loads(raw.text) == record()


def test_sample_without_verdicts_or_knowledge() -> None:
    bare = record(metrics={}, knowledge="One.\nTwo.")
    del bare["answer"]
    text = P.sample(bare, {})[1]
    assert isinstance(text, TextBlock) and not text.legend
    assert text.paragraphs == [[Segment(text="One.")], [Segment(text="Two.")]]
    missing = {"id": "nq:3", "status": "ok", "source": None, "query": "q", "knowledge": None}
    blocks = P.sample(
        missing | {"knowledge_missing": "no knowledge for this id", "metrics": {}}, {}
    )
    assert [b.title for b in blocks] == ["Item", "Metrics", "JSON record"]
    assert isinstance(blocks[0], FieldsBlock)
    assert ("knowledge missing", "no knowledge for this id") in blocks[0].fields


def test_a_sentence_not_verbatim_in_the_knowledge_follows_after_a_space() -> None:
    rows = [sentence(0, "Changed.", "consistent", 1.0, 0, "e")]
    text = P.sample(record(knowledge="Original.", metrics={
        "factuality": {"value": 1.0, "model": "n", "details": {"sentences": rows}},
    }), {})[1]  # fmt: skip
    assert isinstance(text, TextBlock)
    assert [(s.text, s.mark) for s in text.paragraphs[0]] == [
        (" ", None), ("Changed.", "correct"), ("Original.", None),
    ]  # fmt: skip


INFO = {
    "config": {
        "task": "nq", "knowledge": "gold", "nli": "lexical", "reranker": "hf:cross",
        "lm": "hf:gpt-neo", "metrics": ["factuality", "relevance", "coherence_sent"],
        "task_name": "conner.score", "models": {"nli": "lexical"},
    },
}  # fmt: skip
METRICS: dict[str, Any] = {
    "task": "nq",
    "mode": "paper",
    "n_failed": 1,
    "failed_note": "answer-model calls that failed",
    "n_knowledge_missing": 0,
    "metrics": {
        "factuality": {
            "mean": 0.5, "n": 4, "n_unmeasured": 7,
            "unmeasured_reasons": {"empty knowledge": 3, "no evidence": 2},
            "models": ["lexical"], "how": "Eq. 1",
            "labels": {"n_labels": 4, "factual_consistent": 0.5, "non_verified": 0.25,
                       "factual_inconsistent": 0.25},
        },
        "relevance": {
            "mean": None, "n": 0, "n_unmeasured": 2, "unmeasured_reasons": {"x": 2},
            "models": [], "how": "Eq. 2",
        },
    },
    "setup": {"models": {"reranker": "hf:cross"}, "notes": {"nli": "lexical: a stand-in"}},
}  # fmt: skip


def test_metric_rows_reasons_models_and_stand_ins() -> None:
    shown = P.metrics(METRICS, INFO)
    fact, rel, *shares = shown.metrics
    assert (fact.name, fact.value, fact.n_measured, fact.model) == ("factuality", 0.5, 4, "lexical")
    # only the top reasons are in metrics.json: the rest is counted as "other reasons"
    assert fact.unmeasured == {"empty knowledge": 3, "no evidence": 2, "other reasons": 2}
    assert fact.stand_in and fact.how == "paper mode: Eq. 1"
    # no measured value: the model is the one setup names for the metric's role
    assert (rel.value, rel.model, rel.stand_in, rel.unmeasured) == (
        None,
        "hf:cross",
        False,
        {"x": 2},
    )
    assert [(r.name, r.value, r.percent, r.stand_in) for r in shares] == [
        ("factuality: consistent", 0.5, True, True),
        ("factuality: non-verified", 0.25, True, True),
        ("factuality: inconsistent", 0.25, True, True),
    ]
    assert shown.notes[0].startswith("paper-mode metrics decided by stand-ins: factuality")
    assert shown.notes[1:] == [
        "nli: lexical: a stand-in",
        "1 items failed: answer-model calls that failed",
    ]
    # without a readable config nothing is called a stand-in
    assert not any(r.stand_in for r in P.metrics(METRICS, {}).metrics)


def run(path: str, records: list[dict[str, Any]]) -> RunData:
    return RunData(path=Path(path), info={}, metrics={}, records=records)


def valued(sid: str, **values: float | None) -> dict[str, Any]:
    metrics = {m: {"value": v, "model": "x"} for m, v in values.items()}
    return {"id": sid, "status": "ok", "metrics": metrics}


def test_histograms_one_series_per_run() -> None:
    a = run("runs/a", [valued("1", relevance=0.05), valued("2", relevance=0.95),
                        valued("3", relevance=None), valued("4", relevance=1.0)])  # fmt: skip
    b = run("other/b", [valued("1", relevance=0.55), {"id": "2", "status": "failed"}])
    [chart] = P.charts([a, b])
    assert (chart.kind, chart.title, chart.y_label) == (
        "hist",
        "relevance: distribution of values",
        "items",
    )
    assert [s.name for s in chart.series] == ["a", "b"]
    assert chart.series[0].x == pytest.approx([0.05 + 0.1 * i for i in range(10)])
    assert chart.series[0].y == [1, 0, 0, 0, 0, 0, 0, 0, 0, 2]  # 1.0 falls in the last bin
    assert chart.series[1].y == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    assert chart.note is not None and "10 equal bins of [0, 1]" in chart.note
    assert "a: n=3, b: n=1" in chart.note
    # values outside [0, 1]: the range of all runs' values; same-named runs get their paths
    x_runs = [valued("1", coherence_para=2.0), valued("2", coherence_para=12.0)]
    wide = P.charts([run("x/r", x_runs), run("y/r", [valued("1", coherence_para=7.0)])])
    assert [s.name for s in wide[0].series] == ["x/r", "y/r"]
    assert wide[0].series[0].y == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert wide[0].series[1].y == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    assert wide[0].note is not None and "[2, 12]" in wide[0].note and "Raw" in wide[0].note
    assert histogram([3.0, 3.0], 3.0, 3.0, 1) == [2]


def test_scatter_against_human_ratings_when_records_hold_them() -> None:
    rated = [
        valued("1", coherence_sent=0.1) | {"human_ratings": {"coherence": 0}},
        valued("2", coherence_sent=0.5) | {"human_ratings": {"coherence": 1}},
        valued("3", coherence_sent=0.9) | {"human_ratings": {"coherence": 2}},
        valued("4", coherence_sent=None) | {"human_ratings": {"coherence": 2}},
        valued("5", coherence_sent=0.3),
    ]
    hist, scatter = P.charts([run("r", rated)])
    assert hist.kind == "hist" and scatter.kind == "scatter"
    assert scatter.title == "coherence_sent vs human rating (coherence)"
    assert (scatter.series[0].x, scatter.series[0].y) == ([0.0, 1.0, 2.0], [0.1, 0.5, 0.9])
    assert scatter.note is not None and "r: D = 1.000 (n=3)" in scatter.note
    assert len(P.charts([run("r", [valued("1", validity=0.2)])])) == 1  # no ratings: no scatter


def test_export_tables() -> None:
    tables = P.tables(record())
    assert tables["metrics"] == [
        {"metric": "factuality", "value": 0.05, "reason": None, "metric_model": "nli-x"},
        {"metric": "relevance", "value": 0.8, "reason": None, "metric_model": "rer"},
        {"metric": "coherence_para", "value": None,
         "reason": "no paragraph model", "metric_model": "none"},
    ]  # fmt: skip
    assert tables["sentences"][2] == ROWS[2]
    assert len(tables["sentences"]) == 3


def test_knowledge_runs() -> None:
    presenter = task_type("conner.generate").presenter
    assert presenter is KnowledgePresenter and task_type("conner.select").presenter is presenter
    rec = {"id": "nq:1", "status": "ok", "text": "A.\n\nB <i>", "source": "llm:m", "raw": "raw"}
    s = presenter.summary(rec | {"quality": 0.4})
    assert (s.title, s.scores, s.tags) == ("A. B <i>", {"quality": 0.4}, [])
    text, fields, raw, _ = presenter.sample(rec, {})
    assert isinstance(text, TextBlock)
    assert text.paragraphs == [[Segment(text="A.")], [Segment(text="B <i>")]]
    assert isinstance(fields, FieldsBlock)
    assert fields.fields == [("id", "nq:1"), ("status", "ok"), ("source", "llm:m")]
    assert isinstance(raw, RawBlock) and raw.text == "raw"
    failed = presenter.summary({"id": "nq:2", "status": "failed", "text": None})
    assert (failed.title, failed.tags) == ("nq:2", ["failed"])


def test_a_real_score_run(data_dir: Path, tmp_path: Path) -> None:
    known = tmp_path / "know.jsonl"
    # a stretch of nq:0's gold passage ("... 28.0." is in it), then a sentence that is not
    in_gold = (
        "Platform Latest version Browser support Windows XP and later Windows Server 2003 "
        "and later 28.0. 0.137 Firefox"
    )
    texts = {"nq:0": f"{in_gold} Dragon Ball Z is an anime.", "nq:1": ""}
    known.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in texts.items()))
    config = ConnerScoreConfig(
        knowledge=str(known), task="nq", metrics=("factuality", "relevance"), nli="hf:stub"
    )
    models = ScoreModels(
        lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance(), paragraph=WordCount()
    )
    out = tmp_path / "run"
    result = score_knowledge(out, config, data_dir=data_dir, models=models)
    assert task_type("conner.score").presenter is P
    records = {
        r["id"]: r for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
    }
    info = json.loads((out / "run.json").read_text())
    text = P.sample(records["nq:0"], info)[1]
    assert isinstance(text, TextBlock)
    segments = [(s.text, s.mark) for s in text.paragraphs[0] if s.mark is not None]
    assert [mark for _, mark in segments] == ["correct", "unknown"]
    assert "".join(s.text for s in text.paragraphs[0]) == texts["nq:0"]
    assert segments[-1][0] == "0.137 Firefox Dragon Ball Z is an anime."
    assert P.summary(records["nq:0"]).tags == ["verdict:non-verified"]
    assert P.summary(records["nq:1"]).tags == [
        "unmeasured", "unmeasured:factuality", "unmeasured:relevance",
    ]  # fmt: skip
    rows = P.metrics(result.metrics, info).metrics
    assert [(r.name, r.stand_in) for r in rows[:2]] == [("factuality", False), ("relevance", True)]
    assert rows[0].model == "stub-nli" and rows[0].n_measured == 1
    assert len(P.tables(records["nq:0"])["sentences"]) == 2
