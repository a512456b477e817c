"""KaLMA text-citation alignment: both modes, batching and dedup, aggregation and the 400 cap.

Three answers are used throughout (plain sentences, citations as parsed):

A  s0 "Stephen Crane was born in Newark."  [place of birth: Newark] [date_of_birth: 1871-11-01]
   s1 "He wrote novels."                   [NA] [occupation: writer]
B  s0 "He played baseball."                [sport: baseball]
C  s0 "He liked the sea."                  [NA]                  -> no pair: unmeasured

The scripted NLI model entails only ("He wrote novels.", "occupation: writer").
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from citegraph.errors import ConfigError, ModelError
from citegraph.kalma import (
    REFERENCE_CAP,
    AnswerAlignment,
    Citation,
    ParsedAnswer,
    Sentence,
    score_alignment,
    score_alignment_async,
)
from citegraph.kalma.score import aggregate_alignment, score_alignment_many_async
from citegraph.kalma.score._alignment import NO_PAIRS, SKIPPED
from citegraph.kg import Triple
from citegraph.models import NLIPair, NLIVerdict
from citegraph.models.nli import CascadeNLI, LexicalNLI

CRANE = "Q206534"
POB = Triple(
    subject=CRANE, relation="place of birth", value="Newark", subject_label="Stephen Crane"
)
DOB = Triple(
    subject=CRANE, relation="date_of_birth", value="1871-11-01", subject_label="Stephen Crane"
)
JOB = Triple(subject=CRANE, relation="occupation", value="writer", subject_label="Stephen Crane")
SPORT = Triple(subject=CRANE, relation="sport", value="baseball")


class ScriptedAlignNLI:
    """Entailed iff (premise, hypothesis) is in ``yes``; records every call."""

    def __init__(self, yes: set[tuple[str, str]], *, drop_last: bool = False) -> None:
        self.yes = yes
        self.drop_last = drop_last
        self.calls: list[list[tuple[str, str]]] = []

    @property
    def name(self) -> str:
        return "scripted"

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        self.calls.append([(p.premise, p.hypothesis) for p in pairs])
        out = [
            NLIVerdict(entailed=(p.premise, p.hypothesis) in self.yes, score=0.9, source="scripted")
            for p in pairs
        ]
        return out[:-1] if self.drop_last else out


def _answer(*sentences: tuple[str, list[Triple | None]]) -> ParsedAnswer:
    """Each sentence is (plain text, citations); ``None`` stands for an [NA] marker."""
    built = []
    for plain, cits in sentences:
        citations = tuple(
            Citation(kind="na", bracket="[NA]", start=0)
            if c is None
            else Citation(kind="kg", triple=c, bracket=f"[{c.subject}, {c.as_text()}]", start=0)
            for c in cits
        )
        built.append(Sentence(text=plain, plain=plain, citations=citations))
    return ParsedAnswer(sentences=tuple(built), parser="test")


A = _answer(("Stephen Crane was born in Newark.", [POB, DOB]), ("He wrote novels.", [None, JOB]))
B = _answer(("He played baseball.", [SPORT]))
C = _answer(("He liked the sea.", [None]))
YES = {("He wrote novels.", "occupation: writer")}


def _many(answers, nli, **kw) -> list[AnswerAlignment | None]:
    return asyncio.run(score_alignment_many_async(answers, nli, **kw))


def test_paper_mode_with_scripted_nli() -> None:
    fake = ScriptedAlignNLI(YES)
    result = asyncio.run(score_alignment_async(A, fake))
    # Pairs: (s0, Newark) no, (s0, 1871-11-01) no, (s1, writer) yes -> 1/3; [NA] is no pair.
    assert [(p.sentence_index, p.citation_index, p.entailed) for p in result.pairs] == [
        (0, 0, False),
        (0, 1, False),
        (1, 1, True),
    ]
    assert (result.aligned, result.total) == (1, 3)
    assert result.score == pytest.approx(1 / 3)
    assert {p.source for p in result.pairs} == {"scripted"}
    assert result.pairs[0].hypothesis == "place of birth: Newark"  # "relation: value"
    assert result.pairs[0].premise == "Stephen Crane was born in Newark."
    assert len(fake.calls) == 1 and len(fake.calls[0]) == 3  # one batched call per answer

    results = _many([A, B, C], ScriptedAlignNLI(YES))
    report = aggregate_alignment(results)
    # micro = (1 + 0) / (3 + 1) = 0.25; macro = mean(1/3, 0/1) = 1/6; C has no pair.
    assert report.alignment.micro == pytest.approx(0.25)
    assert report.alignment.macro == pytest.approx(1 / 6)
    assert report.alignment.n == 3 and report.alignment.n_excluded == 1
    assert report.cap is None and report.mode == "paper" and report.nli == "scripted"
    assert results[2] is not None and results[2].score is None
    assert results[2].unmeasured_reason == NO_PAIRS


def test_reference_mode_substring_shortcut() -> None:
    fake = ScriptedAlignNLI(YES)
    results = _many([A, B, C], fake, mode="reference")
    a, b, _ = results
    assert a is not None and b is not None
    # A: "newark" is a substring of the sentence -> aligned without NLI; 1871-11-01 is not and
    # NLI says no; "writer" is not in "He wrote novels." and NLI says yes -> 2/3.
    # B: "baseball" is in "He played baseball." -> 1/1.
    assert [(p.entailed, p.source) for p in a.pairs] == [
        (True, "substring"),
        (False, "scripted"),
        (True, "scripted"),
    ]
    assert (b.aligned, b.total) == (1, 1) and b.pairs[0].source == "substring"
    # Only the two pairs not settled by the shortcut reach the model, in one call.
    assert fake.calls == [
        [
            ("Stephen Crane was born in Newark.", "date_of_birth: 1871-11-01"),
            ("He wrote novels.", "occupation: writer"),
        ]
    ]
    report = aggregate_alignment(results)
    # micro = (2 + 1) / (3 + 1) = 0.75; macro = mean(2/3, 1) = 5/6.
    assert report.alignment.micro == pytest.approx(0.75)
    assert report.alignment.macro == pytest.approx(5 / 6)
    assert report.cap == REFERENCE_CAP == 400
    assert report.sources == {"scripted": 2, "substring": 2}


def test_paper_mode_with_the_lexical_matcher() -> None:
    results = _many([A, B, C], LexicalNLI())
    a, _, _ = results
    # A: Newark named -> yes; no date in s0 -> no; "writer" not in "He wrote novels." -> no: 1/3.
    # B: baseball named -> 1/1. micro = 2/4 = 0.5; macro = mean(1/3, 1) = 2/3.
    assert [p.entailed for p in a.pairs] == [True, False, False]
    assert [p.source for p in a.pairs] == ["lexical"] * 3
    report = aggregate_alignment(results)
    assert report.alignment.micro == pytest.approx(0.5)
    assert report.alignment.macro == pytest.approx(2 / 3)
    assert report.nli == "lexical"


def test_cascade_records_deciding_stage() -> None:
    results = _many([A, B], CascadeNLI(ScriptedAlignNLI(YES)))
    report = aggregate_alignment(results)
    # Lexical settles Newark and baseball; the model settles the date (no) and writer (yes).
    # micro = 3/4; macro = mean(2/3, 1) = 5/6.
    assert report.sources == {"lexical": 2, "scripted": 2}
    assert report.alignment.micro == pytest.approx(0.75)
    assert report.alignment.macro == pytest.approx(5 / 6)
    assert report.nli == "lexical+scripted"


def test_batching_across_answers_dedups_pairs() -> None:
    fake = ScriptedAlignNLI(YES)
    seen: list[tuple[int, int]] = []
    results = _many(
        [A, B, A, C], fake, batch_size=2, progress=lambda done, total: seen.append((done, total))
    )
    # Unique pairs: A's 3 and B's 1 = 4 (the second A adds none) -> calls of 2 and 2.
    assert [len(call) for call in fake.calls] == [2, 2]
    assert len({pair for call in fake.calls for pair in call}) == 4
    assert seen == [(2, 4), (4, 4)]
    assert results[0] == results[2]
    single = [asyncio.run(score_alignment_async(x, ScriptedAlignNLI(YES))) for x in (A, B, A, C)]
    assert results == single


def test_natural_hypothesis_style() -> None:
    fake = ScriptedAlignNLI({("He played baseball.", "CRANE sport baseball")})
    result = asyncio.run(score_alignment_async(A, fake, hypothesis="natural"))
    assert result.pairs[0].hypothesis == "Stephen Crane place of birth Newark"
    assert result.hypothesis_style == "natural"
    # No subject label: the id stands in.
    b = asyncio.run(score_alignment_async(B, fake, hypothesis="natural"))
    assert b.pairs[0].hypothesis == f"{CRANE} sport baseball"
    custom = asyncio.run(score_alignment_async(B, fake, hypothesis=lambda t: t.value.upper()))
    assert custom.pairs[0].hypothesis == "BASEBALL"


def test_reference_cap_and_skipped_answers() -> None:
    fake = ScriptedAlignNLI(set())
    good = _answer(("He played baseball.", [SPORT]))  # reference: substring -> 1/1
    bad = _answer(("He played.", [SPORT]))  # no substring, NLI no -> 0/1
    answers: list[ParsedAnswer | None] = [None, good, *([good] * 398), bad, bad, None]
    results = _many(answers, fake, mode="reference")
    assert results[0] is None and results[-1] is None
    report = aggregate_alignment(results)
    # The first 400 entries: 1 skipped (None) + 399 good answers -> micro = macro = 399/399 = 1.
    assert report.cap == 400 and report.n_given == 403
    assert report.alignment.micro == pytest.approx(1.0)
    assert report.alignment.n == 400 and report.alignment.n_unmeasured == 1
    # Without the cap: 399 aligned of 401 pairs; macro = 399/401 over 401 answers too.
    full = aggregate_alignment(results, cap=None)
    assert full.alignment.micro == pytest.approx(399 / 401)
    assert full.alignment.macro == pytest.approx(399 / 401)
    assert full.alignment.n_unmeasured == 2
    small = aggregate_alignment(results, cap=2)
    assert small.alignment.micro == pytest.approx(1.0) and small.alignment.n == 2
    # Paper mode is not capped by default.
    paper = _many([good] * 401 + [bad], ScriptedAlignNLI(set()))
    assert aggregate_alignment(paper).alignment.n == 402


def test_unmeasured_everything() -> None:
    report = aggregate_alignment(_many([C, None], LexicalNLI()))
    assert report.alignment.micro is None and report.alignment.macro is None
    assert NO_PAIRS in (report.alignment.reason or "")
    assert SKIPPED in (report.alignment.reason or "")
    empty = aggregate_alignment([], mode="reference")
    assert empty.mode == "reference" and empty.alignment.micro is None


def test_errors() -> None:
    with pytest.raises(ConfigError, match="mode"):
        _many([A], LexicalNLI(), mode="strict")
    with pytest.raises(ConfigError, match="batch_size"):
        _many([A], LexicalNLI(), batch_size=0)
    with pytest.raises(ModelError, match="2 verdicts for 3 pairs"):
        asyncio.run(score_alignment_async(A, ScriptedAlignNLI(YES, drop_last=True)))
    paper = _many([A], LexicalNLI())
    reference = _many([A], LexicalNLI(), mode="reference")
    with pytest.raises(ConfigError, match="mixed"):
        aggregate_alignment([*paper, *reference])
    with pytest.raises(ConfigError, match="mixed"):
        aggregate_alignment([*paper, *_many([A], ScriptedAlignNLI(YES))])


def test_the_plain_name_is_blocking_and_raises_inside_a_running_loop() -> None:
    # A with the scripted model: 1 of 3 pairs entailed (as in the paper-mode test above).
    blocking_result = score_alignment(A, ScriptedAlignNLI(YES))
    assert (blocking_result.aligned, blocking_result.total) == (1, 3)

    async def old_code() -> AnswerAlignment:
        with pytest.raises(RuntimeError, match="await its \\*_async form"):
            score_alignment(A, ScriptedAlignNLI(YES))
        return await score_alignment_async(A, ScriptedAlignNLI(YES))

    assert asyncio.run(old_code()) == blocking_result
