"""Under ``--citations constrained`` no triple is cited twice in one answer and no bracket lists
a fact twice: in decoding for local models (the mock decodes like one), removed after the reply
for servers, recorded either way. Every expected text below is worked out by hand from the
decoding rules of ``decode_under`` (a byte the grammar refuses inside a citation: the grammar's
forced bytes, else ``]``, then the script resumes after its own ``]``)."""

from __future__ import annotations

import asyncio

import pytest

from _kg_helpers import subgraph
from citegraph.kalma.constrain import (
    ONCE_AFTER_REPLY,
    ONCE_IN_DECODING,
    CitationChoices,
    CitationConstraint,
    OncePerAnswer,
    citation_grammar,
    drop_repeats,
)
from citegraph.kalma.generate import generate_answer_async
from citegraph.kalma.parse import parse_answer
from citegraph.models import Generation, MockChat
from citegraph.models.grammar import grammar_accepts
from citegraph.models.grammar._llg import LiveMatcher, byte_tokenizer, compile_grammar

pytestmark = pytest.mark.needs("llguidance")

ADA = subgraph("Q1", "Ada", ("place of birth", "Rome"), ("occupation", "painter"))
BOB = subgraph("Q2", "Bob", ("occupation", "engineer"))
GRAPHS = [ADA, BOB]


def _keys(text: str) -> list[tuple[str, str, str]]:
    return [c.triple.key for c in parse_answer(text, GRAPHS).kg_citations if c.triple]


def _mock(script: str) -> tuple[str, dict[str, object]]:
    answer = asyncio.run(
        generate_answer_async("Who?", GRAPHS, MockChat(script), citations="constrained")
    )
    assert answer.error is None and answer.constraint is not None
    return answer.text, answer.constraint


def test_the_mock_cannot_cite_a_fact_again_in_a_later_bracket() -> None:
    text, record = _mock(
        "Born in Rome [Q1, place of birth: Rome]. Born in Rome again [Q1, place of birth: Rome]."
        " A painter [Q1, occupation: painter]."
    )
    # the second Rome: after "[Q1, " only "occupation: painter" is left of Q1, forced, then
    # "]" (allowed, and taken before ", Q2"); the third citation: Q1 has nothing left, so after
    # "[Q" the "1" is refused and the only citation left, Bob's, is forced
    assert text == (
        "Born in Rome [Q1, place of birth: Rome]. Born in Rome again [Q1, occupation: painter]."
        " A painter [Q2, occupation: engineer]."
    )
    assert len(_keys(text)) == len(set(_keys(text))) == 3
    assert record["each_fact_once"] == ONCE_IN_DECODING and record["repeats_removed"] == 0


def test_the_mock_cannot_list_a_fact_twice_in_one_bracket() -> None:
    text, record = _mock(
        "A painter [Q1, occupation: painter, occupation: painter]. "
        "Both [Q2, occupation: engineer, Q2, occupation: engineer]."
    )
    # after "occupation: painter" no later fact of Q1 is left: ", " is allowed only before the
    # other entity, so the script's second "occupation" is refused and "Q2, occupation:
    # engineer]" is forced; then Q1's painter and Q2's engineer are used, so of "[Q2, ..." the
    # "2" is refused and Q1's last fact is forced
    assert text == (
        "A painter [Q1, occupation: painter, Q2, occupation: engineer]. "
        "Both [Q1, place of birth: Rome]."
    )
    assert len(_keys(text)) == len(set(_keys(text))) == 3
    assert record["repeats_removed"] == 0


def test_the_updated_grammar_refuses_a_repeat_the_fixed_forms_allow() -> None:
    grammar = citation_grammar(CitationChoices(GRAPHS))
    repeat = "Rome [Q1, place of birth: Rome]. Rome [Q1, place of birth: Rome]."
    other = "Rome [Q1, place of birth: Rome]. Painter [Q1, occupation: painter]."
    assert grammar_accepts(grammar, other)
    assert not grammar_accepts(grammar, repeat)
    fixed = grammar.model_copy(update={"update": None})  # what a server receives
    assert grammar_accepts(fixed, repeat)
    for within in ("X [Q1, occupation: painter, occupation: painter].",
                   "X [Q1, occupation: painter, place of birth: Rome].",  # not the prompt's order
                   "X [Q2, occupation: engineer, Q2, occupation: engineer]."):  # fmt: skip
        assert not grammar_accepts(fixed, within), within


def test_the_update_leaves_out_used_facts_and_is_named_in_the_digest() -> None:
    choices = CitationChoices(GRAPHS)
    once = OncePerAnswer(choices)
    assert once("Text [Q1, place of birth: Ro") is None  # a citation is open
    assert once("Nothing cited yet [NA]") is None
    lark = once("Rome [Q1, place of birth: Rome].")
    assert lark is not None and "place of birth" not in lark.split("\nTEXT:")[-1]
    assert "occupation: painter" in lark and "occupation: engineer" in lark
    grammar = citation_grammar(choices)
    assert grammar.digest() != grammar.model_copy(update={"update": None}).digest()
    matcher = compile_grammar(byte_tokenizer(), grammar)
    assert isinstance(matcher, LiveMatcher)
    for byte in b"Rome [Q1, place of birth: Rome]. Rome [NA]":
        assert matcher.consume_token(byte)
    assert (matcher.updates, matcher.refused) == (2, 0)  # after each "]"


def test_drop_repeats_rewrites_or_removes_brackets_by_hand() -> None:
    choices = CitationChoices(GRAPHS)
    text = (
        "X [Q1, place of birth: Rome]. Y [Q1, place of birth: Rome, occupation: painter]. "
        "Z [Q1, occupation: painter] [NA]. W [Q2, occupation: engineer, Q1, occupation: painter]."
    )
    assert drop_repeats(text, choices) == (
        "X [Q1, place of birth: Rome]. Y [Q1, occupation: painter]. "
        "Z [NA]. W [Q2, occupation: engineer].",
        3,
    )
    assert drop_repeats("A [NA]. B [NA].", choices) == ("A [NA]. B [NA].", 0)


@pytest.mark.parametrize("mode", ["vllm-grammar", "gbnf"])
def test_a_server_reply_with_repeats_is_recorded_without_them(mode: str) -> None:
    choices = CitationChoices(GRAPHS)
    constraint = CitationConstraint(choices, citation_grammar(choices), mode)  # type: ignore[arg-type]
    reply = "Rome [Q1, place of birth: Rome]. Rome [Q1, place of birth: Rome]. Why [NA]."
    generation = Generation(text=reply, model="m", finish_reason="stop", raw={"grammar_mode": mode})
    text, record = constraint.finish(generation)
    assert text == "Rome [Q1, place of birth: Rome]. Rome. Why [NA]."
    assert record["each_fact_once"] == ONCE_AFTER_REPLY and record["repeats_removed"] == 1


def test_a_json_reply_with_repeats_is_rendered_without_them() -> None:
    choices = CitationChoices(GRAPHS)
    constraint = CitationConstraint(choices, citation_grammar(choices), "json-schema")
    reply = (
        '{"sentences": [{"text": "Rome.", "citations": ["Q1, place of birth: Rome", '
        '"Q1, place of birth: Rome"]}, {"text": "Painter", "citations": '
        '["Q1, place of birth: Rome", "Q1, occupation: painter"]}]}'
    )
    generation = Generation(
        text=reply, model="m", finish_reason="stop", raw={"grammar_mode": "json-schema"}
    )
    text, record = constraint.finish(generation)
    # rendered: "Rome [Q1, place of birth: Rome, place of birth: Rome]. Painter [Q1, place of
    # birth: Rome, occupation: painter]." then the 2 repeats of Rome removed
    assert text == "Rome [Q1, place of birth: Rome]. Painter [Q1, occupation: painter]."
    assert record["repeats_removed"] == 2
