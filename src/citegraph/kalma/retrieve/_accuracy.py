"""KaLMA retrieval accuracy: retrieved entity ids against gold entity ids, per question.

Per question the retrieved and the gold ids are sets (repeats are dropped, order kept), and
``correct`` = retrieved ids that are gold. Over questions:

- **precision** = Σ correct / Σ retrieved (micro; macro = mean of per-question ratios over the
  questions that retrieved something);
- **recall** = Σ correct / Σ gold; with ``mode="reference"`` (the authors' ``retrieve_eval.py``,
  recall = correct / (1085·2)) the denominator is 2 per question, whatever the gold size;
- **F1** = 2PR / (P + R) of the micro (and of the macro) precision and recall;
- **exact-set accuracy** = fraction of questions whose retrieved set equals the gold set.

A question without gold ids (98 BioKaLMA entries come without graphs) cannot be scored: it is
unmeasured in both modes, left out of every number and counted with its reason. The paper reports
one "retrieval accuracy" of 75.9 without saying which of these it is.
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
    exact: bool | None = Field(description="Retrieved set == gold set; None when unmeasured.")
    unmeasured_reason: str | None = Field(default=None, description="Why it is not scored.")


class RetrievalAccuracy(BaseModel):
    """Retrieval precision, recall, F1 and exact-set accuracy over questions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode
    precision: MicroMacro
    recall: MicroMacro
    f1: MicroMacro
    exact_match: float | None = Field(
        description="Fraction of measured questions whose retrieved set equals the gold set."
    )
    n_questions: int = Field(description="Questions given.")
    n_measured: int = Field(description="Questions with gold ids.")
    n_unmeasured: int = Field(description="Questions without gold ids, left out.")
    unmeasured_reason: str | None = Field(description="Why questions were left out, if any.")
    n_retrieved: int = Field(description="Retrieved ids over measured questions.")
    n_gold: int = Field(description="Gold ids over measured questions.")
    n_correct: int = Field(description="Retrieved ids that are gold.")
    n_exact: int = Field(description="Measured questions with retrieved set == gold set.")
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
        mode: ``"paper"``: recall over the gold ids; ``"reference"``: recall over 2 per
            question, as the authors' script.

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
    measured = [s for s in scores if s.unmeasured_reason is None]
    per_recall = rules.retrieval_recall_per_question
    precision_pairs = [None if s.exact is None else (s.correct, len(s.retrieved)) for s in scores]
    recall_pairs = [
        None if s.exact is None else (s.correct, per_recall or len(s.gold)) for s in scores
    ]
    reason = NO_GOLD if len(measured) < len(scores) else None
    precision = micro_macro(precision_pairs, mode=rules.mode)
    recall = micro_macro(recall_pairs, mode=rules.mode)
    n_exact = sum(1 for s in measured if s.exact)
    return RetrievalAccuracy(
        mode=rules.mode,
        precision=precision,
        recall=recall,
        f1=f1_micro_macro(precision, recall, mode=rules.mode),
        exact_match=n_exact / len(measured) if measured else None,
        n_questions=len(scores),
        n_measured=len(measured),
        n_unmeasured=len(scores) - len(measured),
        unmeasured_reason=reason,
        n_retrieved=sum(len(s.retrieved) for s in measured),
        n_gold=sum(len(s.gold) for s in measured),
        n_correct=sum(s.correct for s in measured),
        n_exact=n_exact,
        per_question=tuple(scores),
    )
