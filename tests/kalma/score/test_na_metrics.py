"""KaLMA [NA] precision / recall: Figure 3 in both modes, batching, edge cases, real facts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from _kalma_answers import answer

from citegraph.errors import ConfigError, ModelError
from citegraph.kalma import ParsedAnswer
from citegraph.kalma.score._na import (
    NO_ABSENT,
    NO_NA_SENTENCE,
    AnswerNAScores,
    aggregate_na_scores,
    score_na_async,
)
from citegraph.kalma.score._nli import render_fact
from citegraph.kg import Subgraph, Triple
from citegraph.metrics import BootstrapConfig
from citegraph.models import NLIModel, NLIPair, NLIVerdict


class ScriptedNLI:
    """Entailment from a table of (premise, hypothesis) -> bool; unknown pairs are not entailed."""

    def __init__(self, table: dict[tuple[str, str], bool], short: bool = False) -> None:
        self.table = table
        self.calls: list[list[NLIPair]] = []
        self.short = short

    @property
    def name(self) -> str:
        return "scripted"

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        self.calls.append(list(pairs))
        out = [
            NLIVerdict(entailed=self.table.get((p.premise, p.hypothesis), False), source="table")
            for p in pairs
        ]
        return out[:-1] if self.short else out


def run(a: ParsedAnswer, absent: list[Triple], nli: ScriptedNLI, **kw: object) -> AnswerNAScores:
    return asyncio.run(score_na_async(a, absent, nli, **kw))  # type: ignore[arg-type]


K = {i: Triple(subject="Q1", relation=f"r{i}", value=f"v{i}") for i in range(1, 10)}
# Figure 3: S1 [k1][NA]. S2 [k3][k6][NA]. S3 [k6][k9]. Absent {k2, k4, k5}.
FIG3 = answer(
    ("Sentence1.", [K[1], "NA"]),
    ("Sentence2.", [K[3], K[6], "NA"]),
    ("Sentence3.", [K[6], K[9]]),
)
ABSENT = [K[2], K[4], K[5]]
GOLD = [K[1], K[2], K[3], K[4], K[5]]  # the minimum set; k2, k4, k5 were removed from the KG
# Figure 3's NLI: S1 entails k2 only, S2 entails nothing
FIG3_NLI = {("Sentence1.", "r2: v2"): True}
# a variant: S1 entails k2 and k4, S2 entails k2
MORE_NLI = {
    ("Sentence1.", "r2: v2"): True,
    ("Sentence1.", "r4: v4"): True,
    ("Sentence2.", "r2: v2"): True,
}


def test_figure3_paper_mode() -> None:
    nli = ScriptedNLI(FIG3_NLI)
    s = run(FIG3, ABSENT, nli)
    # precision: S1 entails an absent fact, S2 none -> 1/2
    assert (s.precision_num, s.precision_den, s.precision) == (1, 2, 0.5)
    # recall: k2 entailed by an [NA] sentence, k4 and k5 not -> 1/3
    assert (s.recall_num, s.recall_den) == (1, 3)
    assert s.recall == pytest.approx(1 / 3)
    assert s.na_sentences == (0, 1)
    # one batched call with the 2 x 3 pairs; S3 (no [NA]) is never a premise
    assert len(nli.calls) == 1 and len(nli.calls[0]) == 6
    assert {p.premise for p in nli.calls[0]} == {"Sentence1.", "Sentence2."}


def test_figure3_reference_mode() -> None:
    # the reference gets the gold set; the answer cites k1 and k3, so absent = {k2, k4, k5}
    s = run(FIG3, GOLD, ScriptedNLI(FIG3_NLI), mode="reference")
    assert s.absent == (K[2], K[4], K[5])
    # matched pairs = 1: precision 1/2, recall 1/3, as in paper mode here
    assert (s.precision_num, s.precision_den, s.recall_num, s.recall_den) == (1, 2, 1, 3)


def test_any_semantics_versus_pair_counting() -> None:
    paper = run(FIG3, ABSENT, ScriptedNLI(MORE_NLI))
    # paper: S1 yes, S2 yes -> 2/2; facts k2 and k4 entailed -> 2/3
    assert (paper.precision, paper.recall) == (1.0, pytest.approx(2 / 3))
    reference = run(FIG3, GOLD, ScriptedNLI(MORE_NLI), mode="reference")
    # reference: 3 entailed pairs -> precision 3/2 (above 1), recall 3/3
    assert (reference.precision, reference.recall) == (1.5, 1.0)


def test_reference_absent_set_drops_cited_gold() -> None:
    cites_k4 = answer(("Sentence1.", [K[4], "NA"]), ("Sentence2.", ["NA"]))
    s = run(cites_k4, GOLD, ScriptedNLI(FIG3_NLI), mode="reference")
    # gold {k1..k5} minus cited {k4} = {k1, k2, k3, k5}; matched 1 -> recall 1/4
    assert s.absent == (K[1], K[2], K[3], K[5])
    assert (s.recall_num, s.recall_den) == (1, 4)
    # paper mode takes the absent set as given
    assert run(cites_k4, ABSENT, ScriptedNLI(FIG3_NLI)).absent == tuple(ABSENT)


def test_pairs_are_deduplicated_in_one_call() -> None:
    twice = answer(("Same.", ["NA"]), ("Same.", ["NA"]))
    nli = ScriptedNLI({("Same.", "r4: v4"): True})
    s = run(twice, ABSENT, nli)
    # 2 sentences x 3 facts = 6 pairs, 3 distinct: one call with 3
    assert [len(c) for c in nli.calls] == [3]
    assert len(s.pairs) == 6
    # both sentences entail k4 -> precision 2/2; recall k4 once -> 1/3
    assert (s.precision_num, s.precision_den, s.recall_num, s.recall_den) == (2, 2, 1, 3)


def test_no_na_sentence_and_empty_absent_set() -> None:
    plain = answer(("Sentence3.", [K[6]]))
    nli = ScriptedNLI({})
    paper = run(plain, ABSENT, nli)
    # no [NA]: no precision; the 3 absent facts are missed -> recall 0/3
    assert (paper.precision, paper.recall, paper.recall_den) == (None, 0.0, 3)
    assert paper.unmeasured == {"precision": NO_NA_SENTENCE}
    reference = run(plain, GOLD, nli, mode="reference")
    # reference: an answer without [NA] enters neither denominator
    assert (reference.precision_den, reference.recall_den) == (0, 0)
    assert "recall" in reference.unmeasured
    empty = run(FIG3, [], nli)
    # no absent fact: recall unmeasured, precision 0/2
    assert (empty.precision, empty.recall) == (0.0, None)
    assert empty.unmeasured == {"recall": NO_ABSENT}
    assert nli.calls == []  # nothing to ask in any of the three


def test_aggregate_both_modes() -> None:
    no_na = answer(("Sentence3.", [K[6]]))
    paper = aggregate_na_scores(
        [run(FIG3, ABSENT, ScriptedNLI(t)) for t in (FIG3_NLI, MORE_NLI)]
        + [run(no_na, ABSENT, ScriptedNLI({}))]
    )
    # precision pairs 1/2, 2/2, 0/0 -> micro 3/4, macro (0.5 + 1)/2 = 0.75
    assert (paper.precision.micro, paper.precision.macro) == (0.75, 0.75)
    assert paper.precision.n_excluded == 1
    # recall pairs 1/3, 2/3, 0/3 -> micro 3/9, macro (1/3 + 2/3 + 0)/3 = 1/3
    assert paper.recall.micro == pytest.approx(1 / 3)
    assert paper.recall.macro == pytest.approx(1 / 3)
    # F1 = 2 * 0.75 * (1/3) / (0.75 + 1/3) = 0.5 / (13/12) = 6/13, micro and macro
    assert paper.f1.micro == pytest.approx(6 / 13)
    assert paper.f1.macro == pytest.approx(6 / 13)
    assert (paper.mode, paper.nli, paper.hypothesis_style) == (
        "paper",
        "scripted",
        "relation_value",
    )

    reference = aggregate_na_scores(
        [run(FIG3, GOLD, ScriptedNLI(t), mode="reference") for t in (FIG3_NLI, MORE_NLI)]
        + [run(no_na, GOLD, ScriptedNLI({}), mode="reference")]
    )
    # precision pairs 1/2, 3/2, 0/0 -> micro 4/4 = 1, macro (0.5 + 1.5)/2 = 1
    assert (reference.precision.micro, reference.precision.macro) == (1.0, 1.0)
    # recall pairs 1/3, 3/3, 0/0 -> micro 4/6, macro (1/3 + 1)/2 = 2/3
    assert reference.recall.micro == pytest.approx(2 / 3)
    assert reference.recall.macro == pytest.approx(2 / 3)
    # F1 = 2 * 1 * (2/3) / (5/3) = 0.8
    assert reference.f1.micro == pytest.approx(0.8)
    assert reference.recall.mode == "reference"


def test_aggregate_bootstrap_and_mixing() -> None:
    scores = [run(FIG3, ABSENT, ScriptedNLI(t)) for t in (FIG3_NLI, MORE_NLI, {})] * 3
    config = BootstrapConfig(n_resamples=200, seed=5)
    report = aggregate_na_scores(scores, bootstrap=config)
    assert report == aggregate_na_scores(scores, bootstrap=config)
    ci = report.precision.micro_ci
    assert ci is not None and report.precision.micro is not None
    assert ci.low <= report.precision.micro <= ci.high
    other = run(FIG3, GOLD, ScriptedNLI({}), mode="reference")
    with pytest.raises(ConfigError):
        aggregate_na_scores([scores[0], other])


def test_model_giving_too_few_verdicts_is_an_error() -> None:
    with pytest.raises(ModelError):
        run(FIG3, ABSENT, ScriptedNLI({}, short=True))
    with pytest.raises(ConfigError):
        run(FIG3, ABSENT, ScriptedNLI({}), hypothesis="prose")


def test_scripted_fake_satisfies_the_protocol() -> None:
    assert isinstance(ScriptedNLI({}), NLIModel)


def test_real_facts_with_natural_hypotheses(data_dir: Path) -> None:
    entries = json.loads((data_dir / "biokalma" / "complex_question_graph.json").read_text())
    giovanni = Subgraph.from_entity_dict(entries[31][1][0])
    by_rel = {t.relation: t for t in giovanni}
    removed = [by_rel["place of birth"], by_rel["father"]]  # Madrid, Diego Simeone
    assert render_fact(removed[0]) == "place of birth: Madrid"
    assert render_fact(removed[0], "natural") == "Giovanni Simeone place of birth Madrid"
    a = answer(
        ("Giovanni Simeone was born in Madrid.", ["NA"]),
        ("He plays as a forward.", [by_rel["position played on team"]]),
        ("He is the son of a famous coach.", ["NA"]),
    )
    nli = ScriptedNLI(
        {("Giovanni Simeone was born in Madrid.", "Giovanni Simeone place of birth Madrid"): True}
    )
    s = run(a, removed, nli, hypothesis="natural")
    # sentence 0 entails the birth place; sentence 2 does not name the father: P 1/2, R 1/2
    assert (s.precision, s.recall) == (0.5, 0.5)
    assert s.hypothesis_style == "natural"
    assert AnswerNAScores.model_validate_json(s.model_dump_json()) == s
    custom = run(a, removed, ScriptedNLI({}), hypothesis=lambda t: t.value)
    assert {p.hypothesis for p in custom.pairs} == {"Madrid", "Diego Simeone"}
    assert custom.hypothesis_style.startswith("callable:")
