"""Facts the grammar engine cannot take are left out of the citable choices and listed in the
record (issue 37, items 5 and 11).

- A fact whose citation is longer than :data:`MAX_CITABLE_CHARS`: the engine's work per token
  inside a fact grows with what is left of it, so citing a 30 kB literal took 7.9 s and a
  100 kB one 126 s (quadratic). Left out, the grammar is exactly the grammar without it, so the
  work no longer depends on the value's length at all.
- A fact holding a lone surrogate (a KG value read from a SPARQL endpoint's JSON, a user's own
  graphs): llguidance's ``grammar_from_lark`` raised ``UnicodeEncodeError``; the OpenAI SDK and
  tokenizers fail on the prompt the same way. The grammar leaves the fact out, the prompt shows
  U+FFFD.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from _kg_helpers import subgraph
from citegraph.errors import ModelError
from citegraph.kalma.constrain import MAX_CITABLE_CHARS, CitationChoices, citation_grammar
from citegraph.kalma.generate import build_messages, generate_answer_async
from citegraph.kalma.parse import parse_answer
from citegraph.kg import Subgraph
from citegraph.models import Grammar, MockChat
from citegraph.models.grammar import grammar_accepts

SHORT = ("place of birth", "London")


def _graphs(*facts: tuple[str, str]) -> tuple[Subgraph, ...]:
    return (subgraph("Q1", "Ada", SHORT, *facts),)


def _reasons(choices: CitationChoices) -> list[str]:
    return [reason for _, reason in choices.dropped]


def test_a_fact_at_the_cap_is_citable_and_one_character_more_is_left_out() -> None:
    room = MAX_CITABLE_CHARS - len("Q1, note: ")
    at_cap = CitationChoices(_graphs(("note", "x" * room)))
    assert at_cap.size == 2 and not at_cap.dropped
    over = CitationChoices(_graphs(("note", "x" * (room + 1))))
    assert over.size == 1
    assert _reasons(over) == [
        f"its citation is longer than {MAX_CITABLE_CHARS:,} characters, the cap of a fact"
    ]
    assert over.left_out_why() == {_reasons(over)[0]: 1}


@pytest.mark.needs("llguidance")
@pytest.mark.parametrize("length", [10_000, 100_000, 1_000_000])
def test_the_grammar_of_a_long_value_is_the_grammar_without_it(length: int) -> None:
    """Counted, not timed: what the engine is given does not grow with the value."""
    base = citation_grammar(CitationChoices(_graphs()))
    grammar = citation_grammar(CitationChoices(_graphs(("note", "x" * length))))
    assert grammar.lark == base.lark and grammar.gbnf == base.gbnf
    assert grammar.json_schema == base.json_schema
    assert grammar_accepts(grammar, "Ada was born in London [Q1, place of birth: London].")


@pytest.mark.needs("llguidance")
def test_a_constrained_answer_over_a_100_kb_literal_is_fast_and_lists_it() -> None:
    """The issue's repro: the mock (decoding under the grammar byte by byte, as a model would)
    wants to cite the 100 kB literal. It took two minutes and more; the fact is now no choice,
    so the citation goes to the grammar's own choice and the record says why."""
    long = "y" * 100_000
    graphs = _graphs(("note", long))
    script = f"Ada wrote a note [Q1, note: {long}]. She was born in London [Q1, place of birth: "
    script += "London]."
    started = time.perf_counter()
    answer = asyncio.run(
        generate_answer_async("Who?", graphs, MockChat(script), citations="constrained")
    )
    seconds = time.perf_counter() - started
    assert answer.error is None, answer.error
    assert seconds < 30, seconds  # very loose: a few tenths of a second here, 126 s before
    assert long not in answer.text
    parsed = parse_answer(answer.text, graphs)
    assert all(s.citations for s in parsed.sentences) and not parsed.issues
    assert answer.constraint is not None
    assert answer.constraint["citable_facts"] == 1 and answer.constraint["facts_left_out"] == 1
    assert answer.constraint["facts_left_out_why"] == {
        f"its citation is longer than {MAX_CITABLE_CHARS:,} characters, the cap of a fact": 1
    }


def test_grammar_text_grows_linearly_with_the_facts_at_the_cap() -> None:
    """Counted: n facts at the cap give a grammar of about n times one fact's size (the forms
    are linear in the facts, and no fact is longer than the cap)."""
    room = MAX_CITABLE_CHARS - len("Q1, r00: ")
    sizes = {}
    for n in (1, 4, 16):
        facts = [(f"r{k:02d}", chr(ord("a") + k) * room) for k in range(n)]
        lark = citation_grammar(CitationChoices(_graphs(*facts))).lark
        sizes[n] = len(lark)
    per_fact = sizes[4] - sizes[1]
    assert sizes[16] - sizes[4] <= 4 * per_fact * 1.1
    assert sizes[16] <= 16 * (MAX_CITABLE_CHARS + 2_000)


@pytest.mark.needs("llguidance")
def test_a_fact_holding_a_lone_surrogate_is_left_out_and_the_prompt_shows_u_fffd() -> None:
    graphs = (
        subgraph("Q1", "Ada", SHORT, ("spouse", "Anne\ud800"), ("note\udfff", "x")),
        subgraph("Q2\ud800", "Bob", ("occupation", "engineer")),
    )
    choices = CitationChoices(graphs)
    why = "a lone surrogate (text UTF-8 cannot encode) in the entity id, relation or value"
    assert choices.left_out_why() == {why: 3}
    assert [e.facts for e in choices.entities] == [("place of birth: London",)]
    grammar = citation_grammar(choices)
    for form in (grammar.lark, grammar.gbnf, str(grammar.json_schema)):
        form.encode("utf-8")  # raised UnicodeEncodeError in llguidance before
    assert grammar_accepts(grammar, "Ada was born in London [Q1, place of birth: London].")
    messages = build_messages("Who was Ada\udfff?", graphs)
    for message in messages:
        message.content.encode("utf-8")
    assert "Anne\ufffd" in messages[-1].content and "Ada\ufffd?" in messages[-1].content


@pytest.mark.needs("llguidance")
def test_a_constrained_mock_answer_over_graphs_holding_surrogates() -> None:
    graphs = _graphs(("spouse", "Anne\ud800"))
    script = (
        "Ada married Anne [Q1, spouse: Anne\ufffd]. Born in London [Q1, place of birth: London]."
    )
    answer = asyncio.run(
        generate_answer_async("Who?", graphs, MockChat(script), citations="constrained")
    )
    assert answer.error is None, answer.error
    assert answer.constraint is not None and answer.constraint["facts_left_out"] == 1
    assert "[Q1, place of birth: London]" in answer.text


@pytest.mark.needs("llguidance")
def test_a_grammar_holding_a_lone_surrogate_is_a_model_error() -> None:
    grammar = Grammar(name="bad", lark='start: "a\ud800"', gbnf='root ::= "a"')
    with pytest.raises(ModelError, match=r"'bad' cannot be compiled: .* lone surrogate"):
        grammar_accepts(grammar, "a")
