"""KaLMA's presenter: a record made by the real scorer on a hand-made answer, checked by hand
(segments, marks, tooltips, table rows), metric rows and chart series from hand-written
``metrics.json`` dicts, and ``kalma run`` records holding the facts the prompt showed."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from citegraph.datasets import GoldRecord
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.kalma.run._task import KalmaRunTask
from citegraph.kalma.score._config import KalmaScoreConfig, ScoringOptions
from citegraph.kalma.score._item import ScoreItem, score_items_async
from citegraph.kalma.score._report import build_metrics
from citegraph.kalma.score._task import KalmaScoreTask
from citegraph.kalma.view._presenter import KalmaPresenter
from citegraph.kg import Subgraph, Triple, load_rdf_kg
from citegraph.models import MockChat, nli_model
from citegraph.runs import FieldsBlock, RunData, Runtime, TableBlock, TextBlock

ANSWER = (
    "Ada was a poet [Q1, occupation: poet]. She was born in Paris [Q1, place of birth: Paris]. "
    "Her father <script>alert(1)</script> was Lord Byron [NA]. See [citation needed]."
)


def _t(relation: str, value: str) -> Triple:
    return Triple(subject="Q1", relation=relation, value=value)


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    """Scored by the real scorer (paper mode, lexical NLI): KG {occupation: poet, place of
    birth: London}; gold {occupation: poet, father: Lord Byron}; absent {father: Lord Byron}."""
    graph = Subgraph.from_entity_dict(
        {"qid": "Q1", "name": "Ada Lovelace", "occupation": "poet", "place of birth": "London"}
    )
    gold = GoldRecord(
        id="specific-0",
        knowledge=(_t("occupation", "poet"), _t("father", "Lord Byron")),
        absent=(_t("father", "Lord Byron"),),
    )
    item = ScoreItem(
        id="specific-0",
        question="Who was Ada?",
        answer=ANSWER,
        graphs=(graph,),
        gold=gold,
        gold_given=True,
    )
    [scored] = asyncio.run(score_items_async([item], ScoringOptions(), nli_model("lexical")))
    return scored


def test_both_kalma_tasks_use_the_presenter() -> None:
    assert KalmaRunTask.presenter is KalmaPresenter
    assert KalmaScoreTask.presenter is KalmaPresenter


def test_answer_segments_marks_and_tooltips(record: dict[str, Any]) -> None:
    [answer] = [b for b in KalmaPresenter.sample(record, {}) if isinstance(b, TextBlock)]
    assert answer.title == "Answer" and [m for m, _ in answer.legend] == [
        "correct",
        "wrong",
        "na",
        "malformed",
    ]
    [paragraph] = answer.paragraphs
    assert [(s.text, s.mark) for s in paragraph] == [
        ("Ada was a poet ", None),
        ("[Q1, occupation: poet]", "correct"),
        (". She was born in Paris ", None),
        ("[Q1, place of birth: Paris]", "wrong"),
        (". Her father <script>alert(1)</script> was Lord Byron ", None),
        ("[NA]", "na"),
        (". See ", None),
        ("[citation needed]", "malformed"),
        (".", None),
    ]
    # Verbatim: the segments give the answer back, <script> included as plain text.
    assert "".join(s.text for s in paragraph) == ANSWER
    tips = {s.text: s.tip for s in paragraph if s.mark}
    assert tips["[Q1, occupation: poet]"] == (
        "Ada Lovelace · occupation · poet (Q1) — in the KG: yes; in gold: yes; precise: yes; "
        "aligned (NLI): yes"
    )
    assert tips["[Q1, place of birth: Paris]"].startswith(
        "Ada Lovelace · place of birth · Paris (Q1) — in the KG: no; in gold: no; precise: no"
    )
    assert tips["[NA]"] == (
        "[NA]: knowledge missing from the KG\nentails absent fact Q1 · father · Lord Byron: yes"
    )
    assert tips["[citation needed]"].startswith("malformed: not a citation")


def test_multi_fact_bracket_and_line_breaks_are_kept() -> None:
    graph = Subgraph.from_entity_dict({"qid": "Q1", "name": "A", "occupation": "poet"})
    answer = "Intro line.\n\nA was a poet and a pilot [Q1, occupation: poet, occupation: pilot]."
    item = ScoreItem(id="specific-0", question="q", answer=answer, graphs=(graph,))
    [rec] = asyncio.run(score_items_async([item], ScoringOptions(), nli_model("lexical")))
    [text] = [b for b in KalmaPresenter.sample(rec, {}) if isinstance(b, TextBlock)]
    assert "\n".join("".join(s.text for s in p) for p in text.paragraphs) == answer
    assert [[s.text for s in p] for p in text.paragraphs][:2] == [["Intro line."], []]
    [bracket] = [s for s in text.paragraphs[2] if s.mark]
    # One bracket, two facts: wrong because one of them is not in the KG; one tip line each.
    assert bracket.mark == "wrong"
    assert bracket.tip is not None and len(bracket.tip.splitlines()) == 2


def test_kg_alignment_and_score_blocks(record: dict[str, Any]) -> None:
    blocks = KalmaPresenter.sample(record, {})
    tables = {b.title: b for b in blocks if isinstance(b, TableBlock)}
    kg = tables["KG facts: cited, gold and absent"]
    assert [[c.text for c in row] for row in kg.rows] == [
        ["Ada Lovelace", "occupation", "poet", "Q1", "cited, gold"],
        # kalma score: the absent fact is the gold file's, nothing was removed from a prompt
        ["Ada Lovelace", "father", "Lord Byron", "Q1", "gold, absent"],
    ]
    assert kg.row_marks == ["cited", "absent"]
    align = tables["Sentence alignment"]
    assert [[c.text for c in row] for row in align.rows] == [
        ["0", "0", "Ada was a poet.", "occupation: poet", "yes", "lexical"],
        ["1", "0", "She was born in Paris.", "place of birth: Paris", "yes", "lexical"],
    ]
    assert align.row_marks == ["correct", "correct"]
    assert tables["[NA] sentences against absent facts"].row_marks == ["correct"]
    fields = {b.title: dict(b.fields) for b in blocks if isinstance(b, FieldsBlock)}
    assert fields["Scores"]["correctness"] == "50.0%"  # 1 of 2 citations in the KG
    assert fields["Scores"]["recall"] == "50.0%"  # poet hit, father missed
    assert fields["Scores"]["na_precision"] == "100.0%"
    assert "Generation" not in fields  # kalma score records have no generation metadata
    raws = [b for b in blocks if b.kind == "raw"]
    assert [b.title for b in raws] == ["Raw model output", "JSON record"]
    assert raws[0].text == ANSWER


def test_unmeasured_scores_show_their_reason(record: dict[str, Any]) -> None:
    bare = {**record, "na": None, "scores": {**record["scores"], "na_recall": None}}
    bare["unmeasured"] = {"na_recall": "no absent-knowledge set"}
    [scores] = [b for b in KalmaPresenter.sample(bare, {}) if b.title == "Scores"]
    assert isinstance(scores, FieldsBlock)
    assert dict(scores.fields)["na_recall"] == "unmeasured: no absent-knowledge set"


def test_summary_tags(record: dict[str, Any]) -> None:
    summary = KalmaPresenter.summary(record)
    assert summary.title == "Who was Ada?"
    assert summary.tags == [
        "has-na",
        "verdict:wrong",
        "verdict:malformed",
        "validity:malformed-brackets",
        "validity:outside-retrieved",
        "validity:not-in-kg-unmeasured",  # scored without a KG to look the ids up in
    ]
    assert summary.scores["correctness"] == 0.5
    empty = {"id": "x", "question": "q", "answer": "", "empty_answer": True, "scores": {}}
    assert KalmaPresenter.summary(empty).tags == ["empty", "no-citation"]
    failed = {"id": "y", "question": "q", "status": "failed", "answer": None, "scores": {}}
    assert KalmaPresenter.summary(failed).tags == ["failed"]  # no answer came: not "empty"


def test_export_tables(record: dict[str, Any]) -> None:
    tables = KalmaPresenter.tables(record)
    assert [
        (r["relation"], r["correct"], r["in_gold"], r["entailed"]) for r in tables["citations"]
    ] == [
        ("occupation", True, True, True),
        ("place of birth", False, False, True),
        (None, None, None, None),  # the [NA] marker
        (None, None, None, None),  # the malformed "[citation needed]"
    ]
    assert tables["citations"][2]["kind"] == "na" and tables["citations"][2]["sentence_index"] == 2
    assert [(r["sentence_index"], r["n_citations"], r["has_na"]) for r in tables["sentences"]] == [
        (0, 1, False),
        (1, 1, False),
        (2, 0, True),
        (3, 0, False),
    ]


METRICS = {
    "correctness": {"micro": 0.9, "macro": 0.8},
    "precision": {"micro": 0.3, "macro": 0.35},
    "recall": {"micro": 0.6, "macro": 0.5},
    "f1": {"micro": 0.4, "macro": 0.41},
    "alignment": {"micro": 0.75, "macro": 0.7},
    "na_precision": {"micro": None, "macro": None},
    "na_recall": {"micro": None, "macro": None},
    "unmeasured": {
        "correctness": {"answer cites no KG triple (left out of the macro average)": 1},
        "na_precision": {"no absent-knowledge set (gold 'absent' field) for this answer": 4},
    },
    "details": {
        "correctness": {"n": 4, "n_excluded": 1, "n_unmeasured": 0},
        "na_precision": {"n": 0, "n_excluded": 0, "n_unmeasured": 0},
    },
    "config": {
        "mode": "paper",
        "nli": "lexical",
        "nli_name": "lexical",
        "hypothesis": "relation_value",
        "parser_version": "paper-v1",
    },
    "text_quality": {
        "fluency": {
            "mean": 4.5,
            "n_measured": 2,
            "unmeasured_reasons": {"no score in the reply": 1},
            "mode": "paper",
            "prompt_version": "geval-v1",
        }
    },
    "setup": {"judge": "mock/judge"},
}


def test_metric_rows() -> None:
    shown = KalmaPresenter.metrics(METRICS, {"config": {}})
    rows = {r.name: r for r in shown.metrics}
    corr = rows["citation correctness"]
    assert (corr.value, corr.micro, corr.macro, corr.percent) == (0.9, 0.9, 0.8, True)
    assert corr.n_measured == 3  # 4 answers, 1 without citations
    assert corr.unmeasured == {"answer cites no KG triple (left out of the macro average)": 1}
    assert corr.model == "exact match" and not corr.stand_in
    assert corr.how == "paper mode · parser paper-v1"
    na = rows["[NA] precision"]
    assert na.value is None and na.n_measured == 0
    assert na.unmeasured == {"no absent-knowledge set (gold 'absent' field) for this answer": 4}
    assert na.model == "lexical" and na.stand_in
    assert na.how == "paper mode · parser paper-v1 · hypothesis relation_value"
    assert rows["text-citation alignment"].stand_in
    fluency = rows["text quality: fluency"]
    assert (fluency.value, fluency.n_measured, fluency.model) == (4.5, 2, "mock/judge")
    assert fluency.unmeasured == {"no score in the reply": 1} and not fluency.percent
    assert any("stand-in for the paper's TRUE" in n for n in shown.notes)
    assert shown.notes[0] == "paper mode: the paper's definitions"


def test_a_real_nli_is_not_a_stand_in() -> None:
    metrics = {**METRICS, "config": {**METRICS["config"], "nli_name": "hf:roberta-mnli"}}
    rows = {r.name: r for r in KalmaPresenter.metrics(metrics, {}).metrics}
    assert rows["text-citation alignment"].model == "hf:roberta-mnli"
    assert not rows["text-citation alignment"].stand_in


def _run(name: str, removed: int, accuracy: int, p: float, r: float, **extra: Any) -> RunData:
    model = extra.pop("model", "mock/m")
    metrics = {
        "correctness": {"micro": extra.pop("corr", 0.9)},
        "precision": {"micro": p},
        "recall": {"micro": r},
        "alignment": {"micro": extra.pop("align", 0.8)},
        "na_precision": {"micro": extra.pop("nap", None)},
        "na_recall": {"micro": extra.pop("nar", None)},
        "experiment": {"remove_knowledge": removed, "retrieval_accuracy_requested": accuracy},
        "config": {"mode": "paper"},
    }
    config = {"model_name": model, "split": "specific", "seed": extra.pop("seed", 0)}
    config |= {"remove_knowledge": removed, "retrieval_accuracy": accuracy}
    return RunData(path=Path(name), info={"config": config}, metrics=metrics, records=[])


def test_figure4_and_table5_against_knowledge_removed() -> None:
    runs = [
        _run("r1", 1, 100, 0.2, 0.4, nap=0.1, nar=0.2),
        _run("r2", 2, 100, 0.1, 0.3, nap=0.2, nar=0.2),
        _run("r2b", 2, 100, 0.3, 0.3, nap=0.4, nar=0.2, seed=1),
    ]
    fig4, table5, bars = KalmaPresenter.charts(runs)
    assert fig4.kind == "line" and fig4.title.startswith("Figure 4")
    series = {s.name: s for s in fig4.series}
    assert series["[NA] precision"].x == [1.0, 2.0]
    assert series["[NA] precision"].y == pytest.approx([10.0, 30.0])  # (0.2 + 0.4) / 2
    assert series["[NA] recall"].y == pytest.approx([20.0, 20.0])
    # F1 of the averaged P and R: 2 * .1 * .2 / .3 and 2 * .3 * .2 / .5.
    assert series["[NA] F1"].y == pytest.approx([100 * 0.4 / 3, 24.0])
    cit = {s.name: s for s in table5.series}
    assert cit["precision"].y == pytest.approx([20.0, 20.0])
    assert cit["F1"].y == pytest.approx([100 * 2 * 0.2 * 0.4 / 0.6, 100 * 2 * 0.2 * 0.3 / 0.5])
    assert "micro" in (fig4.note or "") and "3 runs" in (fig4.note or "")
    assert bars.kind == "bar"  # the two groups (removed 1, removed 2)


def test_figure5_against_retrieval_accuracy() -> None:
    runs = [_run("a", 0, 80, 0.2, 0.4, corr=0.8), _run("b", 0, 100, 0.3, 0.6, corr=1.0)]
    charts = KalmaPresenter.charts(runs)
    [fig5] = [c for c in charts if c.title.startswith("Figure 5")]
    series = {s.name: s for s in fig5.series}
    assert series["recall"].x == [100.0, 80.0]  # gold first, as the paper's x axis
    assert series["recall"].y == pytest.approx([60.0, 40.0])
    assert series["correctness"].y == pytest.approx([100.0, 80.0])
    assert not [c for c in charts if c.title.startswith("Figure 4")]  # nothing removed varies


def test_table3_bars_mean_and_seed_std() -> None:
    runs = [
        _run("a0", 0, 100, 0.2, 0.4, align=0.7, seed=0),
        _run("a1", 0, 100, 0.4, 0.6, align=0.9, seed=1),
        _run("b0", 0, 100, 0.1, 0.1, model="mock/other"),
    ]
    [bars] = KalmaPresenter.charts(runs)
    assert bars.title.startswith("Table 3")
    first, second = bars.series
    assert first.name == "mock/m (n=2)" and second.name == "mock/other (n=1)"
    assert first.x == ["alignment", "correctness", "precision", "recall", "F1"]
    # Means 80, 90, 30, 50; F1 of means 2 * .3 * .5 / .8 = 37.5; std of (.2, .4) = .1414.
    assert first.y == pytest.approx([80.0, 90.0, 30.0, 50.0, 37.5])
    assert first.err == pytest.approx(
        [100 * 0.1414213562, 0.0, 100 * 0.1414213562, 14.14213562, None]
    )
    assert second.err == [None, None, None, None, None]  # one run: no std
    assert "std" in (bars.note or "")


def test_no_charts_when_nothing_varies() -> None:
    assert KalmaPresenter.charts([_run("only", 0, 100, 0.2, 0.4)]) == []


def test_kalma_run_records_hold_the_given_triples(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    model = MockChat(lambda request: "Stephen Crane was born in Newark [NA].")
    config = KalmaRunConfig(model="mock", gold="question-match", remove_knowledge=1)
    run_kalma(tmp_path / "run", config, runtime=Runtime(limit=1), data_dir=data_dir, model=model)
    [record] = [
        json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    ]
    triples = record["kg_triples"]
    prompt = model.requests[0].messages[-1].content
    # Every fact the prompt showed, with its subject's name; the removed fact is not among them.
    assert triples and all(f"{t['relation']}: {t['value']}" in prompt for t in triples)
    assert all(t["subject_label"] == "Stephen Crane" for t in triples)
    assert {"subject": "Q206534", "relation": "movement", "value": "literary realism"} not in [
        {k: t[k] for k in ("subject", "relation", "value")} for t in triples
    ]
    [kg] = [b for b in KalmaPresenter.sample(record, {}) if b.title == "KG given to the model"]
    assert isinstance(kg, TableBlock) and kg.row_marks is not None
    marks = dict(zip(((r[1].text, r[2].text) for r in kg.rows), kg.row_marks, strict=True))
    assert marks[("movement", "literary realism")] == "absent"
    assert marks[("place of birth", "Newark")] is None  # given, not cited ([NA] only)
    gen = [b for b in KalmaPresenter.sample(record, {}) if b.title == "Generation"]
    assert gen and dict(gen[0].fields)["model"] == "mock"


def test_iri_ids_show_their_short_id_and_the_full_iri(tmp_path: Path) -> None:
    # A KG from a Turtle file: the entity id is the IRI, its short id the CURIE 'ex:MarieCurie'.
    ttl = tmp_path / "curie.ttl"
    ttl.write_text(
        "@prefix ex: <http://example.org/kg/> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        'ex:MarieCurie rdfs:label "Marie Curie"@en ; ex:spouse ex:PierreCurie .\n'
        'ex:PierreCurie rdfs:label "Pierre Curie"@en .\n',
        encoding="utf-8",
    )
    full = "http://example.org/kg/MarieCurie"
    graph = load_rdf_kg([ttl], use_cache=False).subgraph_sync(full)
    answer = "She married Pierre [ex:MarieCurie, spouse: Pierre Curie]."
    item = ScoreItem(id="specific-0", question="q", answer=answer, graphs=(graph,))
    [rec] = asyncio.run(score_items_async([item], ScoringOptions(), nli_model("lexical")))
    # What kalma run writes for such graphs (the prompt's short ids) and its retrieval fields.
    rec |= {"short_ids": {full: "ex:MarieCurie"}, "retrieval": {"qids": [full], "gold_qids": []}}
    blocks = KalmaPresenter.sample(rec, {})
    [text] = [b for b in blocks if isinstance(b, TextBlock)]
    [bracket] = [s for p in text.paragraphs for s in p if s.mark]
    assert bracket.mark == "correct"
    assert bracket.tip is not None and bracket.tip.startswith(
        f"Marie Curie · spouse · Pierre Curie (ex:MarieCurie = {full})"
    )
    [kg] = [b for b in blocks if isinstance(b, TableBlock) and b.title.startswith("KG")]
    assert kg.columns[3] == "id"
    [row] = kg.rows
    assert (row[3].text, row[3].tip) == ("ex:MarieCurie", full)
    fields = {b.title: dict(b.fields) for b in blocks if isinstance(b, FieldsBlock)}
    assert fields["Retrieval"]["retrieved graphs"] == f"ex:MarieCurie = {full}"
    # Without the record's short ids, the page compacts the record's own ids (local name).
    del rec["short_ids"]
    blocks = KalmaPresenter.sample(rec, {})
    [kg] = [b for b in blocks if isinstance(b, TableBlock) and b.title.startswith("KG")]
    assert (kg.rows[0][3].text, kg.rows[0][3].tip) == ("MarieCurie", full)


def test_kalma_run_over_iri_ids_prompts_and_records_short_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A dataset directory (the 'kalma build' layout) whose entity ids are IRIs.
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    full = "http://example.org/kg/MarieCurie"
    entity = {"name": "Marie Curie", "spouse": "Pierre Curie", "qid": full}
    data = tmp_path / "mydata"
    data.mkdir()
    for name in ("simple_question_graph.json", "complex_question_graph.json"):
        (data / name).write_text(json.dumps([["Who did Marie Curie marry?", [entity]]]))
    model = MockChat(lambda request: "She married Pierre Curie [MarieCurie, spouse: Pierre Curie].")
    config = KalmaRunConfig(model="mock", dataset=str(data))
    run_kalma(tmp_path / "run", config, runtime=Runtime(limit=1), model=model)
    [record] = [
        json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    ]
    prompt = model.requests[0].messages[-1].content
    assert "{name: Marie Curie, spouse: Pierre Curie, qid: MarieCurie}" in prompt
    assert record["short_ids"] == {full: "MarieCurie"}
    # The citation is read back to the full IRI and is in the KG: correctness 1 of 1.
    assert [v["triple"]["subject"] for v in record["citations"]["verdicts"]] == [full]
    assert record["scores"]["correctness"] == 1.0


# Issue 36, defect 8: the export accounts for every citation, says why a sample is unmeasured
# as metrics.json counts it, and kalma score pages do not claim a prompt.

DOCS = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def test_export_citations_have_a_row_for_every_bracket(record: dict[str, Any]) -> None:
    rows = KalmaPresenter.tables(record)["citations"]
    assert [(r["kind"], r["sentence_index"], r["citation_index"], r["bracket"]) for r in rows] == [
        ("triple", 0, 0, "[Q1, occupation: poet]"),
        ("triple", 1, 0, "[Q1, place of birth: Paris]"),
        ("na", 2, 0, "[NA]"),
        ("malformed", 3, None, "[citation needed]"),  # "See [citation needed]." is sentence 3
    ]
    assert [r["reason"] for r in rows[:3]] == [None, None, None]
    assert rows[3]["reason"].startswith("not a citation")  # the parser's reason
    assert rows[3]["subject"] is None and rows[3]["correct"] is None
    # 2 triple rows, 1 [NA] row, 1 malformed row: the sample's own counts
    counts = KalmaPresenter.export_columns(record, {})
    assert (counts["n_citations"], counts["n_na_markers"]) == (2, 1)
    assert counts["n_malformed_brackets"] == 1
    # a record written before citation validity existed: its parse issue gives the row
    old = {k: v for k, v in record.items() if k != "citation_validity"}
    assert [r["kind"] for r in KalmaPresenter.tables(old)["citations"]][-1] == "malformed"


def test_malformed_rows_sit_where_their_bracket_is() -> None:
    graph = Subgraph.from_entity_dict({"qid": "Q1", "name": "A", "occupation": "poet"})
    answer = "A [] was a poet [Q1, occupation: poet]. Born [Q1]."
    item = ScoreItem(id="s", question="q", answer=answer, graphs=(graph,))
    [rec] = asyncio.run(score_items_async([item], ScoringOptions(), nli_model("lexical")))
    rows = KalmaPresenter.tables(rec)["citations"]
    assert [(r["kind"], r["sentence_index"], r["bracket"]) for r in rows] == [
        ("malformed", 0, "[]"),
        ("triple", 0, "[Q1, occupation: poet]"),
        ("malformed", 1, "[Q1]"),
    ]
    assert all(r["reason"] for r in (rows[0], rows[2]))


def test_export_kinds_are_the_documented_ones(record: dict[str, Any]) -> None:
    line = next(x for x in DOCS.read_text(encoding="utf-8").splitlines() if "`kind` (" in x)
    documented = re.search(r"`kind` \(([^)]*)\)", line)
    assert documented is not None
    written = {r["kind"] for r in KalmaPresenter.tables(record)["citations"]}
    kinds = set(documented.group(1).split(" / "))
    assert kinds == {"triple", "na", "malformed", "no_entity"}
    assert written == {"triple", "na", "malformed"}  # this record has no unjudged bracket


def test_unmeasured_columns_say_what_the_metrics_count() -> None:
    # No citation (correctness and precision 0 / 0, no reason in the record: the metrics give
    # it) and no [NA] sentence though an absent fact is given (the [NA] scorer's own reason);
    # recall 0 / 1 and [NA] recall 0 / 1 are measured.
    graph = Subgraph.from_entity_dict({"qid": "Q1", "name": "Ada", "occupation": "poet"})
    gold = GoldRecord(
        id="a",
        knowledge=(_t("occupation", "poet"),),
        absent=(_t("father", "Lord Byron"),),
    )
    item = ScoreItem(
        id="a", question="q", answer="Ada was a poet.", graphs=(graph,), gold=gold, gold_given=True
    )
    [rec] = asyncio.run(score_items_async([item], ScoringOptions(), nli_model("lexical")))
    columns = KalmaPresenter.export_columns(rec, {})
    no_citation = "answer cites no KG triple (left out of the macro average)"
    no_na = "no [NA] sentence"
    assert columns["unmeasured_correctness"] == columns["unmeasured_precision"] == no_citation
    assert columns["unmeasured_na_precision"] == no_na
    assert columns["unmeasured_recall"] is None and columns["unmeasured_na_recall"] is None
    metrics = build_metrics([rec], KalmaScoreConfig(), "lexical", gold_given=True)
    assert metrics["unmeasured"]["correctness"] == {no_citation: 1}
    assert metrics["unmeasured"]["precision"] == {no_citation: 1}
    assert metrics["unmeasured"]["na_precision"] == {no_na: 1}
    assert "recall" not in metrics["unmeasured"] and "f1" not in metrics["unmeasured"]


def _kg_table(record: dict[str, Any], info: dict[str, Any]) -> TableBlock:
    [kg] = [b for b in KalmaPresenter.sample(record, info) if b.title.startswith("KG")]
    assert isinstance(kg, TableBlock)
    return kg


def test_kalma_score_pages_say_nothing_was_prompted(record: dict[str, Any]) -> None:
    # kalma score over an own KG keeps the facts it scored against (kg_triples).
    fact = {"subject": "Q1", "relation": "occupation", "value": "poet", "subject_label": "Ada"}
    scored = {**record, "kg_triples": [fact]}
    for info in ({"task": "kalma.score"}, {}):  # {}: told by the record (no generation fields)
        kg = _kg_table(scored, info)
        assert kg.title == "KG facts the answer was scored against"
        assert kg.note is not None and "nothing was prompted" in kg.note
        assert "removed" not in kg.note
        assert [r[4].text for r in kg.rows] == ["given, cited, gold", "gold, absent"]
    # kalma run: the prompt's facts; removed facts only when the record lists them
    ran = {**scored, "prompt_version": "paper-v1", "removed": [["Q1", "father", "Lord Byron"]]}
    kg = _kg_table(ran, {"task": "kalma.run"})
    assert kg.title == "KG given to the model"
    assert kg.note == "The facts the prompt held; the absent facts were removed before prompting."
    assert [r[4].text for r in kg.rows] == ["given, cited, gold", "gold, absent (removed)"]
    del ran["removed"]
    kg = _kg_table(ran, {"task": "kalma.run"})
    assert kg.note == "The facts the prompt held (no knowledge was removed)."
    assert [r[4].text for r in kg.rows][1] == "gold, absent"
