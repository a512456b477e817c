"""The [NA] precision edge case of the KaLMA paper (§4.5), decided per sentence.

    "If an NA-marked sentence does not answer the question at all, it is considered correct in
    the [NA] precision calculation. In this case, the LLM correctly identifies a sentence that
    requires further verification."

Paper mode asks, for every [NA] sentence that entails no absent fact, whether it answers the
question; a sentence that does not is counted correct. Two deciders, each recorded by name:

:class:`NLIAnswersQuestion` (any trained NLI model: ``hf:``, ``t5:``, a cascade)
    Zero-shot NLI with the question as premise context: premise
    ``"Question: <question> Sentence: <sentence>"``, hypothesis
    ``"The sentence answers the question."`` (:data:`EDGE_PROMPT_VERSION`). Entailed = answers.
:class:`LexicalAnswersQuestion` (the offline default, with the lexical matcher)
    A stand-in: the sentence answers the question iff it shares at least one content word with
    it (after the matcher's normalisation; English function words and words under 3 letters
    ignored). "Further verification is needed [NA]." shares none with "What did Stephen Crane
    write?" and is counted correct; "Crane also wrote poems [NA]." shares "Crane" and is not.

:func:`answers_question_check` picks the decider for an NLI model. Any object with a ``name`` and
an async ``answers(question, sentences)`` can be passed instead (an LLM judge, for instance).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from citegraph.models import NLIModel, NLIPair, normalize_text
from citegraph.models.nli import LexicalNLI

#: Version of the zero-shot premise / hypothesis wording below; recorded with every decision.
EDGE_PROMPT_VERSION = "na-edge-v1"
EDGE_HYPOTHESIS = "The sentence answers the question."

#: Words that say nothing about what a sentence is about (the lexical stand-in ignores them).
_FUNCTION_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either
    else ever few for from further had has have having he her here hers herself him himself his
    how however i if in into is it its itself just known may me might more most much must my
    myself neither no nor not now of off on once one only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under unknown until up upon very was we were what when
    where whether which while who whom whose why will with within without would yet you your
    yours yourself information answer question provided given following needs need needed
    require requires required verification verify further details detail data available
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


@runtime_checkable
class AnswersQuestion(Protocol):
    """Decides whether sentences answer a question (the §4.5 edge case)."""

    @property
    def name(self) -> str:
        """What decides, recorded with the [NA] scores."""
        ...

    async def answers(self, question: str, sentences: Sequence[str]) -> list[bool]:
        """One decision per sentence: ``True`` if it answers (at least partly) the question."""
        ...


def content_words(text: str) -> set[str]:
    """The normalised words of ``text`` that carry content (see the module docstring)."""
    return {w for w in normalize_text(text).split() if len(w) >= 3 and w not in _FUNCTION_WORDS}


class LexicalAnswersQuestion:
    """The offline stand-in: a sentence answers the question iff they share a content word."""

    name = "lexical-overlap (stand-in)"

    async def answers(self, question: str, sentences: Sequence[str]) -> list[bool]:
        """Content-word overlap of each sentence with the question."""
        asked = content_words(question)
        return [bool(asked & content_words(s)) for s in sentences]


class NLIAnswersQuestion:
    """Zero-shot NLI: does "Question: q Sentence: s" entail "The sentence answers the question."?

    Args:
        nli: The entailment model (one batched call per answer).
    """

    def __init__(self, nli: NLIModel) -> None:
        self._nli = nli

    @property
    def name(self) -> str:
        """``"nli:<model> (na-edge-v1)"``."""
        return f"nli:{self._nli.name} ({EDGE_PROMPT_VERSION})"

    async def answers(self, question: str, sentences: Sequence[str]) -> list[bool]:
        """Entailment of :data:`EDGE_HYPOTHESIS` from the question and each sentence."""
        if not sentences:
            return []
        pairs = [edge_pair(question, s) for s in sentences]
        verdicts = await self._nli.entails(pairs)
        return [v.entailed for v in verdicts]


def edge_pair(question: str, sentence: str) -> NLIPair:
    """The zero-shot NLI pair for one sentence (question as premise context)."""
    return NLIPair(
        premise=f"Question: {question.strip()} Sentence: {sentence.strip()}",
        hypothesis=EDGE_HYPOTHESIS,
    )


def answers_question_check(nli: NLIModel) -> AnswersQuestion:
    """The decider for ``nli``: the lexical stand-in for the lexical matcher alone (it checks
    KG values, not whether a question is answered), else zero-shot NLI with ``nli`` itself."""
    if isinstance(nli, LexicalNLI):
        return LexicalAnswersQuestion()
    return NLIAnswersQuestion(nli)
