"""[NA] scoring against the paper's text: the §4.5 edge case (paper mode) and the authors'
no_round1 gold set (reference mode). Expected values are worked out by hand in each docstring."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from _kalma_answers import answer
from test_na_metrics import ABSENT, FIG3, FIG3_NLI, GOLD, K, ScriptedNLI

from citegraph.datasets import read_gold
from citegraph.errors import ModelError
from citegraph.kalma import KalmaRules
from citegraph.kalma.score import (
    EDGE_HYPOTHESIS,
    LexicalAnswersQuestion,
    NLIAnswersQuestion,
    answers_question_check,
    score_na_async,
)
from citegraph.kalma.score._item import na_gold_set
from citegraph.kalma.score._na import aggregate_na_scores
from citegraph.kg import Triple
from citegraph.models.nli import CascadeNLI, LexicalNLI

QUESTION = "Where did Stephen Crane live and what did he write?"


class ScriptedAnswers:
    """Decides 'answers the question' from a set of sentences that answer."""

    name = "scripted-answers"

    def __init__(self, answering: set[str], short: bool = False) -> None:
        self.answering = answering
        self.asked: list[list[str]] = []
        self.short = short

    async def answers(self, question: str, sentences: Sequence[str]) -> list[bool]:
        self.asked.append(list(sentences))
        out = [s in self.answering for s in sentences]
        return out[:-1] if self.short else out


def test_figure3_with_the_edge_case() -> None:
    """Paper §4.5: "If an NA-marked sentence does not answer the question at all, it is
    considered correct in the [NA] precision calculation."

    Figure 3: S1 [k1][NA] entails the absent k2; S2 [k3][k6][NA] entails nothing. Without the
    edge case precision = 1/2 (the figure's number). If S2 does not answer the question, it is
    correct too: precision = (1 + 1) / 2 = 1.0. Recall is untouched: 1/3. Only S2 (not entailed)
    is put to the decider."""
    checker = ScriptedAnswers(answering=set())
    s = asyncio.run(
        score_na_async(FIG3, ABSENT, ScriptedNLI(FIG3_NLI), question=QUESTION, edge_check=checker)
    )
    assert (s.precision_num, s.precision_den, s.precision) == (2, 2, 1.0)
    assert (s.recall_num, s.recall_den) == (1, 3)
    assert s.edge_case == (1,)
    assert s.edge_check == "scripted-answers"
    assert checker.asked == [["Sentence2."]]


def test_an_answering_sentence_stays_wrong() -> None:
    """Same Figure 3 answer, S2 does answer the question: the edge case does not apply and
    precision stays 1/2 (Figure 3's "correct=1, all=2")."""
    checker = ScriptedAnswers(answering={"Sentence2."})
    s = asyncio.run(
        score_na_async(FIG3, ABSENT, ScriptedNLI(FIG3_NLI), question=QUESTION, edge_check=checker)
    )
    assert (s.precision_num, s.precision_den) == (1, 2)
    assert s.edge_case == ()


def test_no_question_no_edge_case_and_reference_mode_never() -> None:
    """Without a question the rule cannot be decided (recorded as not applied); the authors'
    eval_NA.py has no such rule, so reference mode never applies it: both give Figure 3's 1/2."""
    checker = ScriptedAnswers(answering=set())
    plain = asyncio.run(score_na_async(FIG3, ABSENT, ScriptedNLI(FIG3_NLI), edge_check=checker))
    assert (plain.precision_num, plain.edge_check, plain.edge_case) == (1, None, ())
    ref = asyncio.run(
        score_na_async(
            FIG3,
            GOLD,
            ScriptedNLI(FIG3_NLI),
            mode="reference",
            question=QUESTION,
            edge_check=checker,
        )
    )
    assert (ref.precision_num, ref.precision_den, ref.edge_check) == (1, 2, None)
    assert checker.asked == []


def test_edge_case_with_an_empty_absent_set() -> None:
    """An answer with one [NA] sentence and no absent fact: no pair can be entailed, so the
    sentence is correct iff it does not answer the question: precision 1/1 (recall unmeasured)."""
    a = answer(("More research is needed.", ["NA"]))
    s = asyncio.run(
        score_na_async(a, [], ScriptedNLI({}), question=QUESTION, edge_check=ScriptedAnswers(set()))
    )
    assert (s.precision_num, s.precision_den, s.recall) == (1, 1, None)


def test_aggregate_counts_the_edge_case() -> None:
    """Two answers: Figure 3 with S2 not answering (2/2) and Figure 3 with S2 answering (1/2).
    Micro precision = (2 + 1) / (2 + 2) = 0.75; macro = (1.0 + 0.5) / 2 = 0.75; one sentence
    took the edge case."""
    nli = ScriptedNLI(FIG3_NLI)
    a = asyncio.run(
        score_na_async(FIG3, ABSENT, nli, question=QUESTION, edge_check=ScriptedAnswers(set()))
    )
    b = asyncio.run(
        score_na_async(
            FIG3, ABSENT, nli, question=QUESTION, edge_check=ScriptedAnswers({"Sentence2."})
        )
    )
    report = aggregate_na_scores([a, b])
    assert report.precision.micro == pytest.approx(0.75)
    assert report.precision.macro == pytest.approx(0.75)
    assert report.n_edge_case == 1
    assert report.edge_checks == ("scripted-answers",)


def test_a_decider_giving_too_few_decisions_is_an_error() -> None:
    with pytest.raises(ModelError, match="1 decisions for 2"):
        a = answer(("One.", ["NA"]), ("Two.", ["NA"]))
        asyncio.run(
            score_na_async(
                a,
                [K[2]],
                ScriptedNLI({}),
                question=QUESTION,
                edge_check=ScriptedAnswers(set(), True),
            )
        )


def test_lexical_stand_in_by_hand() -> None:
    """Content words of the question: {stephen, crane, live, write}. "Further verification is
    needed." shares none (does not answer); "Crane also wrote poems." shares "crane" (answers);
    "He lived in Newark." shares nothing ("lived" is not "live": no stemming)."""
    decided = asyncio.run(
        LexicalAnswersQuestion().answers(
            QUESTION,
            ["Further verification is needed.", "Crane also wrote poems.", "He lived in Newark."],
        )
    )
    assert decided == [False, True, False]


def test_decider_chosen_from_the_nli_model() -> None:
    """The lexical matcher checks KG values, so it gets the lexical stand-in; any other model
    (a cascade here) decides with the zero-shot pair, question as premise context."""
    assert isinstance(answers_question_check(LexicalNLI()), LexicalAnswersQuestion)
    scripted = ScriptedNLI(
        {
            ("Question: Q? Sentence: It rained.", EDGE_HYPOTHESIS): False,
            ("Question: Q? Sentence: Yes.", EDGE_HYPOTHESIS): True,
        }
    )
    cascade = CascadeNLI(scripted)
    check = answers_question_check(cascade)
    assert isinstance(check, NLIAnswersQuestion)
    assert check.name == "nli:lexical+scripted (na-edge-v1)"
    assert asyncio.run(check.answers("Q?", ["It rained.", "Yes."])) == [False, True]


# --- reference mode: the no_round1 gold set -------------------------------------------------


def _gold_file(tmp_path: Path, injected: bool) -> Path:
    line = {"id": "specific-0", "knowledge": [t.as_list() for t in GOLD]}
    if injected:
        line["knowledge_injected"] = [K[2].as_list(), K[4].as_list()]
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def test_reference_mode_takes_the_injected_set(tmp_path: Path) -> None:
    """REFERENCE_NOTES (eval_NA.py): "absent-knowledge set = gold (no_round1) triples not cited
    in the answer". With knowledge_injected = {k2, k4} (no round-1 labels) and Figure 3's
    answer (cites k1, k3, k6, k9): absent = {k2, k4}; S1 entails k2: matched = 1, so precision
    1/2 and recall 1/2 (with the full set {k1..k5}, recall was 1/3)."""
    entry = read_gold(_gold_file(tmp_path, injected=True))["specific-0"]
    rules = KalmaRules.for_mode("reference")
    facts, name = na_gold_set(entry, rules)
    assert (facts, name) == ((K[2], K[4]), "knowledge_injected")
    s = asyncio.run(score_na_async(FIG3, facts, ScriptedNLI(FIG3_NLI), mode=rules, gold_set=name))
    assert (s.precision_num, s.precision_den, s.recall_num, s.recall_den) == (1, 2, 1, 2)
    assert s.gold_set == "knowledge_injected"
    assert aggregate_na_scores([s], mode="reference").gold_sets == {"knowledge_injected": 1}


def test_reference_mode_falls_back_to_knowledge(tmp_path: Path) -> None:
    """A gold file without knowledge_injected (hand-written, or BioKaLMA-style) gives the whole
    minimum set, named so: recall 1/3 as in Figure 3. Paper mode ignores the gold set."""
    entry = read_gold(_gold_file(tmp_path, injected=False))["specific-0"]
    assert entry.knowledge_injected is None
    assert na_gold_set(entry, KalmaRules.for_mode("reference"))[1] == "knowledge"
    facts, _ = na_gold_set(entry, KalmaRules.for_mode("reference"))
    s = asyncio.run(
        score_na_async(FIG3, facts, ScriptedNLI(FIG3_NLI), mode="reference", gold_set="knowledge")
    )
    assert (s.recall_num, s.recall_den) == (1, 3)


def test_kalma_run_keeps_the_injected_set_when_removing_knowledge(data_dir: Path) -> None:
    """``kalma run --remove-knowledge`` adds the removed facts as the absent set; the gold's
    knowledge_injected must survive that, so reference-mode [NA] scoring still uses it.

    specific-0 (Stephen Crane), gold knowledge {place of birth: Newark, father: Jonathan
    Townley Crane}, knowledge_injected {father}. The answer cites nothing and says "His father
    was Jonathan Townley Crane [NA]." Reference mode: absent = injected facts not cited =
    {father}; the lexical matcher finds "Jonathan Townley Crane" in the sentence: 1 matched
    pair over 1 [NA] sentence and 1 absent fact."""
    from citegraph.datasets import GoldRecord, load_kalma_dataset
    from citegraph.kalma.run._answer import RunModels, answer_and_score
    from citegraph.kalma.run._config import KalmaRunConfig
    from citegraph.testing import MockChat

    sample = load_kalma_dataset("biokalma", "specific", data_dir)[0]
    birth = Triple(subject="Q206534", relation="place of birth", value="Newark")
    father = Triple(subject="Q206534", relation="father", value="Jonathan Townley Crane")
    gold = {
        sample.id: GoldRecord(id=sample.id, knowledge=(birth, father), knowledge_injected=(father,))
    }
    config = KalmaRunConfig(model="mock", mode="reference", remove_knowledge=1, gold="gold.jsonl")
    models = RunModels(
        answerer=MockChat("His father was Jonathan Townley Crane [NA]."),
        nli=LexicalNLI(),
        judge=None,
        kg=None,
        kg_identity=None,
        retriever=None,
    )
    record = asyncio.run(
        answer_and_score(
            sample, config, models, graphs=tuple(sample.graphs), gold=gold, judged=None
        )
    )
    na = record["na"]
    assert na["gold_set"] == "knowledge_injected"
    assert [t["relation"] for t in na["absent"]] == ["father"]
    assert (na["precision_num"], na["precision_den"], na["recall_den"]) == (1, 1, 1)
