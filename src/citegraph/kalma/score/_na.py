"""KaLMA "conscious incompetence": [NA] precision and recall (paper §4.4, Figure 3).

An answer's ``[NA]`` sentences should state knowledge that is absent from the KG. An NLI model
checks each (sentence, absent fact) pair: premise = the sentence without its brackets
(:attr:`Sentence.plain`), hypothesis = the fact rendered as text (``"relation: value"`` by default,
as the authors' code; ``"natural"`` renders ``"<subject name> <relation> <value>"``; any callable
``Triple -> str`` works). All pairs of one answer go to the model in one batched call, duplicates
removed.

``mode="paper"`` (default, Figure 3 and §4.5)
    The absent set is the knowledge removed from the KG. Precision: per [NA] sentence, 1 iff it
    entails at least one absent fact, averaged over [NA] sentences; and, given the question, the
    §4.5 edge case: "If an NA-marked sentence does not answer the question at all, it is
    considered correct in the [NA] precision calculation." Every [NA] sentence that entails no
    absent fact goes to an :class:`~citegraph.kalma.score.AnswersQuestion` decider (by default
    chosen from the NLI model, :func:`~citegraph.kalma.score.answers_question_check`); those it
    finds not answering count as correct, and are recorded in ``edge_case`` with the decider's
    name in ``edge_check``. Recall: per absent fact, 1 iff at least one [NA] sentence entails
    it, averaged over absent facts (the edge case does not touch recall).
``mode="reference"`` (the authors' ``eval_NA.py``)
    Pass the gold no_round1 set (the injected facts only; :func:`na_gold_set` picks it from a
    gold record): the absent set is its facts that the answer does *not* cite. No edge case.
    ``matched`` = number of entailed (NA sentence, absent fact) pairs; precision = matched / #NA
    sentences, recall = matched / #absent (so both can exceed 1). Only answers with at least one
    [NA] sentence enter either denominator.

An answer without [NA] sentences has no precision (denominator 0); in paper mode its absent facts
count as missed for recall. An empty absent set leaves recall unmeasured for that answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ModelError
from citegraph.kalma._rules import HypothesisStyle, KalmaRules, Mode, rules_of, style_name
from citegraph.kalma.parse import ParsedAnswer
from citegraph.kalma.score._na_edge import AnswersQuestion, answers_question_check
from citegraph.kalma.score._nli import NLISetup, common_setup, entail, render_fact
from citegraph.kg import Triple
from citegraph.metrics import BootstrapConfig, MicroMacro, join_reasons, micro_macro_f1
from citegraph.models import NLIModel, NLIPair
from citegraph.runs import blocking

NAMode = Mode
NAMetric = Literal["precision", "recall"]
_METRICS: tuple[NAMetric, ...] = ("precision", "recall")

NO_NA_SENTENCE = "no [NA] sentence"
NO_ABSENT = "empty absent-knowledge set"


class NAEntailment(BaseModel):
    """The NLI decision for one ([NA] sentence, absent fact) pair."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sentence_index: int = Field(description="Index of the sentence in the answer.")
    triple: Triple
    premise: str
    hypothesis: str
    entailed: bool
    score: float | None = None


class AnswerNAScores(NLISetup):
    """[NA] precision and recall of one answer, with every NLI decision."""

    absent: tuple[Triple, ...] = Field(description="The absent facts scored (after filtering).")
    na_sentences: tuple[int, ...] = Field(description="Indices of the sentences with [NA].")
    pairs: tuple[NAEntailment, ...]
    precision_num: int
    precision_den: int
    recall_num: int
    recall_den: int
    precision: float | None
    recall: float | None
    unmeasured: dict[str, str] = Field(
        default_factory=dict, description="Metric -> why this answer has no ratio for it."
    )
    edge_case: tuple[int, ...] = Field(
        default=(),
        description="[NA] sentences counted correct only because they do not answer the "
        "question (paper §4.5).",
    )
    edge_check: str | None = Field(
        default=None,
        description="What decided the §4.5 edge case; None when the rule was not applied "
        "(reference mode, or no question given).",
    )
    gold_set: str | None = Field(
        default=None,
        description="Reference mode: the gold set the absent facts came from "
        "('knowledge_injected' or 'knowledge').",
    )

    def pair(self, metric: NAMetric) -> tuple[int, int]:
        """``(numerator, denominator)``; denominator 0 when the ratio is unmeasured."""
        if metric == "precision":
            return (self.precision_num, self.precision_den)
        return (self.recall_num, self.recall_den)


class NAReport(NLISetup):
    """[NA] precision, recall and F1 aggregated over answers."""

    n_answers: int
    precision: MicroMacro
    recall: MicroMacro
    f1: MicroMacro = Field(description="Micro F1 from micro P/R, macro F1 from macro P/R.")
    n_edge_case: int = Field(
        default=0, description="[NA] sentences counted correct by the §4.5 edge case."
    )
    edge_checks: tuple[str, ...] = Field(
        default=(), description="What decided the edge case (empty: the rule was not applied)."
    )
    gold_sets: dict[str, int] = Field(
        default_factory=dict,
        description="Reference mode: answers per gold set their absent facts came from.",
    )


async def score_na_async(
    answer: ParsedAnswer,
    absent: Sequence[Triple],
    nli: NLIModel,
    *,
    mode: NAMode | KalmaRules = "paper",
    hypothesis: HypothesisStyle = "relation_value",
    question: str | None = None,
    edge_check: AnswersQuestion | None = None,
    gold_set: str | None = None,
) -> AnswerNAScores:
    """[NA] precision and recall of one answer.

    Args:
        answer: The parsed answer.
        absent: Paper mode: the absent knowledge (removed from the KG). Reference mode: the gold
            (no_round1) set; the facts the answer cites are removed from it first.
        nli: The entailment model; called once with every distinct pair.
        mode: ``"paper"`` or ``"reference"`` (see the module docstring).
        hypothesis: How a fact becomes the hypothesis text.
        question: The question; paper mode needs it for the §4.5 edge case (without it the edge
            case is not applied, and ``edge_check`` stays ``None``).
        edge_check: Who decides whether a sentence answers the question (default:
            :func:`~citegraph.kalma.score.answers_question_check` of ``nli``).
        gold_set: Reference mode: the name of the gold set ``absent`` came from, recorded.

    Returns:
        The scores with every pair's verdict.

    Raises:
        ConfigError: On an unknown mode or hypothesis style.
        ModelError: If the model returns a different number of verdicts than pairs.
    """
    rules = rules_of(mode)
    facts = list(dict.fromkeys(absent))  # a set: a repeated fact counts once
    if rules.na_absent_is_uncited_gold:
        cited = {c.triple.key for c in answer.kg_citations if c.triple is not None}
        facts = [t for t in facts if t.key not in cited]
    na_idx = [i for i, s in enumerate(answer.sentences) if s.has_na]
    hyps = [render_fact(t, hypothesis) for t in facts]

    wanted = [(i, j) for i in na_idx for j in range(len(facts))]
    unique = list(
        dict.fromkeys(
            NLIPair(premise=answer.sentences[i].plain, hypothesis=hyps[j]) for i, j in wanted
        )
    )
    decided = dict(zip(unique, await entail(nli, unique), strict=True))
    pairs = []
    for i, j in wanted:
        key = NLIPair(premise=answer.sentences[i].plain, hypothesis=hyps[j])
        verdict = decided[key]
        pairs.append(
            NAEntailment(
                sentence_index=i,
                triple=facts[j],
                premise=key.premise,
                hypothesis=key.hypothesis,
                entailed=verdict.entailed,
                score=verdict.score,
            )
        )

    entailed = [
        (p.sentence_index, j) for p, (_, j) in zip(pairs, wanted, strict=True) if p.entailed
    ]
    edge: tuple[int, ...] = ()
    edge_name = None
    if rules.na_not_answering_is_correct and question is not None:
        checker = edge_check or answers_question_check(nli)
        edge_name = checker.name
        edge = await _not_answering(answer, na_idx, {i for i, _ in entailed}, question, checker)
    unmeasured: dict[str, str] = {}
    if not rules.na_counts_matched_pairs:
        p_num, p_den = len({i for i, _ in entailed}) + len(edge), len(na_idx)
        r_num, r_den = len({j for _, j in entailed}), len(facts)
    else:
        p_num = r_num = len(entailed) if na_idx else 0
        p_den = len(na_idx)
        r_den = len(facts) if na_idx else 0
        if not na_idx and facts:
            unmeasured["recall"] = f"{NO_NA_SENTENCE} (reference mode: answer not counted)"
    if not na_idx:
        unmeasured["precision"] = NO_NA_SENTENCE
    if not facts:
        unmeasured["recall"] = NO_ABSENT
    return AnswerNAScores(
        mode=rules.mode,
        hypothesis_style=style_name(hypothesis),
        nli=nli.name,
        absent=tuple(facts),
        na_sentences=tuple(na_idx),
        pairs=tuple(pairs),
        precision_num=p_num,
        precision_den=p_den,
        recall_num=r_num,
        recall_den=r_den,
        precision=p_num / p_den if p_den else None,
        recall=r_num / r_den if r_den else None,
        unmeasured=unmeasured,
        edge_case=edge,
        edge_check=edge_name,
        gold_set=gold_set if rules.na_absent_is_uncited_gold else None,
    )


score_na = blocking(score_na_async)


async def _not_answering(
    answer: ParsedAnswer,
    na_idx: Sequence[int],
    entailed: set[int],
    question: str,
    checker: AnswersQuestion,
) -> tuple[int, ...]:
    """The [NA] sentences that entail no absent fact and do not answer the question."""
    rest = [i for i in na_idx if i not in entailed]
    decided = await checker.answers(question, [answer.sentences[i].plain for i in rest])
    if len(decided) != len(rest):
        raise ModelError(f"{checker.name} gave {len(decided)} decisions for {len(rest)} sentences")
    return tuple(i for i, answers in zip(rest, decided, strict=True) if not answers)


def aggregate_na_scores(
    scores: Sequence[AnswerNAScores],
    *,
    bootstrap: BootstrapConfig | None = None,
    mode: NAMode | None = None,
) -> NAReport:
    """Micro and macro [NA] precision, recall and F1 over answers.

    Answers with a zero denominator add nothing to the micro sums and are left out of the macro
    average (their count is :attr:`MicroMacro.n_excluded`).

    Args:
        scores: Per-answer scores of one mode, hypothesis style and NLI model.
        bootstrap: When given, add percentile intervals resampling answers.
        mode: The expected mode; needed only to label an empty report (default "paper").

    Raises:
        ConfigError: If the scores mix modes, hypothesis styles or NLI models.
    """
    the_mode, style, nli = common_setup(scores, mode, "scores")
    results = micro_macro_f1(
        {m: [s.pair(m) for s in scores] for m in _METRICS},
        bootstrap,
        reasons={m: join_reasons(s.unmeasured.get(m) for s in scores) for m in _METRICS},
        mode=the_mode,
        unit="answer",
    )
    return NAReport(
        mode=the_mode,
        hypothesis_style=style,
        nli=nli,
        n_answers=len(scores),
        n_edge_case=sum(len(s.edge_case) for s in scores),
        edge_checks=tuple(sorted({s.edge_check for s in scores if s.edge_check})),
        gold_sets=dict(Counter(s.gold_set for s in scores if s.gold_set)),
        **results,
    )
