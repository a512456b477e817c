"""KaLMA citation quality: correctness, precision, recall and F1 (paper §4.2, Figure 2).

Per answer, :func:`score_citations` gives a verdict per KG citation (``[NA]`` is not a citation)
and the counts behind three ratios:

- **correctness** = correct citations / citations. A citation is correct iff its triple is
  complete (subject, relation and value all non-empty) and exactly matches a triple of one of the
  question's retrieved graphs.
- **precision** = precise citations / citations;
- **recall** = gold facts hit / gold facts (the gold *minimum knowledge set*).

Two modes (REFERENCE_NOTES.md, KaLMA §1.4):

``mode="paper"`` (default)
    A citation is precise iff it is correct AND in the gold set; every occurrence counts, so
    citing a gold fact twice gives two precise citations (Figure 2: 3/6). A gold fact is hit iff a
    *correct* citation cites it (Figure 2: 2/5).
``mode="reference"`` (the authors' ``eval_recall.py``)
    Correctness is not required: a gold fact is hit iff some citation has the identical triple,
    and precision = gold facts hit / citations, so each gold fact counts once and a fact cited
    ``k`` times is 1 precise + ``k - 1`` imprecise citations (Figure 2: 2/6). Answers the script
    skips are unmeasured here: no retrieved graph, an empty answer (its NaN answers), and an empty
    gold set (the script raises ZeroDivisionError) for precision and recall.

In both modes an answer without citations has no correctness or precision ratio (denominator 0:
left out of macro averages, adds nothing to micro sums) and recall 0 for each gold fact; without a
gold set precision and recall are unmeasured (reason "no gold minimum knowledge set"), never 0.
Matching is exact string equality, as in the paper and the code; ``normalize=True`` compares after
Unicode accent stripping, case folding and whitespace collapsing.

Aggregation (:func:`aggregate_citation_scores`) gives micro and macro averages; F1 is computed
from the aggregated P and R (the paper: "we calculate micro and macro F1-Score from corresponding
precision and recall"; Table 3's F1 equals 2PR/(P+R) of its mean P and R columns), not as a mean of
per-answer F1s. :func:`combine_citation_runs` averages reports over runs as Table 3 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError
from citegraph.kalma._rules import KalmaRules, Mode, rules_of
from citegraph.kalma.parse import ParsedAnswer
from citegraph.kg import Subgraph, Triple
from citegraph.metrics import (
    BootstrapConfig,
    MicroMacro,
    MicroMacroRuns,
    RatioPair,
    ZeroDenominator,
    f1_score,
    join_reasons,
    micro_macro_f1,
    summarise_micro_macro_runs,
)
from citegraph.models import strip_accents

CitationMode = Mode
CitationMetric = Literal["correctness", "precision", "recall"]

NO_GOLD = "no gold minimum knowledge set"
REF_NO_GRAPH = "no retrieved graph (the reference code skips such entries)"
REF_EMPTY_ANSWER = "empty answer (the reference code skips empty generations)"
REF_EMPTY_GOLD = "empty gold set (the reference code raises ZeroDivisionError)"

_Key = tuple[str, str, str]


class CitationVerdict(BaseModel):
    """The judgement of one KG citation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    triple: Triple = Field(description="The cited triple.")
    correct: bool = Field(description="Complete and exactly in one of the retrieved graphs.")
    in_gold: bool | None = Field(description="In the gold minimum knowledge set; None w/o gold.")
    precise: bool | None = Field(
        description="Counts toward the precision numerator (see the module's modes); None w/o gold."
    )


class AnswerCitationScores(BaseModel):
    """Citation scores of one answer: verdicts, counts and per-answer ratios.

    A per-answer ratio is ``None`` when its denominator is 0 (see the counts) or when the metric
    is unmeasured for this answer (see :attr:`unmeasured`); only the latter leaves the answer out
    of the micro sums too.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: CitationMode
    normalize: bool = Field(description="Whether strings were normalised before matching.")
    verdicts: tuple[CitationVerdict, ...] = Field(description="One per KG citation, in order.")
    n_citations: int
    n_correct: int
    n_precise: int | None = Field(description="None without gold.")
    n_gold: int | None = Field(description="Distinct gold facts; None without gold.")
    n_gold_hit: int | None = Field(description="Gold facts hit; None without gold.")
    gold_missed: tuple[Triple, ...] = Field(default=(), description="Gold facts not hit.")
    correctness: float | None
    precision: float | None
    recall: float | None
    unmeasured: dict[str, str] = Field(
        default_factory=dict, description="Metric -> why it is unmeasured for this answer."
    )

    def pair(self, metric: CitationMetric) -> RatioPair:
        """``(numerator, denominator)`` of ``metric``, or ``None`` when unmeasured."""
        if metric in self.unmeasured:
            return None
        if metric == "correctness":
            return (self.n_correct, self.n_citations)
        if metric == "precision":
            return None if self.n_precise is None else (self.n_precise, self.n_citations)
        if self.n_gold_hit is None or self.n_gold is None:
            return None
        return (self.n_gold_hit, self.n_gold)


class CitationReport(BaseModel):
    """Citation scores aggregated over answers (one run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: CitationMode
    normalize: bool
    n_answers: int
    correctness: MicroMacro
    precision: MicroMacro
    recall: MicroMacro
    f1: MicroMacro = Field(description="Micro F1 from micro P/R, macro F1 from macro P/R.")


def _fold(text: str) -> str:
    return " ".join(strip_accents(text).casefold().split())


def _key(triple: Triple, normalize: bool) -> _Key:
    if not normalize:
        return triple.key
    return (_fold(triple.subject), _fold(triple.relation), _fold(triple.value))


def _complete(triple: Triple) -> bool:
    return all(part.strip() for part in triple.key)


def _ratio(num: int | None, den: int | None) -> float | None:
    return num / den if num is not None and den else None


def score_citations(
    answer: ParsedAnswer,
    graphs: Sequence[Subgraph],
    gold: Sequence[Triple] | None = None,
    *,
    mode: CitationMode | KalmaRules = "paper",
    normalize: bool = False,
) -> AnswerCitationScores:
    """Score the KG citations of one answer.

    Args:
        answer: The parsed answer; its ``[NA]`` markers are ignored here.
        graphs: The question's retrieved graphs (citations are correct iff they are in one).
        gold: The question's gold minimum knowledge set, or ``None`` when there is none
            (precision and recall are then unmeasured). Repeated gold triples count once.
        mode: ``"paper"`` or ``"reference"`` (see the module docstring), or their rules.
        normalize: Compare after accent stripping, case folding and whitespace collapsing
            instead of exactly.

    Returns:
        Verdicts, counts and per-answer ratios.

    Raises:
        ConfigError: On an unknown mode.
    """
    rules = rules_of(mode)
    known = {_key(t, normalize) for g in graphs for t in g.triples}
    gold_keys: dict[_Key, Triple] = {}
    for t in gold or ():
        gold_keys.setdefault(_key(t, normalize), t)

    cited = [c.triple for c in answer.kg_citations if c.triple is not None]
    keys = [_key(t, normalize) for t in cited]
    correct = [_complete(t) and k in known for t, k in zip(cited, keys, strict=True)]
    counted = [ok or not rules.citations_need_correctness for ok in correct]
    hit = {k for k, ok in zip(keys, counted, strict=True) if ok and k in gold_keys}

    verdicts: list[CitationVerdict] = []
    seen: set[_Key] = set()
    for triple, key, ok, counts in zip(cited, keys, correct, counted, strict=True):
        in_gold = key in gold_keys if gold is not None else None
        precise = None
        if in_gold is not None:  # the reference counts a gold fact once; repeats are "irrelevant"
            precise = counts and in_gold and not (rules.gold_fact_counts_once and key in seen)
            seen.add(key)
        verdicts.append(
            CitationVerdict(triple=triple, correct=ok, in_gold=in_gold, precise=precise)
        )

    unmeasured: dict[str, str] = {}
    if gold is None:
        unmeasured |= {"precision": NO_GOLD, "recall": NO_GOLD}
    if rules.skip_unscorable_answers:
        if not any(len(g) for g in graphs):
            unmeasured = dict.fromkeys(("correctness", "precision", "recall"), REF_NO_GRAPH)
        elif not any(s.text.strip() for s in answer.sentences):
            unmeasured = dict.fromkeys(("correctness", "precision", "recall"), REF_EMPTY_ANSWER)
        elif gold is not None and not gold_keys:
            unmeasured |= {"precision": REF_EMPTY_GOLD, "recall": REF_EMPTY_GOLD}

    n_correct = sum(correct)
    n_precise = None if gold is None else sum(bool(v.precise) for v in verdicts)
    n_gold = None if gold is None else len(gold_keys)
    n_hit = None if gold is None else len(hit)
    return AnswerCitationScores(
        mode=rules.mode,
        normalize=normalize,
        verdicts=tuple(verdicts),
        n_citations=len(cited),
        n_correct=n_correct,
        n_precise=n_precise,
        n_gold=n_gold,
        n_gold_hit=n_hit,
        gold_missed=tuple(t for k, t in gold_keys.items() if k not in hit),
        correctness=None if "correctness" in unmeasured else _ratio(n_correct, len(cited)),
        precision=None if "precision" in unmeasured else _ratio(n_precise, len(cited)),
        recall=None if "recall" in unmeasured else _ratio(n_hit, n_gold),
        unmeasured=unmeasured,
    )


def aggregate_citation_scores(
    scores: Sequence[AnswerCitationScores],
    *,
    zero_citations: ZeroDenominator = "exclude",
    bootstrap: BootstrapConfig | None = None,
    mode: CitationMode | None = None,
) -> CitationReport:
    """Micro and macro correctness, precision, recall and F1 over answers.

    Args:
        scores: Per-answer scores, all computed with the same mode and normalisation.
        zero_citations: Macro policy for answers without citations in correctness and precision:
            ``"exclude"`` (paper and reference code) or ``"zero"`` (count them as 0).
        bootstrap: When given, add percentile intervals resampling answers.
        mode: The expected mode; needed only to label an empty report (default "paper").

    Returns:
        The report; every :class:`MicroMacro` records the mode.

    Raises:
        ConfigError: If the scores mix modes or normalisation, or differ from ``mode``.
    """
    modes = {s.mode for s in scores} | ({mode} if mode else set())
    norms = {s.normalize for s in scores}
    if len(modes) > 1 or len(norms) > 1:
        raise ConfigError(f"cannot aggregate mixed scores: modes {modes}, normalize {norms}")
    the_mode: CitationMode = next(iter(modes)) if modes else "paper"
    policies: dict[CitationMetric, ZeroDenominator] = {
        "correctness": zero_citations,
        "precision": zero_citations,
        "recall": "exclude",
    }
    results = micro_macro_f1(
        {m: [s.pair(m) for s in scores] for m in policies},
        bootstrap,
        zero_denominators=policies,
        reasons={m: join_reasons(s.unmeasured.get(m) for s in scores) for m in policies},
        mode=the_mode,
        unit="answer",
    )
    return CitationReport(
        mode=the_mode,
        normalize=next(iter(norms)) if norms else False,
        n_answers=len(scores),
        **results,
    )


class CitationRunsSummary(BaseModel):
    """Reports of repeated runs combined as KaLMA Table 3: mean (std) per metric, F1 of means."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: CitationMode
    n_runs: int
    correctness: MicroMacroRuns
    precision: MicroMacroRuns
    recall: MicroMacroRuns
    f1_micro: float | None = Field(description="F1 of the mean micro P and mean micro R.")
    f1_macro: float | None = Field(description="F1 of the mean macro P and mean macro R.")


def combine_citation_runs(reports: Sequence[CitationReport]) -> CitationRunsSummary:
    """Mean and sample std over runs of each metric; F1 from the mean P and R (no std).

    Args:
        reports: One report per run, same mode.

    Raises:
        ConfigError: If ``reports`` is empty or mixes modes.
    """
    modes = {r.mode for r in reports}
    if len(modes) != 1:
        raise ConfigError(f"need reports of one mode, got {sorted(modes) or 'none'}")

    def runs(metric: str) -> MicroMacroRuns:
        return summarise_micro_macro_runs([getattr(r, metric) for r in reports])

    precision, recall = runs("precision"), runs("recall")
    return CitationRunsSummary(
        mode=reports[0].mode,
        n_runs=len(reports),
        correctness=runs("correctness"),
        precision=precision,
        recall=recall,
        f1_micro=f1_score(precision.micro.mean, recall.micro.mean),
        f1_macro=f1_score(precision.macro.mean, recall.macro.mean),
    )
