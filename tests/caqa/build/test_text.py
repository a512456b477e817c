"""CAQA text (§4.2.3): the deterministic templates and the LLM textualiser of Tables 8-10."""

from __future__ import annotations

import asyncio

import pytest

from citegraph.caqa import Fact, LogicalQuery
from citegraph.caqa.build._text import (
    TEMPLATE_VERSION,
    answer_statement,
    extend_question,
    join_names,
    question_from_query,
    relation_text,
    verbalise_facts,
)
from citegraph.caqa.build._textualisers import (
    BUILD_PROMPT_VERSION,
    EmptyTextError,
    LLMTextualiser,
    TemplateTextualiser,
    Textualiser,
    build_prompts,
    clean_reply,
    render_logical_form,
    render_subgraph,
)
from citegraph.caqa.queries import QueryEdge, path_query, single, union_query
from citegraph.errors import ConfigError, DataError, ModelError, ServerError
from citegraph.models import MockChat

# CoDEx-S ids and labels (Wikidata).
LABELS = {
    "Q96": "Mexico",
    "Q16": "Canada",
    "Q49": "North America",
    "Q1860": "English",
    "Q150": "French",
    "Q1489": "Mexico City",
    "Q30": "United States of America",
    "Q5588": "Frida Kahlo",
    "Q41264": "Europe",
    "P30": "continent",
    "P37": "official language",
    "P36": "capital",
    "P17": "country",
    "P27": "country of citizenship",
    "P361": "part of",
    "P47": "shares border with",
}


def edge(s: str, r: str, o: str) -> QueryEdge:
    return QueryEdge(subject=s, relation=r, object=o)


def query(*edges: tuple[str, str, str], operator: str = "and", **kw: object) -> LogicalQuery:
    return LogicalQuery(edges=tuple(edge(*e) for e in edges), operator=operator, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- citations
def test_verbalise_one_sentence_per_subject_relation_group() -> None:
    facts = [
        Fact.of("Q96", "P30", "Q49"),
        Fact.of("Q16", "P37", "Q1860"),
        Fact.of("Q16", "P37", "Q150"),
    ]
    assert verbalise_facts(facts, LABELS) == (
        "The continent of Mexico is North America. "
        "The official language of Canada is English and French."
    )


def test_verbalise_keeps_first_appearance_order_and_joins_three() -> None:
    facts = [
        Fact.of("Q16", "P47", "Q30"),
        Fact.of("Q96", "P37", "Q150"),
        Fact.of("Q16", "P47", "Q96"),
        Fact.of("Q96", "P37", "Q1860"),
        Fact.of("Q96", "P37", "Q1489"),
    ]
    assert verbalise_facts(facts, LABELS) == (
        "Canada shares border with United States of America and Mexico. "
        "The official language of Mexico is French, English and Mexico City."
    )


def test_verbalise_label_forms_and_fallbacks() -> None:
    labels = {
        "m.0yrltsn": "The Illusion",
        "theater.play.productions": "Productions",
        "TV": "TV Episodes",
        "x": "ludwig",
        "y": "maximilian",
        "R1303": "inverse of instrument",
        "Q6607": "guitar",
        "Q1": "St. Vincent",
    }
    facts = [
        Fact.of("m.0yrltsn", "theater.play.productions", "m.0yrlqjm"),  # object has no label
        Fact.of("x", "place_of_birth", "y"),  # PathQuestion relation id, no label
        Fact.of("x", "TV", "y"),
        Fact.of("Q96", "P361", "Q49"),  # label ends with a preposition
        Fact.of("Q6607", "R1303", "Q1"),  # "inverse of r" swaps the ends
        Fact.of("Q1", "film.film.directed_by", "y"),  # dotted id without label
    ]
    assert verbalise_facts(facts, LABELS | labels) == (
        "The productions of The Illusion is m.0yrlqjm. "
        "The place of birth of ludwig is maximilian. "
        "The TV episodes of ludwig is maximilian. "
        "Mexico is part of North America. "
        "The instrument of St. Vincent is guitar. "
        "St. Vincent is directed by maximilian."
    )
    assert verbalise_facts([], LABELS) == ""


def test_relation_text_and_join_names() -> None:
    assert relation_text("P27", LABELS) == "country of citizenship"
    assert relation_text("P9", {"P9": "Mass Units"}) == "mass units"
    assert relation_text("P9", {}) == "P9"
    assert relation_text("people.person.place_of_birth", {}) == "place of birth"
    assert join_names([]) == ""
    assert join_names(["A"]) == "A"
    assert join_names(["A", "B"]) == "A and B"
    assert join_names(["A", "B", "A", "C"], "or") == "A, B or C"


# ---------------------------------------------------------------------------- new questions
@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (single("Q96", "P30", "?a"), "What is the continent of Mexico?"),
        (single("?a", "P17", "Q96"), "What has Mexico as its country?"),
        (single("Q96", "P361", "?a"), "What is the entity that Mexico is part of?"),
        (single("?a", "P361", "Q49"), "What is part of North America?"),
        (single("?a", "P47", "Q96"), "What shares border with Mexico?"),
        (path_query("Q96", ["P36", "P17"]), "What is the country of the capital of Mexico?"),
        (
            path_query("Q96", ["P17", "P30"], inverse=[True, False]),
            "What is the continent of the entity whose country is Mexico?",
        ),
        (
            path_query("Q96", ["P36", "P17"], inverse=[False, True]),
            "What has the capital of Mexico as its country?",
        ),
        (
            query(("Q96", "P30", "?a"), ("Q16", "P37", "?a")),
            "What is the continent of Mexico and the official language of Canada?",
        ),
        (
            query(("?a", "P37", "Q150"), ("?a", "P30", "Q49")),
            "What has French as its official language and North America as its continent?",
        ),
        (
            query(("Q96", "P30", "?a"), ("?a", "P37", "Q150")),
            "What is the continent of Mexico and has French as its official language?",
        ),
        (
            query(("?a", "P37", "Q150"), ("Q96", "P30", "?a")),
            "What has French as its official language and is the continent of Mexico?",
        ),
        (
            query(("Q96", "P17", "?v"), ("Q16", "P17", "?v"), ("?v", "P30", "?a")),
            "What is the continent of the entity that is the country of Mexico and the "
            "country of Canada?",
        ),
        (union_query(["Q96", "Q96b"], "P30"), "What is the continent of Mexico?"),
        (union_query(["Q96", "Q16"], "P30"), "What is the continent of Mexico or Canada?"),
        (
            query(("?a", "P17", "Q96"), ("?a", "P17", "Q16"), operator="or"),
            "What has Mexico or Canada as its country?",
        ),
        (
            query(("Q96", "P36", "?a"), answer_types=("Q515",)),
            "Which city is the capital of Mexico?",
        ),
    ],
)
def test_question_from_query_shapes(q: LogicalQuery, expected: str) -> None:
    labels = LABELS | {"Q96b": "Mexico", "Q515": "City"}
    assert question_from_query(q, labels) == expected


# ---------------------------------------------------------------------------- extension
CAPITAL = single("Q96", "P36", "?a")
QUESTION = "What is the capital of Mexico?"


def extended_by(*edges: tuple[str, str, str]) -> LogicalQuery:
    return LogicalQuery(edges=(*CAPITAL.edges, *(edge(*e) for e in edges)))


def test_extend_question_none_and_union_keep_the_question() -> None:
    union = union_query(["Q96", "Q96b"], "P36")
    namesakes = {**LABELS, "Q96b": "Mexico"}
    assert extend_question(QUESTION, CAPITAL, CAPITAL, "none", (), LABELS) == QUESTION
    assert extend_question(QUESTION, CAPITAL, union, "union", (), namesakes) == QUESTION


def test_union_over_differently_named_subjects_names_them_all() -> None:
    union = union_query(["Q96", "Q16"], "P36")
    expected = "What is the capital of Mexico or Canada?"
    assert extend_question(QUESTION, CAPITAL, union, "union", (), LABELS) == expected
    unnamed = "Which capital is it?"
    assert (
        extend_question(unnamed, CAPITAL, union, "union", (), LABELS)
        == "Which capital is it (for Mexico or Canada)?"
    )


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (("?a", "P17", "Q16"), "What is the capital of Mexico, and whose country is Canada?"),
        (
            ("Q16", "P36", "?a"),
            "What is the capital of Mexico, and which is the capital of Canada?",
        ),
        (
            ("?a", "P361", "Q49"),
            "What is the capital of Mexico, and which is part of North America?",
        ),
        (
            ("?a", "P47", "Q30"),
            "What is the capital of Mexico, and which shares border with United States of America?",
        ),
    ],
)
def test_extend_question_branch(new: tuple[str, str, str], expected: str) -> None:
    added = [Fact.of(*(t if t != "?a" else "Q1489" for t in new))]
    out = extend_question(QUESTION, CAPITAL, extended_by(new), "intersection-branch", added, LABELS)
    assert out == expected


def test_extend_question_branch_on_table_9_example() -> None:
    labels = {
        "germanic": "germanic",
        "cur": "currency used",
        "ol": "official language",
        "eg": "East German",
    }
    original = single("?a", "ol", "germanic")
    extended = query(("?a", "ol", "germanic"), ("?a", "cur", "eg"))
    out = extend_question(
        "Which countries speak germanic languages?",
        original,
        extended,
        "intersection-branch",
        (),
        labels,
    )
    assert (
        out == "Which countries speak germanic languages, and whose currency used is East German?"
    )


@pytest.mark.parametrize(
    ("question", "new", "expected"),
    [
        # the subject entity is the attached fact's subject / object
        (
            QUESTION,
            ("Q96", "P30", "Q49"),
            "What is the capital of Mexico, whose continent is North America?",
        ),
        (
            QUESTION,
            ("Q5588", "P27", "Q96"),
            "What is the capital of Mexico, the country of citizenship of Frida Kahlo?",
        ),
        (
            QUESTION,
            ("Q96", "P361", "Q49"),
            "What is the capital of Mexico, which is part of North America?",
        ),
        # case-insensitive mention, in the middle of the question, with and without a comma
        (
            "which city is the capital of mexico today",
            ("Q96", "P30", "Q49"),
            "which city is the capital of mexico, whose continent is North America, today",
        ),
        (
            "which city is the capital of mexico, today?",
            ("Q96", "P30", "Q49"),
            "which city is the capital of mexico, whose continent is North America, today?",
        ),
        # not named (or only inside another word): a parenthetical clause
        (
            "Name the main square of the capital of the Aztec land?",
            ("Q5588", "P27", "Q96"),
            "Name the main square of the capital of the Aztec land (given that the country of "
            "citizenship of Frida Kahlo is Mexico)?",
        ),
        (
            "Where is Mexicon's capital",
            ("Q96", "P30", "Q49"),
            "Where is Mexicon's capital (given that the continent of Mexico is North America)?",
        ),
    ],
)
def test_extend_question_attach(question: str, new: tuple[str, str, str], expected: str) -> None:
    out = extend_question(
        question, CAPITAL, extended_by(new), "intersection-attach", [Fact.of(*new)], LABELS
    )
    assert out == expected


def test_extend_question_reads_added_when_the_queries_do_not_differ() -> None:
    out = extend_question(
        QUESTION, CAPITAL, CAPITAL, "intersection-attach", [Fact.of("Q96", "P30", "Q49")], LABELS
    )
    assert out == "What is the capital of Mexico, whose continent is North America?"


# ---------------------------------------------------------------------------- answers
def test_answer_statement_rephrases_simple_questions() -> None:
    assert (
        answer_statement("What is the continent of Mexico?", ["North America"])
        == "The continent of Mexico is North America."
    )
    assert (
        answer_statement("what is the capital of the country of Frida Kahlo", ["Mexico City"])
        == "The capital of the country of Frida Kahlo is Mexico City."
    )
    assert (
        answer_statement("Which city is the capital of Mexico?", ["Mexico City"])
        == "The capital of Mexico is Mexico City."
    )
    assert (
        answer_statement("What has Mexico as its country?", ["Mexico City"])
        == "Mexico City has Mexico as its country."
    )
    assert (
        answer_statement("What has Mexico as its country?", ["Mexico City", "Frida Kahlo"])
        == "Mexico City and Frida Kahlo have Mexico as their country."
    )


def test_answer_statement_falls_back_to_the_generic_form() -> None:
    question = "What is the capital of Mexico, whose continent is North America?"
    assert (
        answer_statement(question, ["Mexico City", "A", "B"])
        == f"The answer to '{question}' is Mexico City, A and B."
    )
    assert (
        answer_statement("Who painted The Two Fridas?", ["Frida Kahlo"])
        == "The answer to 'Who painted The Two Fridas?' is Frida Kahlo."
    )
    with pytest.raises(DataError):
        answer_statement(QUESTION, [])


def test_template_textualiser() -> None:
    t = TemplateTextualiser()
    assert isinstance(t, Textualiser)
    assert (t.name, t.version) == ("template", "caqa-template-v1") == ("template", TEMPLATE_VERSION)

    async def run() -> tuple[str, str, str, str]:
        return (
            await t.citation([Fact.of("Q96", "P30", "Q49")], LABELS),
            await t.question(QUESTION, CAPITAL, CAPITAL, "none", (), LABELS),
            await t.answer("What is the continent of Mexico?", ["North America"]),
            await t.new_question(single("Q96", "P30", "?a"), LABELS),
        )

    assert asyncio.run(run()) == (
        "The continent of Mexico is North America.",
        QUESTION,
        "The continent of Mexico is North America.",
        "What is the continent of Mexico?",
    )


# ---------------------------------------------------------------------------- LLM textualiser
T8_DEMO = (
    'Subgraph: [("Wii/DS NA", "type", "computer_game_region"), '
    '("LostWinds: Winter of the Melodias", "type", "game_version"), '
    '("LostWinds: Winter of the Melodias", "game_version.regions", "Wii/DS NA"), '
    '("LostWinds: Winter of the Melodias", "game_version.distributed_through", "WiiWare"), '
    '("Frontier Developments", "cvg_developer.game_versions_developed", '
    '"LostWinds: Winter of the Melodias")]'
)


def roles(model: MockChat, i: int = -1) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in model.requests[i].messages]


def test_llm_citation_sends_table_8_with_its_demo_at_t0() -> None:
    model = MockChat(["Sentences: The continent of Mexico is North America.\n It is big. "])
    t = LLMTextualiser(model)
    facts = [Fact.of("Q96", "P30", "Q49"), Fact.of("Q16", "P37", "Q150")]
    assert asyncio.run(t.citation(facts, LABELS)) == (
        "The continent of Mexico is North America. It is big."
    )
    assert roles(model) == [
        (
            "system",
            "Your task is to convert a specific subgraph from the knowledge graph into one or "
            "more coherent sentences that summarize the information encapsulated within the "
            "subgraph.",
        ),
        ("user", T8_DEMO),
        (
            "assistant",
            "LostWinds: Winter of the Melodias is a computer game with a specific version "
            "tailored for the Wii/DS NA region. This version is distributed through WiiWare. The "
            "game was developed by Frontier Developments, showcasing their involvement in "
            "creating various game versions.",
        ),
        (
            "user",
            'Subgraph: [("Mexico", "continent", "North America"), '
            '("Canada", "official language", "French")]',
        ),
    ]
    config = model.requests[0].config
    assert (config.temperature, config.seed, config.max_tokens) == (0.0, 0, 256)
    assert t.name == "llm:mock/mock:caqa-build-v1"
    assert t.version == BUILD_PROMPT_VERSION == "caqa-build-v1"


def test_llm_question_sends_table_9_and_cleans_the_reply() -> None:
    model = MockChat(
        [
            'Extended question: "What is the capital of Mexico, a country in North America?"\n'
            "This adds the continent."
        ]
    )
    t = LLMTextualiser(model, temperature=0.3, seed=7, max_tokens=64)
    extended = extended_by(("Q96", "P30", "Q49"))
    out = asyncio.run(t.question(QUESTION, CAPITAL, extended, "intersection-attach", (), LABELS))
    assert out == "What is the capital of Mexico, a country in North America?"
    assert roles(model) == [
        (
            "system",
            "Given an original question, its corresponding original logical form query, and an "
            "extended logical form query, your task is to generate an extended question. This "
            "involves expanding upon the original problem to align with the modifications made "
            "in the extended logical form query.",
        ),
        (
            "user",
            "Original question: Which countries speak germanic languages?\n"
            "Original logical form query: [(?x , country.official_language, germanic) .]\n"
            "Extended logical form query: [(?x , country.official_language, germanic) . "
            "(?x, country.currency_used, East German) .]",
        ),
        (
            "assistant",
            "Which countries speak Germanic languages and use East German as their official "
            "currency?",
        ),
        (
            "user",
            "Original question: What is the capital of Mexico?\n"
            "Original logical form query: [(Mexico, capital, ?a) .]\n"
            "Extended logical form query: [(Mexico, capital, ?a) . "
            "(Mexico, continent, North America) .]",
        ),
    ]
    config = model.requests[0].config
    assert (config.temperature, config.seed, config.max_tokens) == (0.3, 7, 64)


def test_llm_question_skips_the_model_without_intersection() -> None:
    model = MockChat([])
    t = LLMTextualiser(model)
    union = union_query(["Q96", "Q96b"], "P36")
    namesakes = {**LABELS, "Q96b": "Mexico"}
    assert asyncio.run(t.question(QUESTION, CAPITAL, union, "union", (), namesakes)) == QUESTION
    assert asyncio.run(t.question(QUESTION, CAPITAL, CAPITAL, "none", (), LABELS)) == QUESTION
    assert asyncio.run(t.citation([], LABELS)) == ""
    assert model.calls == 0


def test_llm_answer_sends_table_10() -> None:
    model = MockChat(["  Answer statement: The capital of Mexico is Mexico City.\nNote: easy"])
    t = LLMTextualiser(model)
    out = asyncio.run(t.answer(QUESTION, ["Mexico City", "Tenochtitlan", "CDMX"]))
    assert out == "The capital of Mexico is Mexico City."
    assert roles(model) == [
        (
            "system",
            "Your task is to convert a question along with its concise answer into a "
            "comprehensive answer statement.",
        ),
        (
            "user",
            "Question: What group fought in the Battle of Vicksburg that was based in "
            "Montgomery?\nAnswer: Army of Mississippi",
        ),
        (
            "assistant",
            "The group that fought in the Battle of Vicksburg and was based in Montgomery was "
            "the Army of Mississippi.",
        ),
        (
            "user",
            "Question: What is the capital of Mexico?\nAnswer: Mexico City, Tenochtitlan and CDMX",
        ),
    ]
    with pytest.raises(DataError):
        asyncio.run(t.answer(QUESTION, []))


def test_llm_new_question_uses_citegraphs_prompt() -> None:
    model = MockChat(["Question:\nWhich continent is Mexico in? Answer: North America"])
    t = LLMTextualiser(model)
    q = path_query("Q96", ["P36", "P17"])
    assert asyncio.run(t.new_question(q, LABELS)) == "Which continent is Mexico in?"
    sent = roles(model)
    assert sent[0][0] == "system" and "logical form query" in sent[0][1]
    assert sent[1] == (
        "user",
        "Logical form query: [(Frontier Developments, cvg_developer.game_versions_developed, "
        "?x) . (?x, game_version.distributed_through, ?a) .]\nAnswer variable: ?a",
    )
    assert sent[3] == (
        "user",
        "Logical form query: [(Mexico, capital, ?v1) . (?v1, country, ?a) .]\nAnswer variable: ?a",
    )


@pytest.mark.parametrize("reply", ["", "   \n ", "Sentences:", '""', "Sentences: ''"])
def test_llm_empty_reply_raises_a_model_error(reply: str) -> None:
    t = LLMTextualiser(MockChat([reply]))
    with pytest.raises(EmptyTextError) as info:
        asyncio.run(t.citation([Fact.of("Q96", "P30", "Q49")], LABELS))
    assert isinstance(info.value, ModelError)
    assert (info.value.step, info.value.reply) == ("citation", reply)


def test_llm_model_errors_propagate() -> None:
    t = LLMTextualiser(MockChat(["unused"], fail_times=1))
    with pytest.raises(ServerError):
        asyncio.run(t.answer(QUESTION, ["Mexico City"]))


def test_llm_unknown_prompt_version() -> None:
    with pytest.raises(ConfigError):
        LLMTextualiser(MockChat(), prompt_version="caqa-build-v0")


def test_clean_reply() -> None:
    assert clean_reply("**Extended question:** “Why?” more", keep="question") == "Why?"
    assert clean_reply("Answer: 'A is B.'\nB", keep="line") == "A is B."
    assert clean_reply("Is it? Yes.", keep="line") == "Is it? Yes."
    assert clean_reply("Sentences:\nOne.\n\nTwo.", keep="text") == "One. Two."
    assert clean_reply("Question: ", keep="question") == ""


def test_renderers_and_prompt_file() -> None:
    labels = {"a": 'The "Big" One', "r": "rel"}
    assert (
        render_subgraph([Fact.of("a", "r", "Q9")], labels) == '[("The \\"Big\\" One", "rel", "Q9")]'
    )
    union = union_query(["Q96", "Q16"], "P30")
    assert render_logical_form(union, LABELS) == (
        "[(Mexico, continent, ?a) . UNION (Canada, continent, ?a) .]"
    )
    typed = query(("Q96", "P36", "?a"), answer_types=("Q515",))
    assert render_logical_form(typed, {"Q515": "city"} | LABELS) == (
        "[(Mexico, capital, ?a) . (?a, type, city) .]"
    )
    prompts = build_prompts()
    assert {k: v["source"] for k, v in prompts.items() if k != "new_question"} == {
        "citation": "CAQA paper, Appendix A, Table 8",
        "question": "CAQA paper, Appendix A, Table 9",
        "answer": "CAQA paper, Appendix A, Table 10",
    }
    assert prompts["new_question"]["source"].startswith("citegraph's own")
    with pytest.raises(ConfigError):
        build_prompts("nope")
