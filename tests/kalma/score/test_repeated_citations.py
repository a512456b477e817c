"""Repeated citations in citation validity, counted by hand: per answer, in ``metrics.json``,
on the command line and in the viewer; the paper's per-citation metrics keep every citation.

Stephen Crane's graph holds ``place of birth: Newark`` and ``sport: baseball``. The repeating
answer cites Newark three times (once in its first bracket, twice in its second: one of those
repeats a fact already listed in the same bracket) and baseball once:

    [Q206534, place of birth: Newark]                         Newark 1
    [Q206534, place of birth: Newark, place of birth: Newark]  Newark 2 and 3 (3 in-bracket)
    [Q206534, sport: baseball]                                baseball 1
    [NA]

so 4 KG citations, 2 repeated (Newark 2 and 3), 1 of them in the same bracket (Newark 3).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from citegraph.cli._kalma import validity_line
from citegraph.kalma.score import KalmaScoreConfig, ScoreItem, score_items_async
from citegraph.kalma.score._config import ScoringOptions
from citegraph.kalma.score._report import build_metrics
from citegraph.kalma.score._validity import EntityLookup
from citegraph.kalma.score._validity_report import REPEATS_NOT_RECORDED, ValidityTotals
from citegraph.kalma.view._validity import (
    REPEATED,
    REPEATED_IN_BRACKET,
    validity_fields,
    validity_rows,
    validity_table,
    validity_tags,
)
from citegraph.kg import OxigraphKG, Subgraph
from citegraph.models import nli_model

CRANE = Subgraph.from_entity_dict(
    {"qid": "Q206534", "name": "Stephen Crane", "place of birth": "Newark", "sport": "baseball"}
)
REPEATING = (
    "Crane was born in Newark [Q206534, place of birth: Newark]. "
    "Newark, again [Q206534, place of birth: Newark, place of birth: Newark]. "
    "He played baseball [Q206534, sport: baseball]. His mother is unknown [NA]."
)
ONCE = "Crane was born in Newark [Q206534, place of birth:  Newark]. Unknown [NA]."


def _score(answers: list[str]) -> list[dict[str, Any]]:
    kg = OxigraphKG.in_memory()
    kg.add_triples(list(CRANE.triples))
    items = [
        ScoreItem(id=f"specific-{i}", question="Who was Stephen Crane?", answer=a, graphs=(CRANE,))
        for i, a in enumerate(answers)
    ]
    return asyncio.run(
        score_items_async(items, ScoringOptions(), nli_model("lexical"), entities=EntityLookup(kg))
    )


def test_an_answer_counts_its_repeats_and_those_in_one_bracket() -> None:
    [record] = _score([REPEATING])
    v = record["citation_validity"]
    assert (v["kg_citations"], v["repeated_citations"], v["repeated_in_bracket"]) == (4, 2, 1)
    assert v["repeated"] == [["Q206534", "place of birth", "Newark"]]
    assert validity_tags(record)[-2:] == [REPEATED, REPEATED_IN_BRACKET]


def test_the_paper_metrics_keep_every_citation_repeats_included() -> None:
    # correctness is per citation as the paper defines it: 4 correct of 4, not 2 of 2
    [record] = _score([REPEATING])
    assert record["citations"]["n_citations"] == 4
    assert record["scores"]["correctness"] == 1.0


def test_an_answer_without_repeats_counts_none() -> None:
    # whitespace inside a value does not make a second triple (compared as the parser does)
    [record] = _score([ONCE])
    v = record["citation_validity"]
    assert (v["kg_citations"], v["repeated_citations"], v["repeated_in_bracket"]) == (1, 0, 0)
    assert v["repeated"] == [] and REPEATED not in validity_tags(record)


def test_the_block_pools_repeats_over_kg_citations() -> None:
    records = _score([REPEATING, ONCE])
    block = build_metrics(records, KalmaScoreConfig(), "lexical", gold_given=False)[
        "citation_validity"
    ]
    # repeats 2 + 0 over KG citations 4 + 1; in-bracket 1 + 0
    assert (block["repeated_citations"], block["repeated_checked"]) == (2, 5)
    assert block["repeated_rate"] == pytest.approx(2 / 5)
    assert block["repeated_in_bracket"] == 1
    assert block["repeated_in_bracket_rate"] == pytest.approx(1 / 5)
    assert block["repeated_answers"] == 2
    assert block["denominators"]["repeated_rate"] == "repeated_checked"
    assert block["denominators"]["repeated_in_bracket_rate"] == "repeated_checked"
    assert "repeated_rate" not in block["unmeasured"]


def test_a_record_scored_before_repeats_were_counted_is_unmeasured_not_zero() -> None:
    [new] = _score([REPEATING])
    old = {"citation_validity": dict(new["citation_validity"])}
    for key in ("repeated_citations", "repeated_in_bracket", "repeated"):
        del old["citation_validity"][key]
    totals = ValidityTotals()
    totals.add(new)
    totals.add(old)
    block = totals.block()
    assert (block["repeated_citations"], block["repeated_checked"]) == (2, 4)  # new record only
    assert block["repeated_answers"] == 1 and block["n_answers"] == 2
    assert block["unmeasured"]["repeated_rate"] == {REPEATS_NOT_RECORDED: 1}
    assert validity_fields(old) is not None
    shown = dict(validity_fields(old).fields)  # type: ignore[union-attr]
    assert shown["repeated citations (a triple cited before in the answer)"].startswith(
        "unmeasured"
    )


def test_the_command_line_the_sample_page_and_the_run_table_show_them() -> None:
    records = _score([REPEATING, ONCE])
    metrics = build_metrics(records, KalmaScoreConfig(), "lexical", gold_given=False)
    line = validity_line(metrics["citation_validity"], None)
    assert "5 KG citations" in line
    assert "2 (40.0%) repeating a triple cited before in the answer (1 in the same bracket)" in line

    fields = dict(validity_fields(records[0]).fields)  # type: ignore[union-attr]
    assert fields["repeated citations (a triple cited before in the answer)"] == (
        "2 / 4 = 50.0% KG citations; 1 within one bracket"
    )
    assert fields["repeated"] == "Q206534 · place of birth · Newark"

    table = validity_table(metrics)
    assert table is not None
    rows = {r[0].text: [c.text for c in r[1:]] for r in table.rows}
    assert rows["KG citations repeating a triple cited before in the answer"] == [
        "2",
        "5 KG citations checked for repeats",
        "40.0%",
        "—",
    ]
    assert rows["… of which cited before in the same bracket"][:3] == [
        "1",
        "5 KG citations checked for repeats",
        "20.0%",
    ]
    [row] = [r for r in validity_rows(metrics, "paper") if r.name == "repeated citations"]
    assert row.value == pytest.approx(0.4) and row.n_measured == 2
    assert row.how == "2 of 5 KG citations checked for repeats, pooled"


def test_a_run_table_from_before_repeats_has_no_repeat_rows() -> None:
    records = _score([ONCE])
    metrics = build_metrics(records, KalmaScoreConfig(), "lexical", gold_given=False)
    block = metrics["citation_validity"]
    for key in [k for k in block if k.startswith("repeated")]:
        del block[key]
    table = validity_table(metrics)
    assert table is not None
    assert not [r for r in table.rows if "repeat" in r[0].text]
    assert "repeated citations" not in [r.name for r in validity_rows(metrics, "paper")]
    assert "repeating" not in validity_line(block, None)
