"""Citation validity: per-answer counts and the ``metrics.json`` block, checked by hand.

The hand-made answer has 4 brackets: one cites a triple of the retrieved graph, one a real KG
entity's triple that was not retrieved, one an id the KG does not have (``Q999999999``), one is
``[1]`` (malformed). Real-data tests score the demo answers over BioKaLMA's embedded store.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import DataError, EndpointUnavailable
from citegraph.kalma.parse import parse_answer, parse_answer_reference
from citegraph.kalma.score import KalmaScoreConfig, ScoreItem, score_answers, score_items_async
from citegraph.kalma.score._config import ScoringOptions
from citegraph.kalma.score._report import build_metrics
from citegraph.kalma.score._task import KalmaScoreTask
from citegraph.kalma.score._validity import (
    NO_KG,
    NO_KG_DATASET_DIR,
    EntityLookup,
    answer_validity,
)
from citegraph.kalma.score._validity_report import NOT_RECORDED, ValidityTotals
from citegraph.kg import OxigraphKG, Subgraph, Triple
from citegraph.models import nli_model

CRANE = Subgraph.from_entity_dict(
    {"qid": "Q206534", "name": "Stephen Crane", "place of birth": "Newark", "sport": "baseball"}
)
ANSWER = (
    "Stephen Crane was born in Newark [Q206534, place of birth: Newark]. "
    "He met Ernst Hanfstaengl, born in Munich [Q58051, place of birth: Munich]. "
    "He had a friend called Casper [Q999999999, friend: Casper]. "
    "See the biography [1]."
)
NA_ONLY = "Nothing is known of his mother [NA]."


def _kg() -> OxigraphKG:
    kg = OxigraphKG.in_memory()
    kg.add_triples(list(CRANE.triples))
    kg.add_triples([Triple(subject="Q58051", relation="place of birth", value="Munich")])
    return kg


class CountingKG:
    """A KG that counts its lookups (to check they are made once per id, batched)."""

    def __init__(self, kg: OxigraphKG) -> None:
        self.kg = kg
        self.asked: list[str] = []

    async def subgraph(self, entity_id: str) -> Subgraph:
        self.asked.append(entity_id)
        return await self.kg.subgraph(entity_id)


def _score(
    answers: list[str], lookup: EntityLookup | None, options: ScoringOptions | None = None
) -> list[dict[str, Any]]:
    items = [
        ScoreItem(id=f"specific-{i}", question="Who was Stephen Crane?", answer=a, graphs=(CRANE,))
        for i, a in enumerate(answers)
    ]
    model = nli_model("lexical")
    return asyncio.run(
        score_items_async(items, options or ScoringOptions(), model, entities=lookup)
    )


def test_the_hand_made_answer_counted_by_hand() -> None:
    [record] = _score([ANSWER], EntityLookup(_kg()))
    v = record["citation_validity"]
    assert v["brackets"] == 4
    assert v["malformed_brackets"] == 1
    assert [m["bracket"] for m in v["malformed"]] == ["[1]"]
    assert v["malformed"][0]["reason"].startswith("not a citation")
    assert (v["kg_citations"], v["na_citations"]) == (3, 0)
    # Munich (real entity, not retrieved) and Q999999999 (not in the KG) are outside.
    assert v["outside_retrieved"] == 2
    assert v["outside"] == [
        ["Q58051", "place of birth", "Munich"],
        ["Q999999999", "friend", "Casper"],
    ]
    assert v["not_in_kg"] == 1 and v["not_in_kg_ids"] == ["Q999999999"]
    assert (v["sentences"], v["citations"], v["sentences_cited"]) == (4, 3, 3)
    assert v["citations_per_sentence"] == pytest.approx(3 / 4)
    assert v["unmeasured"] == {}


def test_the_block_pools_counts_with_their_denominators() -> None:
    records = _score([ANSWER, NA_ONLY, "He wrote books."], EntityLookup(_kg()))
    block = build_metrics(records, KalmaScoreConfig(), "lexical", gold_given=False)[
        "citation_validity"
    ]
    assert block["n_answers"] == 3
    # brackets: 4 + 1 + 0; malformed: [1] only.
    assert (block["brackets"], block["malformed_brackets"]) == (5, 1)
    assert block["malformed_rate"] == pytest.approx(1 / 5)
    assert (block["kg_citations"], block["na_citations"]) == (3, 1)
    assert block["outside_retrieved_rate"] == pytest.approx(2 / 3)
    assert (block["not_in_kg"], block["not_in_kg_checked"]) == (1, 3)
    assert block["not_in_kg_rate"] == pytest.approx(1 / 3)
    # sentences 4 + 1 + 1 = 6; citations 3 + 1 + 0 = 4; cited sentences 3 + 1 + 0 = 4.
    assert (block["sentences"], block["citations"], block["sentences_cited"]) == (6, 4, 4)
    assert block["citations_per_sentence"] == pytest.approx(4 / 6)
    assert block["citations_per_sentence_mean"] == pytest.approx((3 / 4 + 1 + 0) / 3)
    assert block["sentences_cited_rate"] == pytest.approx(4 / 6)
    assert block["answers_without_citations"] == 1
    assert block["answers_without_citations_rate"] == pytest.approx(1 / 3)
    assert block["denominators"]["malformed_rate"] == "brackets"
    assert block["denominators"]["not_in_kg_rate"] == "not_in_kg_checked"
    assert block["unmeasured"] == {}


def test_reference_mode_reads_brackets_with_the_authors_parser() -> None:
    answer = "Born in Newark [Q206534, place of birth: Newark]. Unknown mother [ NA ]."
    paper = _score([answer], None)
    reference = _score([answer], None, ScoringOptions(mode="reference"))
    # The paper parser reads '[ NA ]'; the authors' regex takes only the exact '[NA]'.
    assert paper[0]["citation_validity"]["malformed_brackets"] == 0
    assert paper[0]["citation_validity"]["na_citations"] == 1
    ref = reference[0]["citation_validity"]
    assert (ref["brackets"], ref["malformed_brackets"], ref["na_citations"]) == (2, 1, 0)
    assert ref["malformed"][0]["bracket"] == "[ NA ]"


def test_unclosed_bracket_is_malformed_and_its_inner_bracket_still_counts() -> None:
    answer = "Born in Newark [see [Q206534, place of birth: Newark]."
    parsed = parse_answer(answer, [CRANE])
    v = answer_validity(answer, parsed, [CRANE], {"Q206534": True})
    assert (v.brackets, v.malformed_brackets, v.kg_citations) == (2, 1, 1)
    assert v.malformed[0].reason.startswith("unclosed bracket")
    parsed = parse_answer_reference(answer, [CRANE])  # '[see [Q206534, ...]' is one bracket
    v = answer_validity(answer, parsed, [CRANE], {"[see [Q206534": False})
    assert (v.brackets, v.malformed_brackets, v.kg_citations) == (2, 1, 1)


def test_without_a_kg_not_in_kg_is_unmeasured_with_its_reason() -> None:
    records = _score([ANSWER, "He wrote books."], None)
    v = records[0]["citation_validity"]
    assert v["not_in_kg"] is None and v["unmeasured"] == {"not_in_kg": NO_KG}
    assert v["outside_retrieved"] == 2  # the rest is measured
    # An answer citing nothing needs no lookup: 0 of 0.
    assert records[1]["citation_validity"]["not_in_kg"] == 0
    block = build_metrics(records, KalmaScoreConfig(), "lexical", gold_given=False)[
        "citation_validity"
    ]
    assert (block["not_in_kg"], block["not_in_kg_checked"], block["not_in_kg_rate"]) == (0, 0, None)
    assert block["unmeasured"]["not_in_kg_rate"] == {NO_KG: 1}


def test_a_kg_that_fails_to_open_or_answer_leaves_it_unmeasured() -> None:
    def broken() -> OxigraphKG:
        raise DataError("biokalma files are missing")

    [record] = _score([ANSWER], EntityLookup(opener=broken))
    reason = record["citation_validity"]["unmeasured"]["not_in_kg"]
    assert reason == "the KG could not be opened: biokalma files are missing"

    class Down:
        async def subgraph(self, entity_id: str) -> Subgraph:
            raise EndpointUnavailable("connection refused")

    [record] = _score([ANSWER], EntityLookup(Down()))  # type: ignore[arg-type]
    assert record["citation_validity"]["not_in_kg"] is None
    assert "failed: connection refused" in record["citation_validity"]["unmeasured"]["not_in_kg"]

    class Flaky(CountingKG):
        async def subgraph(self, entity_id: str) -> Subgraph:
            if not self.asked:
                self.asked.append("down")
                raise EndpointUnavailable("timed out")
            return await super().subgraph(entity_id)

    lookup = EntityLookup(Flaky(_kg()))  # type: ignore[arg-type]
    [first] = _score([ANSWER], lookup)
    assert first["citation_validity"]["not_in_kg"] is None  # Q206534's lookup failed
    [again] = _score([ANSWER], lookup)  # the failure was not remembered
    assert again["citation_validity"]["not_in_kg"] == 1


def test_lookups_are_made_once_per_id_and_opened_lazily() -> None:
    counting = CountingKG(_kg())
    opened: list[int] = []

    def opener() -> Any:
        opened.append(1)
        return counting

    lookup = EntityLookup(opener=opener)
    _score(["He wrote books."], lookup)
    assert opened == []  # nothing cited, nothing opened
    _score([ANSWER, ANSWER], lookup)
    _score([ANSWER], lookup)
    assert opened == [1]
    assert sorted(counting.asked) == ["Q206534", "Q58051", "Q999999999"]


def test_failed_and_old_records_are_left_out_and_counted() -> None:
    [record] = _score([ANSWER], EntityLookup(_kg()))
    failed = {"id": "specific-9", "status": "failed", "error": "server down", "question": "q"}
    old = {k: v for k, v in record.items() if k != "citation_validity"} | {"id": "specific-8"}
    block = build_metrics([record, failed, old], KalmaScoreConfig(), "lexical", gold_given=False)[
        "citation_validity"
    ]
    assert block["n_answers"] == 1 and block["brackets"] == 4
    reasons = block["unmeasured"]["malformed_rate"]
    assert reasons == {NOT_RECORDED: 1, "item failed, not scored: server down": 1}
    assert set(block["unmeasured"]) == set(block["denominators"])


def test_totals_of_nothing_are_none_not_zero() -> None:
    block = ValidityTotals().block()
    assert block["n_answers"] == 0 and block["malformed_rate"] is None
    assert block["citations_per_sentence"] is None and block["not_in_kg_rate"] is None


def test_a_dataset_directory_has_no_kg_to_ask(tmp_path: Path) -> None:
    task = KalmaScoreTask(KalmaScoreConfig(dataset=str(tmp_path)), tmp_path / "answers.jsonl")
    assert task._entity_lookup().reason == NO_KG_DATASET_DIR
    task = KalmaScoreTask(KalmaScoreConfig(), tmp_path / "answers.jsonl", data_dir=tmp_path)
    assert task._entity_lookup().reason is None  # BioKaLMA's store, opened on first use


# ---------------------------------------------------------------- real data


@pytest.fixture
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


@pytest.mark.usefixtures("_cache")
def test_demo_answers_over_biokalma(data_dir: Path, tmp_path: Path) -> None:
    demo = resources.files("citegraph.kalma") / "demo" / "answers.jsonl"
    answers = tmp_path / "answers.jsonl"
    answers.write_text(demo.read_text(encoding="utf-8"), encoding="utf-8")
    result = score_answers(answers, tmp_path / "run", data_dir=data_dir)
    block = result.metrics["citation_validity"]
    records = {
        r["id"]: r["citation_validity"]
        for r in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())
    }
    # By hand (src/citegraph/kalma/demo/README.md): '[citation needed]' is the one malformed
    # bracket; 'friend: Adolf Hitler' is outside Hanfstaengl's graph but he is in the KG;
    # Q99999999 is in no BioKaLMA graph.
    assert records["specific-3"]["malformed_brackets"] == 1
    assert records["specific-3"]["citations"] == 0
    assert records["specific-1"]["outside"] == [["Q58051", "friend", "Adolf Hitler"]]
    assert records["specific-1"]["not_in_kg"] == 0
    assert records["specific-6"]["not_in_kg_ids"] == ["Q99999999"]
    assert records["specific-0"] == records["specific-0"] | {
        "brackets": 6,
        "malformed_brackets": 0,
        "kg_citations": 9,
        "na_citations": 1,
        "outside_retrieved": 0,
        "not_in_kg": 0,
    }
    # Invariants: pooled sums of the records; a citation outside the graphs is one scored wrong
    # (the demo has no whitespace variants); an id the KG lacks is outside its graphs too.
    for key in ("brackets", "malformed_brackets", "kg_citations", "sentences", "citations"):
        assert block[key] == sum(v[key] for v in records.values())
    assert block["kg_citations"] == result.metrics["n_citations"]
    assert block["na_citations"] == result.metrics["n_na_markers"]
    wrong = [(r["kg_citations"], r["outside_retrieved"], r["not_in_kg"]) for r in records.values()]
    assert all(missing <= outside <= cited for cited, outside, missing in wrong)
    correctness = result.metrics["correctness"]["micro"]
    assert block["outside_retrieved_rate"] == pytest.approx(1 - correctness)
    counted = (block["malformed_brackets"], block["not_in_kg"], block["outside_retrieved"])
    assert counted == (1, 1, 2)
    assert block["unmeasured"] == {}


@pytest.mark.usefixtures("_cache")
def test_every_entity_of_the_graphs_is_in_the_embedded_kg(data_dir: Path) -> None:
    from citegraph.datasets import KalmaSplit
    from citegraph.kg import open_kg

    split = KalmaSplit("biokalma", "specific", data_dir)
    samples = split.samples(split.ids[:60])
    ids = [g.center.id for s in samples for g in s.graphs]
    lookup = EntityLookup(open_kg("biokalma", data_dir=data_dir).kg)
    known = asyncio.run(lookup.known([*ids, "Q999999999"]))
    assert all(known[i] is True for i in ids) and known["Q999999999"] is False
    # An answer citing every fact of its graph exactly: nothing outside, nothing missing.
    sample = next(s for s in samples if s.graphs)
    graph = sample.graphs[0]
    text = " ".join(
        f"Fact {k} [{t.subject}, {t.relation}: {t.value}]."
        for k, t in enumerate(graph.triples)
        if "," not in t.value and ":" not in t.value
    )
    parsed = parse_answer(text, sample.graphs)
    v = answer_validity(text, parsed, sample.graphs, asyncio.run(lookup.known([graph.center.id])))
    assert v.kg_citations == v.sentences == v.brackets > 5
    assert (v.outside_retrieved, v.not_in_kg, v.malformed_brackets) == (0, 0, 0)
