"""``render_json_answer``: a strict-JSON-schema reply (OpenAI, Ollama) written as KaLMA text.

The replies are written by hand; each expected answer was worked out from the rules in the
function's docstring, then read back with the paper parser.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from _kg_helpers import subgraph
from citegraph.errors import ResponseFormatError
from citegraph.kalma.constrain import (
    CitationChoices,
    CitationConstraint,
    citation_grammar,
    render_json_answer,
)
from citegraph.kalma.parse import parse_answer
from citegraph.models import Generation
from citegraph.models.chat import Usage

GRAPHS = (
    subgraph(
        "Q7259",
        "Ada Lovelace",
        ("occupation", "mathematician"),
        ("place of birth", "London"),
        ("father", "Lord Byron"),
    ),
    subgraph("Q46633", "Charles Babbage", ("occupation", "engineer")),
)
CHOICES = CitationChoices(GRAPHS)


def _reply(*sentences: tuple[str, list[str]]) -> str:
    return json.dumps({"sentences": [{"text": t, "citations": c} for t, c in sentences]})


def test_consecutive_facts_of_one_entity_share_a_bracket() -> None:
    reply = _reply(
        (
            "Ada Lovelace, born in London, was a mathematician.",
            ["Q7259, place of birth: London", "Q7259, occupation: mathematician"],
        )
    )
    text = render_json_answer(reply, CHOICES)
    assert text == (
        "Ada Lovelace, born in London, was a mathematician "
        "[Q7259, place of birth: London, occupation: mathematician]."
    )
    [sentence] = parse_answer(text, GRAPHS).sentences
    assert [(c.triple.relation, c.triple.value) for c in sentence.citations if c.triple] == [
        ("place of birth", "London"),
        ("occupation", "mathematician"),
    ]


def test_another_entity_or_na_between_facts_starts_a_new_bracket() -> None:
    reply = _reply(
        (
            "Ada worked with Babbage",
            [
                "Q7259, occupation: mathematician",
                "Q46633, occupation: engineer",
                "Q7259, father: Lord Byron",
                "NA",
                "Q7259, place of birth: London",
            ],
        )
    )
    assert render_json_answer(reply, CHOICES) == (
        "Ada worked with Babbage [Q7259, occupation: mathematician] "
        "[Q46633, occupation: engineer] [Q7259, father: Lord Byron] [NA] "
        "[Q7259, place of birth: London]."
    )


def test_na_alone_and_sentences_joined() -> None:
    reply = _reply(
        ("Ada wrote the first program.", ["NA"]),
        ("Her father was Lord Byron!", ["Q7259, father: Lord Byron"]),
        ("Was Babbage an engineer?", ["Q46633, occupation: engineer"]),
    )
    text = render_json_answer(reply, CHOICES)
    assert text == (
        "Ada wrote the first program [NA]. Her father was Lord Byron [Q7259, father: Lord Byron]! "
        "Was Babbage an engineer [Q46633, occupation: engineer]?"
    )
    parsed = parse_answer(text, GRAPHS)
    assert [len(s.citations) for s in parsed.sentences] == [1, 1, 1]
    assert parsed.sentences[0].citations[0].kind == "na"
    assert not parsed.issues


def test_final_punctuation_stays_last_and_a_missing_one_is_added() -> None:
    reply = _reply(
        ("Really?!  ", ["NA"]),
        ("  Ada was a mathematician", ["Q7259, occupation: mathematician"]),
        ("Ada", ["NA", "NA"]),
    )
    text = render_json_answer(reply, CHOICES)
    assert text == (
        "Really [NA]?! Ada was a mathematician [Q7259, occupation: mathematician]. Ada [NA] [NA]."
    )
    # without the added "." the parser would read the last two JSON sentences as one
    assert len(parse_answer(text, GRAPHS).sentences) == 3


def test_brackets_in_text_become_parentheses() -> None:
    reply = _reply(("Ada [the Enchantress of Numbers] met Babbage [1].", ["NA"]))
    text = render_json_answer(reply, CHOICES)
    assert text == "Ada (the Enchantress of Numbers) met Babbage (1) [NA]."
    assert [c.bracket for c in parse_answer(text, GRAPHS).citations] == ["[NA]"]


def test_sentences_without_text_or_citations() -> None:
    assert render_json_answer(_reply(("", ["NA"])), CHOICES) == "[NA]."
    assert render_json_answer('{"sentences": []}', CHOICES) == ""
    # a sentence citing nothing breaks the schema's minItems (issue 37: tests/kalma/constrain/
    # test_json_answer_sentences.py)
    for text in ("Ada.", " . "):
        with pytest.raises(ResponseFormatError, match="sentence 1 cites nothing"):
            render_json_answer(_reply((text, [])), CHOICES)


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("Ada was a mathematician [NA].", "not the JSON the schema asks for"),
        ('{"answer": "Ada"}', "not the JSON the schema asks for"),
        ('{"sentences": [{"text": "Ada"}]}', "not the JSON the schema asks for"),
        ('{"sentences": 3}', "not the JSON the schema asks for"),
        ('["Ada"]', "not the JSON the schema asks for"),
        (_reply(("Ada", ["Q7259, occupation: engineer"])), "'Q7259, occupation: engineer'"),
        (_reply(("Ada", ["Q7259"])), "cites 'Q7259', not a choice"),
    ],
)
def test_replies_outside_the_schema_are_refused_with_the_reason(reply: str, says: str) -> None:
    with pytest.raises(ResponseFormatError, match=says.replace("[", r"\[")):
        render_json_answer(reply, CHOICES)


def test_every_schema_choice_renders_to_its_own_triple() -> None:
    schema: dict[str, Any] = citation_grammar(CHOICES).json_schema or {}
    sentence = schema["properties"]["sentences"]["items"]
    enum = sentence["properties"]["citations"]["items"]["enum"]
    assert enum == [
        "Q7259, occupation: mathematician",
        "Q7259, place of birth: London",
        "Q7259, father: Lord Byron",
        "Q46633, occupation: engineer",
        "NA",
    ]
    for choice in enum[:-1]:
        text = render_json_answer(_reply(("A fact", [choice])), CHOICES)
        [citation] = parse_answer(text, GRAPHS).citations
        assert citation.triple is not None
        assert (
            f"{citation.triple.subject}, {citation.triple.relation}: {citation.triple.value}"
            == (choice)
        )


def test_the_schema_admits_the_replies_rendered_here_and_no_other_citation() -> None:
    """The strict schema run as a recogniser (llguidance's JSON-schema engine, byte by byte):
    the enum, the bracket-free text and at least one citation per sentence are enforced, so a
    server that keeps to it never sends a reply ``render_json_answer`` refuses."""
    llg = pytest.importorskip("llguidance")
    from citegraph.models.grammar._llg import byte_tokenizer

    schema = citation_grammar(CHOICES).json_schema
    matcher = llg.LLMatcher(
        byte_tokenizer(), llg.LLMatcher.grammar_from_json_schema(schema), log_level=0
    )
    assert not matcher.is_error(), matcher.get_error()

    def admits(reply: str) -> bool:
        matcher.reset()
        tokens = list(reply.encode("utf-8"))
        return matcher.try_consume_tokens(tokens) == len(tokens) and matcher.is_accepting()

    good = _reply(
        ("Ada was a mathematician.", ["Q7259, occupation: mathematician", "NA"]),
        ("Babbage", ["Q46633, occupation: engineer"]),
    )
    assert admits(good) and admits('{"sentences": []}')
    assert render_json_answer(good, CHOICES) == (
        "Ada was a mathematician [Q7259, occupation: mathematician] [NA]. "
        "Babbage [Q46633, occupation: engineer]."
    )
    assert not admits(_reply(("Ada", ["Q7259, occupation: engineer"])))  # not a choice
    assert not admits(_reply(("Ada [1]", ["NA"])))  # a bracket in the text
    assert not admits(_reply(("Ada", [])))  # no citation
    assert not admits('{"sentences": [], "note": "x"}')  # no other property


def test_a_json_reply_cut_by_max_tokens_says_so() -> None:
    grammar = citation_grammar(CHOICES)
    constraint = CitationConstraint(CHOICES, grammar, "json-schema")
    whole = _reply(("Ada was a mathematician", ["Q7259, occupation: mathematician"]))
    cut = whole[:40]

    def generation(text: str, finish: str) -> Generation:
        return Generation(
            text=text,
            model="m",
            finish_reason=finish,
            usage=Usage(completion_tokens=12),
            raw={"grammar_mode": "json-schema"},
        )

    with pytest.raises(ResponseFormatError, match="cut by max_tokens after 12 tokens"):
        constraint.finish(generation(cut, "length"))
    with pytest.raises(ResponseFormatError) as plain:
        constraint.finish(generation(cut, "stop"))
    assert "max_tokens" not in str(plain.value)
    text, _ = constraint.finish(generation(whole, "length"))
    assert text == "Ada was a mathematician [Q7259, occupation: mathematician]."
