"""How CAQA runs are shown (issue 15): the judge and build presenters on hand-made records whose
confusion counts and per-complexity F1 are worked out by hand below."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from citegraph.caqa import CaqaBuildTask, CaqaJudgeConfig, CaqaJudgeTask
from citegraph.runs import (
    FieldsBlock,
    RawBlock,
    RunData,
    TableBlock,
    TextBlock,
    task_type,
)

JUDGE = CaqaJudgeTask.presenter
BUILD = CaqaBuildTask.presenter

FACTS = [
    {"subject": "Q1", "relation": "P1", "object": "Q2",
     "subject_label": "Franz Liszt", "relation_label": "genre", "object_label": "symphony"},
]  # fmt: skip


def _record(i: int, gold: str, predicted: str | None, complexity: str, **extra: Any) -> dict:
    return {
        "id": f"s{i}",
        "status": "ok",
        "question": f"Question {i}?",
        "answer": f"Answer {i}.",
        "citation": f"Citation {i}.",
        "gold": gold,
        "complexity": complexity,
        "source": "hand",
        "predicted": predicted,
        "raw": predicted or "I cannot tell.",
        "error": None if predicted else "unparseable",
        "subgraph": FACTS,
    } | extra


#: s1 right, s2 wrong, s3 unparseable, s4 s5 right, s6 wrong, s7 a failed call.
RECORDS = [
    _record(1, "supportive", "supportive", "single"),
    _record(2, "supportive", "irrelevant", "single"),
    _record(3, "insufficient", None, "union"),
    _record(4, "contradictory", "contradictory", "intersection"),
    _record(5, "irrelevant", "irrelevant", "intersection"),
    _record(6, "irrelevant", "supportive", "union"),
    _record(7, "contradictory", None, "intersection", status="failed", error="ServerError: down"),
]
LABELS = ["supportive", "insufficient", "contradictory", "irrelevant"]
COLUMNS = [*LABELS, "unparseable"]
# rows gold, columns predicted + unparseable; the failed call is left out
MATRIX = [
    [1, 0, 0, 1, 0],
    [0, 0, 0, 0, 1],
    [0, 0, 1, 0, 0],
    [1, 0, 0, 1, 0],
]


def _info(**config: Any) -> dict[str, Any]:
    cfg = CaqaJudgeConfig(data="absent.jsonl", evaluator="mock", bootstrap=0, **config)
    name = "llm:mock/mock:caqa-table11-zero-shot-v1"
    return {
        "config": cfg.model_dump(mode="json")
        | {"task": "caqa.judge", "evaluator_name": name, "label_set": "four"}
    }


def _run(path: str, records: list[dict], info: dict[str, Any]) -> RunData:
    metrics = CaqaJudgeTask.summarize(records, info)
    return RunData(path=Path(path), info=info, metrics=metrics, records=records)


def test_the_tasks_name_their_presenters() -> None:
    assert task_type("caqa.judge").presenter is JUDGE
    assert task_type("caqa.build").presenter is BUILD
    assert JUDGE.__name__ == "CaqaJudgePresenter" and BUILD.__name__ == "CaqaBuildPresenter"


def test_summary_scores_and_tags() -> None:
    right, wrong, unread = (JUDGE.summary(RECORDS[i]) for i in (0, 1, 2))
    assert right.title == "Question 1?" and right.scores == {"correct": 1.0}
    assert right.tags == [
        "gold:supportive", "pred:supportive", "cell:supportive|supportive",
        "verdict:correct", "complexity:single",
    ]  # fmt: skip
    assert wrong.scores == {"correct": 0.0}
    assert "verdict:wrong" in wrong.tags and "cell:supportive|irrelevant" in wrong.tags
    assert unread.scores == {"correct": None}
    assert {"unmeasured", "pred:none", "cell:insufficient|unparseable"} <= set(unread.tags)
    assert not any(t.startswith("verdict:") for t in unread.tags)
    failed = JUDGE.summary(RECORDS[6])
    assert failed.status == "failed" and failed.scores == {}
    assert failed.tags == ["failed", "gold:contradictory", "complexity:intersection"]
    # an old record (no question) is titled by its id
    old = {"id": "x", "status": "ok", "gold": "supportive", "predicted": "supportive"}
    assert JUDGE.summary(old).title == "x"


def test_a_paper_mode_run_shows_an_unparseable_reply_as_wrong() -> None:
    # Paper mode counts a reply no label was read from as wrong (micro-F1's denominator keeps
    # it); the sample list says so (correct 0, verdict wrong) instead of "unmeasured".
    # Reference mode drops it, as the authors' scripts do: unmeasured, as the class shows it.
    paper = JUDGE.for_run({"config": {"extraction": "paper"}})
    reference = JUDGE.for_run({"config": {"extraction": "reference"}})
    assert paper is JUDGE.for_run({"config": {"extraction": "paper"}})  # one class per mode
    assert reference is JUDGE
    unread = paper.summary(RECORDS[2])
    assert unread.scores == {"correct": 0.0}
    assert {"unparseable", "verdict:wrong", "pred:none"} <= set(unread.tags)
    assert "unmeasured" not in unread.tags
    assert reference.summary(RECORDS[2]).scores == {"correct": None}
    assert paper.summary(RECORDS[0]).scores == {"correct": 1.0}
    assert paper.summary(RECORDS[6]).scores == {}  # a failed call is never scored


def test_binary_labels_are_compared_as_the_report_does() -> None:
    # AttributionBench: binary gold, a four-way evaluator's label collapses onto it
    record = _record(9, "unsupported", "irrelevant", "single") | {"complexity": None}
    summary = JUDGE.summary(record)
    assert summary.scores == {"correct": 1.0}
    assert "cell:unsupported|unsupported" in summary.tags and "pred:unsupported" in summary.tags


def test_confusion_matrix_counts_marks_and_links() -> None:
    info = _info()
    shown = JUDGE.metrics(CaqaJudgeTask.summarize(RECORDS, info), info)
    (block,) = shown.blocks
    assert isinstance(block, TableBlock)
    assert block.columns == ["gold \\ predicted", *COLUMNS]
    assert [row[0].text for row in block.rows] == LABELS
    assert [[int(c.text) for c in row[1:]] for row in block.rows] == MATRIX
    for gold, row in zip(LABELS, block.rows, strict=True):
        for predicted, cell in zip(COLUMNS, row[1:], strict=True):
            assert cell.link == {"tag": f"cell:{gold}|{predicted}"}
            assert cell.mark == ("correct" if gold == predicted else "wrong")
    # each cell's count is the number of samples the list shows for its link
    for row in block.rows:
        for cell in row[1:]:
            tagged = [r for r in RECORDS if cell.link["tag"] in JUDGE.summary(r).tags]
            assert len(tagged) == int(cell.text)


def test_metric_rows() -> None:
    info = _info()
    shown = JUDGE.metrics(CaqaJudgeTask.summarize(RECORDS, info), info)
    rows = {row.name: row for row in shown.metrics}
    micro = rows["micro-F1"]
    # paper mode: 3 right of 6 judged (the unparseable s3 counts as wrong)
    assert micro.value == pytest.approx(3 / 6) and micro.n_measured == 6
    assert micro.unmeasured == {"evaluator call failed": 1}
    assert "1 unparseable replies counted as wrong" in (micro.how or "")
    assert micro.model == "llm:mock/mock:caqa-table11-zero-shot-v1" and micro.stand_in
    # supportive: P 1/2 (s1 of s1, s6), R 1/2 -> F1 1/2; irrelevant: P 1/2, R 1/2 -> 1/2
    assert rows["F1 supportive"].value == pytest.approx(0.5)
    assert rows["F1 irrelevant"].value == pytest.approx(0.5)
    assert rows["F1 contradictory"].value == pytest.approx(1.0)
    # insufficient never predicted: F1 undefined, counted as 0 in the paper's macro
    assert rows["F1 insufficient"].value is None
    assert rows["macro-F1"].value == pytest.approx((0.5 + 0 + 1 + 0.5) / 4)
    assert "as 0: insufficient" in (rows["macro-F1"].how or "")
    assert rows["micro-F1 single"].value == pytest.approx(0.5)
    assert rows["micro-F1 concatenation"].value is None
    assert any("paper scoring" in note for note in shown.notes)

    ref = _info(extraction="reference")
    rows = {r.name: r for r in JUDGE.metrics(CaqaJudgeTask.summarize(RECORDS, ref), ref).metrics}
    # reference mode drops s3: 3 right of 5
    assert rows["micro-F1"].value == pytest.approx(3 / 5)
    assert rows["micro-F1"].unmeasured == {
        "evaluator call failed": 1,
        "unparseable reply (dropped, reference mode)": 1,
    }


def test_charts_heatmap_and_per_complexity_f1() -> None:
    info = _info()
    # two shards of one run (one config): summed into one heatmap and one series
    shards = [_run("r/shard0", RECORDS[:3], info), _run("r/shard1", RECORDS[3:], info)]
    heatmap, bars = JUDGE.charts(shards)
    assert heatmap.kind == "heatmap" and heatmap.matrix == [[float(c) for c in r] for r in MATRIX]
    assert heatmap.x_ticks == COLUMNS and heatmap.y_ticks == LABELS
    assert "summed over 2 runs" in (heatmap.note or "")
    assert bars.kind == "bar" and len(bars.series) == 1
    (series,) = bars.series
    assert series.x == ["single", "concatenation", "intersection", "union"]
    # single: s1 right, s2 wrong -> 1/2; no concatenation sample; intersection: s4, s5 right
    # (s7 failed, left out) -> 1; union: s3 unparseable (wrong), s6 wrong -> 0
    assert series.y == [pytest.approx(0.5), None, pytest.approx(1.0), pytest.approx(0.0)]
    assert "Table 6" in (bars.note or "") and "unparseable" in (bars.note or "")

    # two configurations: one heatmap each, one series each; reference mode drops s3
    ref = _info(extraction="reference")
    charts = JUDGE.charts([_run("a", RECORDS, info), _run("b", RECORDS, ref)])
    assert [c.kind for c in charts] == ["heatmap", "heatmap", "bar"]
    names = [s.name for s in charts[2].series]
    assert names[0] != names[1]
    assert charts[2].series[1].y[3] == pytest.approx(0.0)


def test_sample_page_keeps_model_text_verbatim() -> None:
    reply = 'Supportive <script>alert("x")</script> & done'
    record = _record(1, "supportive", "supportive", "single", raw=reply)
    blocks = JUDGE.sample(record, _info())
    by_title = {b.title: b for b in blocks}
    raw = by_title["Evaluator's raw reply"]
    assert isinstance(raw, RawBlock) and raw.text == reply
    fields = by_title["Sample"]
    assert isinstance(fields, FieldsBlock)
    assert dict(fields.fields)["evaluator's label"] == "supportive"
    assert dict(fields.fields)["answer statement"] == "Answer 1."
    evaluator = dict(by_title["Evaluator"].fields)  # type: ignore[union-attr]
    assert evaluator["evaluator"] == "llm:mock/mock:caqa-table11-zero-shot-v1"
    assert evaluator["prompt"] == "zero-shot" and evaluator["extraction"] == "paper"
    table = by_title["Citation subgraph"]
    assert isinstance(table, TableBlock)
    assert [(c.text, c.tip) for c in table.rows[0]] == [
        ("Franz Liszt", "Q1"), ("genre", "P1"), ("symphony", "Q2"),
    ]  # fmt: skip
    text = by_title["Answer and citation"]
    assert isinstance(text, TextBlock) and text.paragraphs[1][0].mark == "correct"
    assert "<script>alert(" in by_title["JSON record"].text  # type: ignore[union-attr]
    # an unparseable reply: the citation is marked unknown; no subgraph, no table
    unread = dict(_record(3, "insufficient", None, "union"))
    del unread["subgraph"]
    blocks = JUDGE.sample(unread, _info())
    assert "Citation subgraph" not in [b.title for b in blocks]
    text = next(b for b in blocks if isinstance(b, TextBlock))
    assert text.paragraphs[1][0].mark == "unknown"


def test_judge_export_table() -> None:
    (row,) = JUDGE.tables(RECORDS[0])["facts"]
    assert row == {"sample_id": "s1"} | FACTS[0]
    assert JUDGE.tables({"id": "old"}) == {"facts": []}


BUILD_RECORD = {
    "id": "q1",
    "source": "hand",
    "question": "Which genre is Liszt associated with?",
    "status": "ok",
    "extension": "intersection-attach",
    "query": {
        "edges": [{"subject": "Q1", "relation": "P1", "object": "?a"}],
        "operator": "and",
        "answer": "?a",
        "answer_types": [],
    },
    "original_query": None,
    "samples": [
        {
            "id": "q1:insufficient",
            "question": "Which genre?",
            "answer": "Symphony.",
            "citation": "Liszt wrote <b>music</b>.",
            "label": "insufficient",
            "complexity": "intersection",
            "attribution": {
                "category": "insufficient",
                "facts": [{"subject": "Q1", "relation": "P1", "object": "Q2"}],
                "labels": {"Q1": "Franz Liszt", "P1": "genre", "Q2": "symphony", "Q3": "piano"},
                "removed": [{"subject": "Q1", "relation": "P1", "object": "Q3"}],
            },
        }
    ],
}


def test_build_presenter() -> None:
    summary = BUILD.summary(BUILD_RECORD)
    assert summary.title == "Which genre is Liszt associated with?"
    assert summary.scores == {"samples": 1.0}
    assert summary.tags == [
        "extension:intersection-attach", "complexity:intersection", "category:insufficient",
    ]  # fmt: skip
    skipped = {"id": "q2", "question": "Q?", "status": "skipped", "reason": "too many answers"}
    assert BUILD.summary(skipped).tags == ["skipped"]
    blocks = BUILD.sample(BUILD_RECORD, {})
    by_title = {b.title: b for b in blocks}
    query = by_title["Query (extended)"]
    assert isinstance(query, TableBlock) and query.rows[0][0].text == "Franz Liszt"
    sample = by_title["Sample: insufficient"]
    assert isinstance(sample, FieldsBlock)
    assert dict(sample.fields)["citation"] == "Liszt wrote <b>music</b>."
    facts = by_title["Citation subgraph: insufficient"]
    assert isinstance(facts, TableBlock)
    assert facts.row_marks == ["cited", "absent"]
    assert [c.text for c in facts.rows[1]] == ["Franz Liszt", "genre", "piano"]
    assert any(isinstance(b, RawBlock) and b.title == "Query (JSON)" for b in blocks)
    tables = BUILD.tables(BUILD_RECORD)
    assert [r["caqa_id"] for r in tables["caqa_samples"]] == ["q1:insufficient"]
    assert tables["facts"][0]["object_label"] == "symphony"
    assert tables["facts"][0]["caqa_id"] == "q1:insufficient"
    assert len(BUILD.sample(skipped, {})) == 2


def test_binary_scoring_of_four_way_records_does_not_link_cells() -> None:
    # --labels binary collapses the matrix, but the records (and their tags) stay four-way
    info = _info(labels="binary")
    (block,) = JUDGE.metrics(CaqaJudgeTask.summarize(RECORDS, info), info).blocks
    assert isinstance(block, TableBlock)
    assert [row[0].text for row in block.rows] == ["supportive", "unsupported"]
    assert all(cell.link is None for row in block.rows for cell in row)
    assert "do not link" in (block.note or "")
