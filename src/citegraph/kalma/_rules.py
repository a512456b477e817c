"""Paper vs reference mode, decided in one place: :class:`KalmaRules`.

Every KaLMA metric has two definitions: ``"paper"`` (the paper's text, the default) and
``"reference"`` (what the authors' scripts compute; REFERENCE_NOTES.md). The mode is chosen once,
from the config (``--mode``, ``--parser``), as a :class:`KalmaRules`; the stages read its named
rules instead of comparing mode strings. Public functions still take ``mode="paper"`` or
``mode="reference"`` (or a :class:`KalmaRules`), and records keep the mode's name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from citegraph.errors import ConfigError
from citegraph.kg import Triple

Mode = Literal["paper", "reference"]
"""``"paper"``: the paper's definitions; ``"reference"``: what the authors' scripts compute."""

HypothesisStyle = Literal["relation_value", "natural"] | Callable[[Triple], str]
"""How a fact becomes an NLI hypothesis: a style name or a callable."""

#: The authors' code scores only ``answers[:400]`` for alignment (reference mode).
REFERENCE_CAP = 400
#: The authors' ``retrieve_eval.py`` divides recall by ``1085*2``: every BioKaLMA question was
#: generated from a pair of people (``round1.csv``'s ``knowledge_graph[0]`` and ``[1]``), so its
#: gold is 2 entities, whatever was retrieved (reference mode).
REFERENCE_GOLD_PER_QUESTION = 2


class KalmaRules(BaseModel):
    """What differs between the paper's definitions and the authors' scripts, as named rules
    (the defaults are the paper's; :meth:`for_mode` gives either set)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    mode: Mode
    """The mode's name, as records keep it."""

    parser: Mode
    """Citation parser: the paper's or the authors' regex."""

    citations_need_correctness: bool = True
    """A citation is precise, and hits a gold fact, only when it is correct."""

    gold_fact_counts_once: bool = False
    """A gold fact cited k times is 1 precise + k - 1 imprecise citations."""

    skip_unscorable_answers: bool = False
    """Answers without a KG graph or empty answers are skipped (unmeasured)."""

    alignment_substring_shortcut: bool = False
    """A pair is aligned when the value is a substring of the sentence."""

    alignment_cap: int | None = None
    """Alignment scores only the first N answers."""

    na_absent_is_uncited_gold: bool = False
    """[NA] absent facts = gold facts the answer does not cite."""

    na_counts_matched_pairs: bool = False
    """[NA] precision and recall count entailed pairs (both can exceed 1)."""

    na_not_answering_is_correct: bool = True
    """An [NA] sentence that does not answer the question counts as correct in [NA] precision
    (the paper's §4.5 edge case; the authors' eval_NA.py has no such rule)."""

    na_gold_injected_only: bool = False
    """[NA] scoring takes the gold file's injected-only set (``knowledge_injected``, the authors'
    no_round1 gold) when it has one."""

    judge_script_prompt: bool = False
    """The text-quality judge gets the script's text."""

    judge_script_score: bool = False
    """Judge replies read as the script reads them (default 3, out of range kept)."""

    judge_first_n: bool = False
    """The judged sample is the first N answers with a KG, not a seeded sample."""

    retrieval_script_options: bool = False
    """Retrieval uses the authors' options."""

    retrieval_recall_per_question: int | None = None
    """Retrieval recall divides by this many gold entities per question."""

    retrieval_scores_questions_without_gold: bool = False
    """Questions without gold ids stay in retrieval precision and recall (0 correct)."""

    @classmethod
    def for_mode(cls, mode: str, parser: str | None = None) -> KalmaRules:
        """The rules of ``mode`` (``parser`` defaults to the same mode).

        Raises:
            ConfigError: ``mode`` or ``parser`` is not ``"paper"`` or ``"reference"``.
        """
        check_mode(mode)
        check_mode(parser or mode)
        rules = _REFERENCE if mode == "reference" else _PAPER
        if parser is not None and parser != rules.parser:
            return rules.model_copy(update={"parser": parser})
        return rules

    @property
    def reference_parser(self) -> bool:
        """Citations are read with the authors' regex."""
        return self.parser == "reference"


def check_mode(mode: str) -> None:
    """Raise :class:`ConfigError` unless ``mode`` is ``"paper"`` or ``"reference"``."""
    if mode not in ("paper", "reference"):
        raise ConfigError(f"mode must be 'paper' or 'reference', got {mode!r}")


def rules_of(mode: Mode | KalmaRules) -> KalmaRules:
    """``mode`` as rules (a :class:`KalmaRules` is returned as it is)."""
    return mode if isinstance(mode, KalmaRules) else KalmaRules.for_mode(mode)


def style_name(style: HypothesisStyle) -> str:
    """The recorded name of a hypothesis style (``callable:<qualname>`` for a callable)."""
    if callable(style):
        return f"callable:{getattr(style, '__qualname__', type(style).__name__)}"
    return style


_PAPER = KalmaRules(mode="paper", parser="paper")
_REFERENCE = KalmaRules(
    mode="reference",
    parser="reference",
    citations_need_correctness=False,
    gold_fact_counts_once=True,
    skip_unscorable_answers=True,
    alignment_substring_shortcut=True,
    alignment_cap=REFERENCE_CAP,
    na_absent_is_uncited_gold=True,
    na_counts_matched_pairs=True,
    na_not_answering_is_correct=False,
    na_gold_injected_only=True,
    judge_script_prompt=True,
    judge_script_score=True,
    judge_first_n=True,
    retrieval_script_options=True,
    retrieval_recall_per_question=REFERENCE_GOLD_PER_QUESTION,
    retrieval_scores_questions_without_gold=True,
)
