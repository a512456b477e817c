"""KaLMA retrieval accuracy: retrieved entity ids against gold entity ids, per question.

Per question the retrieved and the gold ids are sets (repeats are dropped, order kept), and
``correct`` = retrieved ids that are gold. Over questions:

- **precision** = Σ correct / Σ retrieved (micro; macro = mean of per-question ratios over the
  questions that retrieved something);
- **recall** = Σ correct / Σ gold;
- **F1** = 2PR / (P + R) of the micro (and of the macro) precision and recall;
- **exact-set accuracy** = fraction of the questions with gold whose retrieved set equals it.

A question without gold ids (98 BioKaLMA entries come without graphs) is handled per mode:

- ``mode="paper"``: it cannot be scored, so it is left out of every number and counted in
  :attr:`RetrievalAccuracy.n_unmeasured` with its reason;
- ``mode="reference"``: as the authors' ``ablation/retrieve_eval.py``, which computes
  ``precision = correct / cite_all`` and ``recall = correct / (1085*2)``. Its gold is the pair of
  people each question was generated from (``round1.csv``, ``knowledge_graph[0]`` and ``[1]``), so
  ``1085*2`` is *all* questions × 2 gold entities: recall divides by 2 per question whatever the
  gold size, and every question counts, including those without gold ids here (0 correct, their
  retrieved ids in the precision denominator). :attr:`RetrievalAccuracy.recall_denominator` says
  which denominator was used and :attr:`RetrievalAccuracy.n_no_gold` how many questions had no
  gold. (The script would count a graph retrieved twice for one question twice; here repeats
  are dropped in both modes.)

The paper reports one "retrieval accuracy" of 75.9 without saying which of these it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import DataError
from citegraph.kalma._rules import KalmaRules, Mode, rules_of
from citegraph.metrics import MicroMacro, f1_micro_macro, micro_macro

NO_GOLD = "no gold entity for the question"


class QuestionRetrievalScore(BaseModel):
    """Retrieved against gold ids for one question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retrieved: tuple[str, ...] = Field(description="Retrieved ids, repeats dropped.")
    gold: tuple[str, ...] = Field(description="Gold ids, repeats dropped.")
    correct: int = Field(description="Retrieved ids that are gold.")
    exact: bool | None = Field(description="Retrieved set == gold set; None without gold.")
    unmeasured_reason: str | None = Field(
        default=None,
        description="Why exact-set accuracy (and, in paper mode, precision and recall) is not "
        "measured for the question.",
    )


class RetrievalAccuracy(BaseModel):
    """Retrieval precision, recall, F1 and exact-set accuracy over questions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode
    precision: MicroMacro
    recall: MicroMacro
    f1: MicroMacro
    exact_match: float | None = Field(
        description="Fraction of the questions with gold whose retrieved set equals the gold set."
    )
    n_questions: int = Field(description="Questions given.")
    n_measured: int = Field(
        description="Questions in precision and recall: those with gold ids (paper mode) or all "
        "(reference mode)."
    )
    n_unmeasured: int = Field(description="Questions left out of precision and recall.")
    unmeasured_reason: str | None = Field(description="Why questions were left out, if any.")
    n_no_gold: int = Field(
        description="Questions without gold ids: left out in paper mode, counted with 0 correct "
        "in reference mode.",
    )
    recall_denominator: str = Field(
        description="What micro recall divides by (the number is recall.denominator).",
    )
    n_retrieved: int = Field(description="Retrieved ids over measured questions.")
    n_gold: int = Field(description="Gold ids over the questions with gold.")
    n_correct: int = Field(description="Retrieved ids that are gold.")
    n_exact: int = Field(description="Questions with gold whose retrieved set == gold set.")
    per_question: tuple[QuestionRetrievalScore, ...]


def _ids(items: Sequence[str], name: str, index: int) -> tuple[str, ...]:
    if isinstance(items, str):
        raise DataError(
            "expected a list of ids per question, got a string", field=f"{name}[{index}]"
        )
    return tuple(dict.fromkeys(str(i) for i in items))


def score_question(
    retrieved: Sequence[str], gold: Sequence[str], *, index: int = 0
) -> QuestionRetrievalScore:
    """Compare one question's retrieved ids with its gold ids.

    Raises:
        DataError: ``retrieved`` or ``gold`` is a string (``index`` names the question).
    """
    got, want = _ids(retrieved, "retrieved", index), _ids(gold, "gold", index)
    correct = len(set(got) & set(want))
    if not want:
        return QuestionRetrievalScore(
            retrieved=got, gold=want, correct=correct, exact=None, unmeasured_reason=NO_GOLD
        )
    return QuestionRetrievalScore(
        retrieved=got, gold=want, correct=correct, exact=set(got) == set(want)
    )


def _pair(
    score: QuestionRetrievalScore, keep_no_gold: bool, denominator: int
) -> tuple[int, int] | None:
    """``(correct, denominator)``, or ``None`` for a question left out (no gold, paper mode)."""
    if score.exact is None and not keep_no_gold:
        return None
    return (score.correct, denominator)


def _recall_rule(per_question: int | None, n_counted: int, n_no_gold: int, keep: bool) -> str:
    """Say what micro recall divides by."""
    if per_question is None:
        left_out = f", {n_no_gold} without gold left out" if n_no_gold and not keep else ""
        return f"the gold ids of the {n_counted} questions with gold{left_out}"
    included = f", the {n_no_gold} without gold included" if n_no_gold and keep else ""
    return (
        f"{per_question} per question × {n_counted} questions = {per_question * n_counted} "
        f"(the authors' retrieve_eval.py: 1085*2){included}"
    )


def retrieval_accuracy(
    retrieved: Sequence[Sequence[str]],
    gold: Sequence[Sequence[str]],
    *,
    mode: Mode | KalmaRules = "paper",
) -> RetrievalAccuracy:
    """Retrieval accuracy of retrieved entity ids (QIDs) against gold ids, question by question.

    Args:
        retrieved: Per question, the retrieved ids (e.g. ``Retrieval.qids``).
        gold: Per question, the gold ids (e.g. the BioKaLMA sample's graph centres).
        mode: ``"paper"``: recall over the gold ids, questions without gold left out;
            ``"reference"``: as the authors' script, recall over 2 per question and every
            question counted, those without gold included (see the module docstring).

    Returns:
        Precision, recall, F1 (micro and macro), exact-set accuracy and the counts.

    Raises:
        ConfigError: unknown mode.
        DataError: the two lists differ in length, or an item is a string instead of a list.

    Example:
        >>> acc = retrieval_accuracy([["Q1", "Q9"], ["Q2"]], [["Q1"], ["Q2", "Q3"]])
        >>> acc.precision.micro, acc.recall.micro  # 2/3 and 2/3
        (0.6666666666666666, 0.6666666666666666)
    """
    rules = rules_of(mode)
    if len(retrieved) != len(gold):
        raise DataError(f"{len(retrieved)} retrieved lists for {len(gold)} gold lists")
    scores = [
        score_question(got, want, index=i)
        for i, (got, want) in enumerate(zip(retrieved, gold, strict=True))
    ]
    with_gold = [s for s in scores if s.exact is not None]
    keep_all = rules.retrieval_scores_questions_without_gold
    counted = scores if keep_all else with_gold
    per_recall = rules.retrieval_recall_per_question
    precision_pairs = [_pair(s, keep_all, len(s.retrieved)) for s in scores]
    recall_pairs = [_pair(s, keep_all, per_recall or len(s.gold)) for s in scores]
    reason = NO_GOLD if len(counted) < len(scores) else None
    precision = micro_macro(precision_pairs, mode=rules.mode)
    recall = micro_macro(recall_pairs, mode=rules.mode)
    n_exact = sum(1 for s in with_gold if s.exact)
    n_no_gold = len(scores) - len(with_gold)
    return RetrievalAccuracy(
        mode=rules.mode,
        precision=precision,
        recall=recall,
        f1=f1_micro_macro(precision, recall, mode=rules.mode),
        exact_match=n_exact / len(with_gold) if with_gold else None,
        n_questions=len(scores),
        n_measured=len(counted),
        n_unmeasured=len(scores) - len(counted),
        unmeasured_reason=reason,
        n_no_gold=n_no_gold,
        recall_denominator=_recall_rule(per_recall, len(counted), n_no_gold, keep_all),
        n_retrieved=sum(len(s.retrieved) for s in counted),
        n_gold=sum(len(s.gold) for s in with_gold),
        n_correct=sum(s.correct for s in counted),
        n_exact=n_exact,
        per_question=tuple(scores),
    )
