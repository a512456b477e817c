"""The answer prompt (Table 13) and the KG flattening, checked against hand-written strings."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma.generate._prompt import (
    build_messages,
    flatten_graph_paper,
    flatten_kg,
    flatten_kg_reference,
)
from citegraph.kg import Subgraph

CRANE = Subgraph.from_entity_dict(
    {
        "name": "Stephen Crane",
        "place of birth": "Newark",
        "movement": "literary realism",
        "qid": "Q206534",
    }
)
OBRIEN = Subgraph.from_entity_dict(
    {"name": "Conan O'Brien", "occupation": "comedian", "qid": "Q311084"}
)


def test_paper_flattening_is_table13_style() -> None:
    assert flatten_graph_paper(CRANE) == (
        "{name: Stephen Crane, place of birth: Newark, movement: literary realism, qid: Q206534}"
    )
    assert flatten_kg([CRANE, OBRIEN]).count("\n") == 1


def test_reference_flattening_keeps_the_authors_quote_artefacts() -> None:
    # str() of a dict whose value holds an apostrophe uses double quotes for that value, which
    # the authors' four replacements do not undo (paper Table 19 shows such mixed quotes).
    # By hand: str() gives [{'name': "Conan O'Brien", 'occupation': 'comedian', 'qid': 'Q311084'}];
    # "{'" -> "{" leaves "name':" (its closing quote is followed by ': "', not ": '").
    text = flatten_kg_reference([OBRIEN.as_dict()])
    assert text == "[{name': \"Conan O'Brien\", 'occupation: comedian, qid: Q311084}]"
    assert flatten_kg_reference([{"name": "A B", "qid": "Q1"}]) == "[{name: A B, qid: Q1}]"


def test_table13_messages() -> None:
    messages = build_messages("Who was Stephen Crane?", [CRANE])
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0].content.startswith("You answer the question based on your knowledge")
    assert messages[0].content.endswith(
        "Use [NA] for claims that need annotation but is unprovided."
    )
    demo_user = messages[1].content
    assert demo_user.startswith("Considering the information:\n{name: Orazio Gentileschi,")
    assert demo_user.endswith("in a male-dominated field?")
    assert "[NA]" in messages[2].content
    assert messages[2].content.startswith("Artemisia Gentileschi was an Italian painter born on")
    assert messages[3].content == (
        "Considering the information:\n"
        "{name: Stephen Crane, place of birth: Newark, movement: literary realism, qid: Q206534}\n"
        "Who was Stephen Crane?"
    )


def test_code_messages_use_the_split_demo() -> None:
    general = build_messages("Q?", [CRANE], version="kalma-code-v1", split="general")
    specific = build_messages("Q?", [CRANE], version="kalma-code-v1", split="specific")
    assert general[1].content.endswith(
        ", Who was Artemisia Gentileschi, when was she born, and what influences shaped her "
        "artistic style?"
    )
    assert specific[1].content.startswith("Considering the information: [{name: Orazio")
    assert general[2].content == specific[2].content  # one demo answer in the release
    assert specific[3].content == (
        "Considering the information: [{name: Stephen Crane, place of birth: Newark, "
        "movement: literary realism, qid: Q206534}], Q?"
    )


def test_unknown_version() -> None:
    with pytest.raises(ConfigError, match="kalma-table13-v1"):
        build_messages("Q?", [CRANE], version="v9")


MARIE = Subgraph.from_entity_dict(
    {"name": "Marie Curie", "spouse": "Pierre Curie", "qid": "http://example.org/kg/MarieCurie"}
)


def test_iri_ids_are_shown_by_their_short_id() -> None:
    # A KG entity carries its short id (from the RDF file's prefixes): the prompt shows it.
    center = MARIE.center.model_copy(update={"short_id": "ex:MarieCurie"})
    marie = MARIE.model_copy(update={"center": center})
    assert (
        flatten_graph_paper(marie)
        == "{name: Marie Curie, spouse: Pierre Curie, qid: ex:MarieCurie}"
    )
    assert flatten_kg([marie], "kalma-code-v1") == (
        "[{name: Marie Curie, spouse: Pierre Curie, qid: ex:MarieCurie}]"
    )
    # A graph read from a dataset file has none: the compact local name among the prompt's
    # centres is shown (the paper parser computes the same one to read it back). QIDs as ever.
    assert flatten_kg([MARIE, CRANE]) == (
        "{name: Marie Curie, spouse: Pierre Curie, qid: MarieCurie}\n" + flatten_graph_paper(CRANE)
    )
    user = build_messages("Who was Marie Curie's spouse?", [MARIE])[-1].content
    assert "qid: MarieCurie}" in user and "http://" not in user
