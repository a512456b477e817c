"""KaLMA text quality (G-Eval judge): prompts, messages, score parsing, judging, aggregation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from citegraph.errors import ClientError, ConfigError, ServerError
from citegraph.kalma.score._text_quality import (
    CRITERIA,
    DEFAULTED,
    EMPTY_REPLY,
    JUDGE_FAILED,
    KEPT_OUT_OF_RANGE,
    NO_SCORE,
    NON_INTEGER,
    OUT_OF_RANGE,
    CriterionScore,
    TextQuality,
    aggregate_text_quality,
    geval_prompt,
    judge_messages,
    judge_text_quality_async,
    parse_score,
    reference_subset,
)
from citegraph.models.chat._types import ChatRequest, Generation

FLUENCY = (
    "You will be given one question and answer. Your task is to rate the answer on one metric. "
    "Please make sure you read and understand these instructions carefully. Please keep this "
    "document open while reviewing, and refer to it as needed. \n"
    "Evaluation Criteria:\n"
    "Fluency (1-5) - the answer should be written in fluent language. The answer should use "
    "appropriate vocabulary, grammar, and sentence structures that enable readers or listeners "
    "to comprehend the content effortlessly.\n"
    "Evaluation Steps:\n"
    "1. Read the question carefully.\n"
    "2. Read the answer and check if the language in the answer is fluent.\n"
    "3. Assign a score for fluency on a scale of 1 to 5, where 1 is the lowest and 5 is the "
    "highest based on the Evaluation Criteria."
)


class ScriptedJudge:
    """A ChatModel that answers per criterion (read off the system prompt) from a table."""

    name = "scripted/judge"
    endpoint = "memory://judge"

    def __init__(self, replies: dict[str, str | Exception]) -> None:
        self.replies = replies
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> Generation:
        self.requests.append(request)
        system = request.messages[0].content
        criterion = next(c for c in CRITERIA if f"{c.capitalize()} (1-5)" in system)
        reply = self.replies[criterion]
        if isinstance(reply, Exception):
            raise reply
        return Generation(text=reply, model="judge")

    async def aclose(self) -> None:
        return None


# ---------------------------------------------------------------- prompts and messages


def test_prompts_are_the_papers_tables_verbatim() -> None:
    assert geval_prompt("fluency") == FLUENCY
    for criterion in CRITERIA:
        text = geval_prompt(criterion)
        assert f"Evaluation Criteria:\n{criterion.capitalize()} (1-5) - " in text
        assert text.endswith("5 is the highest based on the Evaluation Criteria.")


def test_prompts_equal_the_authors_file(data_dir: Path) -> None:
    authors = json.loads(
        (data_dir / "biokalma" / "prompts" / "gpteval_prompt.json").read_text("utf-8")
    )
    assert [geval_prompt(c) for c in CRITERIA] == authors


def test_paper_messages() -> None:
    answer = "Her mother was Sarah [Q1, mother: [Ann] Sarah]. She painted [NA]."
    msgs = judge_messages("Who?", "{name: A, qid: Q1}", answer, "fluency")
    assert [m.role for m in msgs] == ["system", "user"]
    assert msgs[0].content == FLUENCY + " Response is only one integer."
    assert msgs[1].content == (
        "Question: Who?\nKnowledge: {name: A, qid: Q1}\nAnswer: Her mother was Sarah. She painted."
    )


def test_reference_messages_keep_the_authors_bugs() -> None:
    answer = "Her mother was Sarah [Q1, mother: [Ann] Sarah]. She painted [NA]."
    msgs = judge_messages("Who?", "[{name: A, qid: Q1}]", answer, "fluency", mode="reference")
    assert msgs[0].content == FLUENCY + "Response is only one integer."
    assert msgs[0].content.endswith("Evaluation Criteria.Response is only one integer.")
    # Literal "/n"; their non-greedy regex stops at the nested bracket's "]".
    assert msgs[1].content == (
        "Question: Who?/nKnowledge: [{name: A, qid: Q1}]/nAnswer: "
        "Her mother was Sarah Sarah]. She painted."
    )


def test_unknown_criterion_or_mode() -> None:
    with pytest.raises(ConfigError):
        judge_messages("q", "kg", "a", "brevity")
    with pytest.raises(ConfigError):
        judge_messages("q", "kg", "a", "fluency", mode="exact")  # type: ignore[arg-type]


# ---------------------------------------------------------------- score parsing

PAPER_TABLE = [
    ("4", 4, None),
    (" 5\n", 5, None),
    ("Score: 4", 4, None),
    ("4/5", 4, None),
    ("4 / 5", 4, None),
    ("I'd rate it 4 out of 5", 4, None),
    ("Coherence (1-5): 3", 3, None),
    ("On a scale of 1 to 5, I give it a 2.", 2, None),
    ("4. The answer is clear.", 4, None),
    ("**5**", 5, None),
    ("Rating:1", 1, None),
    ("4.0", 4, None),
    ("GPT-4 would say 3", 3, None),
    ("3.5", None, NON_INTEGER),
    ("Score: 3.5/5", None, NON_INTEGER),
    ("", None, EMPTY_REPLY),
    ("   ", None, EMPTY_REPLY),
    ("I cannot rate this answer.", None, NO_SCORE),
    ("four", None, NO_SCORE),
    ("5th", None, NO_SCORE),
    ("4-5", None, NO_SCORE),
    ("4,5", None, NO_SCORE),
    ("6", None, OUT_OF_RANGE),
    ("0", None, OUT_OF_RANGE),
    ("10/10", None, OUT_OF_RANGE),
    ("Born in 1593; score 4", None, OUT_OF_RANGE),
]


@pytest.mark.parametrize(("reply", "score", "reason"), PAPER_TABLE)
def test_paper_parsing(reply: str, score: int | None, reason: str | None) -> None:
    parsed = parse_score(reply)
    assert (parsed.score, parsed.reason, parsed.defaulted) == (score, reason, False)


REFERENCE_TABLE = [
    ("4", 4, None, False),
    ("Score: 4", 4, None, False),
    ("4/5", 4, None, False),
    ("Coherence (1-5): 3", 1, None, False),  # first digits: the "1" of "1-5"
    ("3.5", 3, None, False),
    ("7", 7, KEPT_OUT_OF_RANGE, False),  # failed assert leaves 7 in place
    ("0", 0, None, False),  # passes their assert (<= 5)
    ("", 3, DEFAULTED, True),
    ("none", 3, DEFAULTED, True),
    # 21 characters: only the last 10 (" out of 5.") are read.
    ("I rate it 4 out of 5.", 5, None, False),
    # Longer than 20, score at the start: last 10 characters have no digit -> default 3.
    ("4. The answer is very clear.", 3, DEFAULTED, True),
    # Exactly 20 characters: read whole.
    ("The score is 4 of 5.", 4, None, False),
    ("My final score: 12", 12, KEPT_OUT_OF_RANGE, False),
]


@pytest.mark.parametrize(("reply", "score", "reason", "defaulted"), REFERENCE_TABLE)
def test_reference_parsing(reply: str, score: int, reason: str | None, defaulted: bool) -> None:
    parsed = parse_score(reply, mode="reference")
    assert (parsed.score, parsed.reason, parsed.defaulted) == (score, reason, defaulted)


def test_reference_table_lengths_are_as_commented() -> None:
    assert len("I rate it 4 out of 5.") == 21
    assert len("The score is 4 of 5.") == 20


# ---------------------------------------------------------------- judging


def test_judge_all_criteria_in_paper_mode() -> None:
    judge = ScriptedJudge(
        {"coherence": "4", "consistency": "Score: 5", "fluency": "3.5", "relevance": "none"}
    )
    tq = asyncio.run(judge_text_quality_async("Who?", "{kg}", "Text [Q1, a: b].", judge))
    assert tq.mode == "paper" and tq.prompt_version == "kalma-geval-v1"
    assert tq.judge == "scripted/judge"
    assert list(tq.scores) == list(CRITERIA)
    assert [s.score for s in tq.scores.values()] == [4, 5, None, None]
    assert tq.scores["fluency"].reason == NON_INTEGER
    assert tq.scores["fluency"].reply == "3.5"
    assert tq.scores["relevance"].reason == NO_SCORE
    assert len(judge.requests) == 4
    for request in judge.requests:
        assert request.config.temperature == 0.0
        assert request.config.max_tokens <= 64
        assert request.messages[1].content == "Question: Who?\nKnowledge: {kg}\nAnswer: Text."


def test_judge_a_subset_in_reference_mode() -> None:
    judge = ScriptedJudge({"fluency": "The fluency is great, really.", "relevance": "9"})
    tq = asyncio.run(
        judge_text_quality_async(
            "Who?", "{kg}", "Text.", judge, mode="reference", criteria=["relevance", "fluency"]
        )
    )
    assert list(tq.scores) == ["relevance", "fluency"]
    assert tq.scores["relevance"].score == 9
    assert tq.scores["fluency"].score == 3 and tq.scores["fluency"].defaulted
    assert judge.requests[0].messages[1].content == "Question: Who?/nKnowledge: {kg}/nAnswer: Text."


def test_failed_judge_call_is_unmeasured_or_the_authors_default() -> None:
    replies: dict[str, str | Exception] = {"coherence": ServerError("boom", status=503)}
    paper = asyncio.run(
        judge_text_quality_async("q", "kg", "a", ScriptedJudge(replies), criteria=["coherence"])
    )
    verdict = paper.scores["coherence"]
    assert verdict.score is None and verdict.reply == ""
    assert verdict.reason == f"{JUDGE_FAILED}: ServerError"
    reference = asyncio.run(
        judge_text_quality_async(
            "q", "kg", "a", ScriptedJudge(replies), mode="reference", criteria=["coherence"]
        )
    )
    assert reference.scores["coherence"].score == 3
    assert reference.scores["coherence"].defaulted


def test_client_errors_propagate() -> None:
    judge = ScriptedJudge({"coherence": ClientError("bad key", status=401)})
    with pytest.raises(ClientError):
        asyncio.run(judge_text_quality_async("q", "kg", "a", judge, criteria=["coherence"]))


def test_unknown_criterion_is_rejected_before_any_call() -> None:
    judge = ScriptedJudge({})
    with pytest.raises(ConfigError):
        asyncio.run(judge_text_quality_async("q", "kg", "a", judge, criteria=["coherence", "wit"]))
    assert judge.requests == []


# ---------------------------------------------------------------- aggregation


def tq(mode: str, **scores: tuple[int | None, str | None, bool]) -> TextQuality:
    return TextQuality(
        mode=mode,
        prompt_version="kalma-geval-v1",
        judge="j",
        scores={
            c: CriterionScore(criterion=c, score=s, reply="r", reason=why, defaulted=d)
            for c, (s, why, d) in scores.items()
        },
    )


def test_aggregate_paper_mode() -> None:
    results = [
        tq("paper", coherence=(4, None, False), fluency=(5, None, False)),
        tq("paper", coherence=(5, None, False), fluency=(None, NO_SCORE, False)),
        tq("paper", coherence=(None, NO_SCORE, False), fluency=(None, OUT_OF_RANGE, False)),
        tq("paper", coherence=(None, NO_SCORE, False)),
    ]
    summary = aggregate_text_quality(results)
    coh = summary["coherence"]
    assert coh.mean == pytest.approx(4.5)  # (4 + 5) / 2
    assert coh.std == pytest.approx(0.5**0.5)  # sample std of {4, 5}
    assert (coh.n, coh.n_measured, coh.n_unmeasured) == (4, 2, 2)
    assert coh.unmeasured_reasons == {NO_SCORE: 2}
    assert coh.n_defaulted is None and coh.n_out_of_range is None
    flu = summary["fluency"]
    assert flu.mean == 5.0 and flu.std is None
    assert (flu.n, flu.n_measured, flu.n_unmeasured) == (3, 1, 2)
    assert flu.unmeasured_reasons == {NO_SCORE: 1, OUT_OF_RANGE: 1}
    assert set(summary) == {"coherence", "fluency"}


def test_aggregate_reference_mode_counts_defaults_and_out_of_range() -> None:
    results = [
        tq("reference", relevance=(3, DEFAULTED, True)),
        tq("reference", relevance=(7, KEPT_OUT_OF_RANGE, False)),
        tq("reference", relevance=(4, None, False)),
        tq("reference", relevance=(5, None, False)),
    ]
    rel = aggregate_text_quality(results)["relevance"]
    assert rel.mean == pytest.approx(19 / 4)  # (3 + 7 + 4 + 5) / 4, defaults included
    assert (rel.n, rel.n_measured, rel.n_unmeasured) == (4, 4, 0)
    assert rel.n_defaulted == 1 and rel.n_out_of_range == 1
    assert rel.mode == "reference"


def test_aggregate_rejects_mixed_modes_and_handles_empty() -> None:
    with pytest.raises(ConfigError):
        aggregate_text_quality(
            [tq("paper", coherence=(4, None, False)), tq("reference", coherence=(4, None, False))]
        )
    assert aggregate_text_quality([]) == {}


# ---------------------------------------------------------------- sample selection


def test_reference_subset_is_the_first_n_with_a_graph() -> None:
    ids = ["a", "b", "c", "d", "e", "f"]
    flags = [False, True, True, False, True, True]
    assert reference_subset(ids, flags, n=3) == ["b", "c", "e"]
    assert reference_subset(ids, flags) == ["b", "c", "e", "f"]
    assert reference_subset(ids, lambda i: i in {"f", "a"}, n=1) == ["a"]
    with pytest.raises(ConfigError):
        reference_subset(ids, flags[:-1])
    with pytest.raises(ConfigError):
        reference_subset(ids, flags, n=-1)
