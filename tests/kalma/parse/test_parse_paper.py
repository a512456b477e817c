"""The paper parser on the authors' demonstrations, every citation format, and garbled input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from citegraph.kalma import ParsedAnswer, parse_answer
from citegraph.kalma.parse import PAPER_PARSER
from citegraph.kg import Entity, Subgraph, Triple

NA = "NA"  # marker used in the expected lists below for an [NA] citation


def cites(parsed: ParsedAnswer) -> list[list[tuple[str, str, str] | str]]:
    """Per sentence, the citations as triple keys, with "NA" for [NA]."""
    return [
        [c.triple.key if c.triple is not None else NA for c in s.citations]
        for s in parsed.sentences
    ]


def keys(parsed: ParsedAnswer) -> list[tuple[str, str, str]]:
    return [c.triple.key for c in parsed.kg_citations if c.triple is not None]


def reasons(parsed: ParsedAnswer) -> list[tuple[str, str]]:
    return [(i.bracket, i.reason) for i in parsed.issues]


@pytest.fixture(scope="module")
def demo(data_dir: Path) -> tuple[str, list[Subgraph]]:
    _, answer, entities = json.loads(
        (data_dir / "biokalma/prompts/answer_question_simple_prompt.json").read_text()
    )
    return answer, [Subgraph.from_entity_dict(e) for e in entities]


# The demonstration answer of the authors' prompt file, read by hand, sentence by sentence.
A, OG = "Q212657", "Q367360"  # Artemisia and Orazio Gentileschi
DEMO_CITES: list[list[tuple[str, str, str] | str]] = [
    [
        (A, "name", "Artemisia Gentileschi"),
        (A, "place of birth", "Rome"),
        (A, "date_of_birth", "1596-07-08"),
        (A, "father", "Orazio Gentileschi"),
        (OG, "name", "Orazio Gentileschi"),
        (OG, "occupation", "painter"),
    ],
    [(A, "depicted by", "Artemisia")],  # "[Q212657, Artemisia Gentileschi, depicted by: ...]"
    [(OG, "movement", "mannerism")],
    [(A, "movement", "Caravaggisti")],
    [(A, "student of", "Orazio Gentileschi")],
    [NA, NA],
]


@pytest.mark.parametrize(
    "name", ["answer_question_simple_prompt.json", "answer_question_complex_prompt.json"]
)
def test_demo_answers_of_the_prompt_files(data_dir: Path, name: str) -> None:
    _, answer, entities = json.loads((data_dir / "biokalma/prompts" / name).read_text())
    graphs = [Subgraph.from_entity_dict(e) for e in entities]
    for parsed in (parse_answer(answer), parse_answer(answer, graphs)):
        assert parsed.parser == PAPER_PARSER
        assert cites(parsed) == DEMO_CITES
        assert parsed.issues == ()
        s = parsed.sentences
        assert s[1].plain == (
            'Her life and work were later depicted in the film "Artemisia", which brought her '
            "story to a wider audience."
        )
        assert s[5].plain.endswith(
            "prominent Baroque painter can be seen in her highly "
            "naturalistic portrayal of figures, dramatic scenes and the "
            "use of chiaroscuro technique."
        )
    # the demonstration cites two facts its knowledge leaves out on purpose (Artemisia has no
    # date_of_birth and Orazio no occupation in the prompt's dicts); the others are all there
    with_graphs = parse_answer(answer, graphs)
    facts = {t for g in graphs for t in g}
    assert [k for k in keys(with_graphs) if Triple.from_list(k) not in facts] == [
        (A, "date_of_birth", "1596-07-08"),
        (OG, "occupation", "painter"),
    ]
    # the entity name without a colon is the subject label, not a fact
    depicted = with_graphs.sentences[1].citations[0]
    assert depicted.triple is not None and depicted.triple.subject_label == "Artemisia Gentileschi"
    assert depicted.bracket == "[Q212657, Artemisia Gentileschi, depicted by: Artemisia]"
    assert answer[depicted.start : depicted.start + len(depicted.bracket)] == depicted.bracket


def test_extend_prompt_bracket_and_paragraph(data_dir: Path) -> None:
    first, second, bracket = json.loads(
        (data_dir / "biokalma/prompts/extend_prompt.json").read_text()
    )
    assert keys(parse_answer(bracket)) == [(A, "notable works", "Judith Slaying Holofernes")]
    parsed = parse_answer(second)
    assert len(parsed.sentences) == 2
    assert cites(parsed)[1] == [(A, "notable works", "Judith Slaying Holofernes")]
    assert keys(parse_answer(first)) == [k for k in DEMO_CITES[0] if k != NA]


# Paper Table 13 (Appendix D): the demonstration answer, with "qid"-less brackets and [NA].
TABLE_13 = (
    "Artemisia Gentileschi was an Italian painter born on July 8, 1596 [NA] in Rome [Q212657, "
    "ethnic group: Italians, occupation: painter, place of birth: Rome]. She was a member of the "
    "Accademia delle Arti del Disegno and is best known for her work Judith Slaying Holofernes "
    "[Q212657, member of: Accademia delle Arti del Disegno, notable works: Judith Slaying "
    "Holofernes]. She was the eldest child of the Tuscan painter Orazio Gentileschi [Q212657, "
    "father: Orazio Gentileschi]. Orazio Gentileschi was an Italian painter [NA] born in 1563 and "
    "died in 1639 [Q367360, ethnic group: Italians, date of birth: 1563-07-19, date of death: "
    "1639-02-07]. He was born in Pisa and died in London [Q367360, place of death: London]. "
    "Orazio’s influence on Artemisia’s development as a prominent Baroque [NA] painter can be "
    "seen in her highly naturalistic portrayal of figures, dramatic scenes and the use of "
    "chiaroscuro technique [NA]. He also provided her with the opportunity to study with him and "
    "learn from his experience and expertise. She became an important second-generation "
    "proponent of Caravaggio’s dramatic realism [Q212657, movement: Caravaggisti]."
)
TABLE_13_CITES: list[list[tuple[str, str, str] | str]] = [
    [
        NA,
        (A, "ethnic group", "Italians"),
        (A, "occupation", "painter"),
        (A, "place of birth", "Rome"),
    ],
    [
        (A, "member of", "Accademia delle Arti del Disegno"),
        (A, "notable works", "Judith Slaying Holofernes"),
    ],
    [(A, "father", "Orazio Gentileschi")],
    [
        NA,
        (OG, "ethnic group", "Italians"),
        (OG, "date of birth", "1563-07-19"),
        (OG, "date of death", "1639-02-07"),
    ],
    [(OG, "place of death", "London")],
    [NA, NA],
    [],
    [(A, "movement", "Caravaggisti")],
]


def test_table_13_demonstration() -> None:
    parsed = parse_answer(TABLE_13)
    assert cites(parsed) == TABLE_13_CITES
    assert parsed.sentences[0].plain == (
        "Artemisia Gentileschi was an Italian painter born on July 8, 1596 in Rome."
    )
    assert parsed.sentences[0].has_na and not parsed.sentences[6].citations
    assert parsed.issues == ()


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # several facts per bracket, values with commas (paper Table 19 / 20 style)
        (
            "Crane was born in Newark [Q206534, place of birth: Newark, place of death: "
            "Badenweiler, described by source: Great Soviet Encyclopedia (1969–1978)].",
            [
                [
                    ("Q206534", "place of birth", "Newark"),
                    ("Q206534", "place of death", "Badenweiler"),
                    ("Q206534", "described by source", "Great Soviet Encyclopedia (1969–1978)"),
                ]
            ],
        ),
        (
            "He worked in Washington, D.C. [Q44690, work location: Washington, D.C., name: Lincoln "
            "Chafee].",
            [
                [
                    ("Q44690", "work location", "Washington, D.C."),
                    ("Q44690", "name", "Lincoln Chafee"),
                ]
            ],
        ),
        # qid: prefix, name as a fact
        (
            "Artemisia [qid: Q212657, name: Artemisia Gentileschi, father: Orazio Gentileschi] "
            "lived.",
            [[(A, "name", "Artemisia Gentileschi"), (A, "father", "Orazio Gentileschi")]],
        ),
        # NA variants, and NA inside a multi-fact bracket
        (
            "A [ NA ]. B [N/A]. C [na]. D [Q1, place of birth: Newark, NA, sport: baseball].",
            [
                [NA],
                [NA],
                [NA],
                [("Q1", "place of birth", "Newark"), NA, ("Q1", "sport", "baseball")],
            ],
        ),
        # stray whitespace, no space after commas/colons, a semicolon between facts, lower-case q
        (
            "X [  q206534 ,place   of birth :Newark ;  sport:  baseball  ].",
            [[("Q206534", "place of birth", "Newark"), ("Q206534", "sport", "baseball")]],
        ),
        # two subjects in one bracket; a QID followed by a colon
        (
            "X [Q1, a: b, Q2, Some Name, c: d] [Q3: e: f].",
            [[("Q1", "a", "b"), ("Q2", "c", "d"), ("Q3", "e", "f")]],
        ),
        # a nested bracket in a real BioKaLMA value
        (
            "Her mother [Q272303, mother: [Ann] Sarah Kingsbury] was Irish.",
            [[("Q272303", "mother", "[Ann] Sarah Kingsbury")]],
        ),
        # a bracket over a line break
        ("He [Q1, place of birth:\n Newark] was.", [[("Q1", "place of birth", "Newark")]]),
    ],
)
def test_formats(answer: str, expected: list[list[tuple[str, str, str] | str]]) -> None:
    parsed = parse_answer(answer)
    assert cites(parsed) == expected
    assert parsed.issues == ()


def test_label_and_name_give_subject_label() -> None:
    parsed = parse_answer(
        "X [Q1, Eduardo Cansino, Sr., occupation: dancer] [Q2, name: B, sport: c]."
    )
    labels = [c.triple.subject_label for c in parsed.kg_citations if c.triple is not None]
    # the label may contain a comma; "name: B" labels the other facts of its subject
    assert labels == ["Eduardo Cansino, Sr.", "B", "B"]


def test_issues_are_recorded_never_raised() -> None:
    answer = (
        "A [1]. B [citation needed]. C []. D [Q5]. E [Q1, Stephen Crane]. F [Q1, a:]. G [Q2, b: c"
    )
    parsed = parse_answer(answer)
    assert keys(parsed) == []
    assert reasons(parsed) == [
        ("[1]", "not a citation: no QID, no 'relation: value' and no NA"),
        ("[citation needed]", "not a citation: no QID, no 'relation: value' and no NA"),
        ("[]", "empty bracket"),
        ("[Q5]", "a QID without any 'relation: value'"),
        ("[Q1, Stephen Crane]", "a QID without any 'relation: value'"),
        ("[Q1, a:]", "empty relation or value in 'a:'"),
        ("[Q2, b: c", "unclosed bracket: no ']' after this '['"),
    ]
    # every bracket is removed from the plain text except the unclosed one
    assert [s.plain for s in parsed.sentences] == [
        "A.",
        "B.",
        "C.",
        "D.",
        "E.",
        "F.",
        "G [Q2, b: c",
    ]
    assert all(answer[i.start : i.start + len(i.bracket)] == i.bracket for i in parsed.issues)


# The BioKaLMA values that contain ": " (15 entity dicts of complex_question_graph.json).
def colon_values(data_dir: Path) -> list[tuple[dict[str, str], list[Subgraph], str, str]]:
    data = json.loads((data_dir / "biokalma/complex_question_graph.json").read_text())
    out: list[tuple[dict[str, str], list[Subgraph], str, str]] = []
    for _, entities in data:
        graphs = [Subgraph.from_entity_dict(e) for e in entities]
        for e in entities:
            out.extend((e, graphs, k, v) for k, v in e.items() if ": " in v)
    return out


def test_values_with_colon_space_are_read_whole(data_dir: Path) -> None:
    found = colon_values(data_dir)
    assert len(found) == 15
    for entity, graphs, relation, value in found:
        qid, name = entity["qid"], entity["name"]
        # before and after other facts, with and without a label, with and without graphs
        for bracket in (
            f"[{qid}, {relation}: {value}]",
            f"[{qid}, {name}, name: {name}, {relation}: {value}, qid: {qid}, name: {name}]",
            f"[qid: {qid}, {relation}: {value}, name: {name}]",
        ):
            for given in ((), graphs):
                got = keys(parse_answer(f"He is known {bracket}.", given))
                assert (qid, relation, value) in got, (bracket, got)
                assert len(got) == bracket.count(": ") - value.count(": ") - bracket.count(
                    "qid: "
                ), got


def test_graphs_settle_a_comma_inside_a_value() -> None:
    # a value with ", X: Y" (not in BioKaLMA, but legal): without graphs the default rule starts
    # a new fact at "John: A Life"; with the graph the whole value exists, so it is kept whole
    graph = Subgraph(
        center=Entity(id="Q9", name="Jo"),
        triples=(
            Triple(subject="Q9", relation="notable works", value="Smith, John: A Life"),
            Triple(subject="Q9", relation="place of birth", value="Newark"),
        ),
    )
    answer = "It [Q9, notable works: Smith, John: A Life, place of birth: Boston, nationality: US]."
    assert keys(parse_answer(answer)) == [
        ("Q9", "notable works", "Smith"),
        ("Q9", "John", "A Life"),
        ("Q9", "place of birth", "Boston"),
        ("Q9", "nationality", "US"),
    ]
    # with the graph: the value is whole; "nationality" (not a graph relation) still starts a
    # fact, because merging it into "Boston, nationality: US" matches nothing either (tie ->
    # the default rule)
    assert keys(parse_answer(answer, [graph])) == [
        ("Q9", "notable works", "Smith, John: A Life"),
        ("Q9", "place of birth", "Boston"),
        ("Q9", "nationality", "US"),
    ]


def test_whitespace_is_normalised_and_graph_spelling_wins(data_dir: Path) -> None:
    data = json.loads((data_dir / "biokalma/complex_question_graph.json").read_text())
    graphs = [Subgraph.from_entity_dict(e) for e in data[807][1]]
    assert ("Q177081", "spouse", "Cao  Shishu") in {t.key for g in graphs for t in g}
    answer = "Her husband [Q177081,  spouse:  Cao  Shishu ] died."
    assert keys(parse_answer(answer)) == [("Q177081", "spouse", "Cao Shishu")]
    assert keys(parse_answer(answer, graphs)) == [("Q177081", "spouse", "Cao  Shishu")]
    # case is kept: no match, no change
    assert keys(parse_answer("[Q177081, Spouse: cao shishu]", graphs)) == [
        ("Q177081", "Spouse", "cao shishu")
    ]


def test_bracket_without_qid_resolved_among_graphs(demo: tuple[str, list[Subgraph]]) -> None:
    _, graphs = demo
    answer = (
        "Born in Rome [place of birth: Rome]. Orazio [Orazio Gentileschi, movement: mannerism]. "
        "She [Artemisia Gentileschi, nationality: Italian]. Both spoke [languages spoken: Italian]."
    )
    parsed = parse_answer(answer, graphs)
    # "place of birth: Rome" is only Artemisia's; the label names Orazio / Artemisia; "languages
    # spoken: Italian" is held by both graphs, so no unique subject
    assert cites(parsed) == [
        [(A, "place of birth", "Rome")],
        [(OG, "movement", "mannerism")],
        [(A, "nationality", "Italian")],
        [],
    ]
    assert reasons(parsed) == [
        (
            "[languages spoken: Italian]",
            "no QID, and the subject could not be resolved (no unique subject among the graphs)",
        )
    ]
    unresolved = parse_answer("Born in Rome [place of birth: Rome].")
    assert keys(unresolved) == []
    assert reasons(unresolved) == [
        (
            "[place of birth: Rome]",
            "no QID, and the subject could not be resolved (no graphs were given)",
        )
    ]


def garbled(rng: random.Random, text: str) -> str:
    alphabet = "[]:,;. NAQqid0123/\n\t'\"?!…"
    chars = list(text)
    for _ in range(rng.randint(1, 12)):
        op = rng.random()
        pos = rng.randint(0, len(chars))
        if op < 0.4 and chars:
            del chars[pos : pos + rng.randint(1, 8)]
        elif op < 0.8:
            chars[pos:pos] = rng.choices(alphabet, k=rng.randint(1, 4))
        else:
            chars[pos:pos] = chars[pos : pos + rng.randint(1, 30)]
    return "".join(chars)


def check_invariants(answer: str, parsed: ParsedAnswer) -> None:
    cursor = 0
    for sentence in parsed.sentences:
        at = answer.find(sentence.text, cursor)
        assert at >= 0 and sentence.text.strip() == sentence.text != ""
        for c in sentence.citations:
            assert answer[c.start : c.start + len(c.bracket)] == c.bracket
            assert at <= c.start and c.start + len(c.bracket) <= at + len(sentence.text)
            assert (c.kind == "kg") == (c.triple is not None)
        cursor = at + len(sentence.text)
    for issue in parsed.issues:
        assert answer[issue.start : issue.start + len(issue.bracket)] == issue.bracket


def test_fuzz_never_raises(demo: tuple[str, list[Subgraph]]) -> None:
    answer, graphs = demo
    rng = random.Random(20231010)
    samples = [garbled(rng, rng.choice([answer, TABLE_13])) for _ in range(300)]
    samples += ["".join(rng.choices("[]:, NAQ1.\n", k=rng.randint(0, 60))) for _ in range(300)]
    samples += ["[" * 2000, "]" * 50 + "[" * 50, "[Q1, " + "a: b, " * 500 + "]", ":" * 100]
    for text in samples:
        for given in ((), graphs):
            parsed = parse_answer(text, given)
            check_invariants(text, parsed)
