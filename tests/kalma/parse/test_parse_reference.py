"""The reference parser reproduces the KaLMA authors' extract_citations and sentence split.

Expected outputs are derived by hand from the original algorithm (quoted in
citegraph.kalma.parse._reference): ``qid = c.split(',')[0][1:]``, ``items = c.split(": ")``,
property from ``rsplit(", ", 1)[1]`` ("" when it fails), middle values from
``rsplit(", ", 1)[0]``, the last value is ``items[-1][:-1]``.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from citegraph.kalma import ParsedAnswer, parse_answer
from citegraph.kalma.parse import REFERENCE_PARSER, parse_answer_reference
from citegraph.kalma.parse._reference import reference_sentences, reference_triples

# Shared expectations (the demo answers read by hand) live in test_parse_paper.py; tests/ has no
# __init__.py, so load that file by path.
_spec = importlib.util.spec_from_file_location(
    "_kalma_test_parse", Path(__file__).with_name("test_parse_paper.py")
)
assert _spec is not None and _spec.loader is not None
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)
DEMO_CITES, NA, TABLE_13, TABLE_13_CITES = (
    _shared.DEMO_CITES,
    _shared.NA,
    _shared.TABLE_13,
    _shared.TABLE_13_CITES,
)
cites, keys = _shared.cites, _shared.keys


def ref_keys(answer: str) -> list[tuple[str, str, str]]:
    return keys(parse_answer_reference(answer))


@pytest.mark.parametrize(
    ("bracket", "expected"),
    [
        # items: ["[Q1, place of birth", "Newark]"] -> property "place of birth", value "Newark"
        ("[Q1, place of birth: Newark]", [["Q1", "place of birth", "Newark"]]),
        # items: ["[qid", "Q1, name", "A, father", "B]"]; "[qid".rsplit(", ") fails -> property "",
        # so "Q1" is not emitted; then name: A, father: B; qid is "qid: Q1"
        ("[qid: Q1, name: A, father: B]", [["qid: Q1", "name", "A"], ["qid: Q1", "father", "B"]]),
        # no ", " before the first ": " -> property "" -> nothing; qid is "name: X]"
        ("[name: X]", []),
        ("[Q1,place of birth: Newark]", []),
        # the entity name is dropped by rsplit: property "movement"
        ("[Q1, Stephen Crane, movement: X]", [["Q1", "movement", "X"]]),
        # the NA inside a multi-fact bracket stays in the value (last item minus "]")
        ("[Q1, place of birth: Newark, NA]", [["Q1", "place of birth", "Newark, NA"]]),
        # values with ", " are read right thanks to rsplit
        (
            "[Q1, described by source: Great Soviet Encyclopedia (1969–1978), work location: "
            "Washington, D.C.]",
            [
                ["Q1", "described by source", "Great Soviet Encyclopedia (1969–1978)"],
                ["Q1", "work location", "Washington, D.C."],
            ],
        ),
        # a value with ": " is cut: items ["[Q240633, notable works", "The Moon", "Considered as
        # a Planet, a World, and a Satellite]"]; "The Moon" has no ", " -> property "" after it
        (
            "[Q240633, notable works: The Moon: Considered as a Planet, a World, and a Satellite]",
            [["Q240633", "notable works", "The Moon"]],
        ),
        # items ["[Q7259, described by source", "Forgotten Women", "The Scientists, sex or
        # gender", "female]"]: "The Scientists" is dropped (property ""), "sex or gender" is read
        (
            "[Q7259, described by source: Forgotten Women: The Scientists, sex or gender: female]",
            [
                ["Q7259", "described by source", "Forgotten Women"],
                ["Q7259", "sex or gender", "female"],
            ],
        ),
        # " : " also splits: the value keeps its trailing space
        (
            "[Q4940014, described by source: Vem är hon : kvinnor i Sverige : biografisk "
            "uppslagsbok]",
            [["Q4940014", "described by source", "Vem är hon "]],
        ),
        # no comma at all: qid is the whole bracket minus "[", property ""
        ("[NA ]", []),
        ("[1]", []),
    ],
)
def test_reference_triples_by_hand(bracket: str, expected: list[list[str]]) -> None:
    assert reference_triples(bracket) == expected


def test_na_is_the_exact_string_only() -> None:
    parsed = parse_answer_reference("A [NA]. B [ NA ]. C [N/A]. D [na]. E [Q1, a: b, NA].")
    assert [c.kind for c in parsed.citations] == ["na", "kg"]
    assert keys(parsed) == [("Q1", "a", "b, NA")]
    assert [i.bracket for i in parsed.issues] == ["[ NA ]", "[N/A]", "[na]"]
    # the paper parser reads four NA and splits the last bracket
    paper = parse_answer("A [NA]. B [ NA ]. C [N/A]. D [na]. E [Q1, a: b, NA].")
    assert cites(paper) == [[NA], [NA], [NA], [NA], [("Q1", "a", "b"), NA]]


def test_brackets_are_non_greedy_and_single_line() -> None:
    # re.findall(r'\[.*?\]') stops at the first "]": the nested value becomes "[Ann"
    answer = "Her mother [Q272303, mother: [Ann] Sarah Kingsbury] was Irish."
    parsed = parse_answer_reference(answer)
    assert keys(parsed) == [("Q272303", "mother", "[Ann")]
    assert parsed.sentences[0].plain == "Her mother Sarah Kingsbury] was Irish."
    assert keys(parse_answer(answer)) == [("Q272303", "mother", "[Ann] Sarah Kingsbury")]
    # '.' does not match a line break: the bracket is not found at all
    assert ref_keys("He [Q1, place of birth:\n Newark] was.") == []
    assert keys(parse_answer("He [Q1, place of birth:\n Newark] was.")) == [
        ("Q1", "place of birth", "Newark")
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # lookbehind (?<=[^A-Z].[.?]): " R." matches, "J." at the start has no 3rd char
        ("J. R. R. Tolkien wrote.", ["J. R.", "R.", "Tolkien wrote."]),
        # ".S." matches, so "U.S. He" splits (and so would "U.S. Army")
        ("Born in the U.S. He died.", ["Born in the U.S.", "He died."]),
        ("In the U.S. Army.", ["In the U.S.", "Army."]),
        # "[" is not [A-Z], and "01]" is not [^A-Z].[.?]: no split around the bracket
        (
            "He was born in 1871. [Q1, date of birth: 1871-11-01] He died.",
            ["He was born in 1871. [Q1, date of birth: 1871-11-01] He died."],
        ),
        # "?" splits, "!" does not
        ("A question? Yes! Right.", ["A question?", "Yes! Right."]),
        # "A]." fails [^A-Z]: a sentence ending in "[NA]." does not split from the next
        ("Baroque technique [NA]. He also. Then.", ["Baroque technique [NA]. He also.", "Then."]),
        ("", [""]),
    ],
)
def test_reference_sentence_split(answer: str, expected: list[str]) -> None:
    assert re.split(r"(?<=[^A-Z].[.?]) +(?=[A-Z])", answer) == expected  # the hand derivation
    assert [answer[a:b] for a, b in reference_sentences(answer)] == expected
    assert [s.text for s in parse_answer_reference(answer).sentences] == expected


def test_reference_plain_text() -> None:
    # re.sub removes brackets; "  " -> " " once; " ." -> "."
    parsed = parse_answer_reference(
        "Orazio Gentileschi [Q212657, father: Orazio Gentileschi] [Q367360, name: Orazio "
        'Gentileschi] and Prudenzia. The film "Artemisia" [Q212657, depicted by: Artemisia], '
        "which. Rome [Q1, a: b]."
    )
    assert [s.plain for s in parsed.sentences] == [
        # three spaces left after removal: one "  " -> " " replacement leaves two
        "Orazio Gentileschi  and Prudenzia.",
        'The film "Artemisia" , which.',
        "Rome.",
    ]


def test_bracket_cut_by_the_reference_split_is_reported() -> None:
    # a real BioKaLMA value: "7). H" matches the split regex inside the bracket
    answer = (
        "He is described [Q1, described by source: Pieter Cornelisz Hooft (1581-1647). High "
        "bailiff of Muiden, historian and poet] in books."
    )
    parsed = parse_answer_reference(answer)
    value = "Pieter Cornelisz Hooft (1581-1647). High bailiff of Muiden, historian and poet"
    assert cites(parsed) == [[("Q1", "described by source", value)], []]
    assert parsed.sentences[0].plain == (
        "He is described [Q1, described by source: Pieter Cornelisz Hooft (1581-1647)."
    )
    assert [i.reason for i in parsed.issues] == [
        "the reference sentence split cuts this bracket; eval_relevance.py would not read it"
    ]
    paper = parse_answer(answer)
    assert cites(paper) == [[("Q1", "described by source", value)]]
    assert paper.sentences[0].plain == "He is described in books."


def test_demo_answer_paper_vs_reference(data_dir: Path) -> None:
    _, answer, _ = json.loads(
        (data_dir / "biokalma/prompts/answer_question_simple_prompt.json").read_text()
    )
    ref = parse_answer_reference(answer)
    paper = parse_answer(answer)
    assert ref.parser == REFERENCE_PARSER
    # same citations and sentences on the authors' own demonstration ...
    assert cites(ref) == cites(paper) == DEMO_CITES
    # ... but the reference plain text keeps a space before the comma and a double space
    assert ref.sentences[1].plain == (
        'Her life and work were later depicted in the film "Artemisia" , which brought her story '
        "to a wider audience."
    )
    assert paper.sentences[1].plain == (
        'Her life and work were later depicted in the film "Artemisia", which brought her story '
        "to a wider audience."
    )
    assert "Orazio Gentileschi  and Prudenzia" in ref.sentences[0].plain
    assert "Orazio Gentileschi and Prudenzia" in paper.sentences[0].plain


def test_table_13_paper_vs_reference() -> None:
    ref = parse_answer_reference(TABLE_13)
    # the reference split does not cut after "technique [NA]." ("A]." fails [^A-Z].[.?]), so the
    # 6th and 7th sentences are one; the citations are the same
    expected = [*TABLE_13_CITES[:5], TABLE_13_CITES[5] + TABLE_13_CITES[6], TABLE_13_CITES[7]]
    assert cites(ref) == expected
    assert cites(parse_answer(TABLE_13)) == TABLE_13_CITES
    assert ref.sentences[5].text.endswith(
        "technique [NA]. He also provided her with the "
        "opportunity to study with him and learn from his "
        "experience and expertise."
    )


def test_qid_prefix_and_empty_property_paper_vs_reference() -> None:
    answer = (
        "Artemisia [qid: Q212657, name: Artemisia Gentileschi] was a painter "
        "[Q212657,occupation: painter] [name: Artemisia Gentileschi]."
    )
    # reference: qid "qid: Q212657"; "[Q212657,occupation" has no ", " -> property "" -> nothing;
    # "[name: ...]" -> nothing
    assert ref_keys(answer) == [("qid: Q212657", "name", "Artemisia Gentileschi")]
    parsed_ref: ParsedAnswer = parse_answer_reference(answer)
    assert [i.bracket for i in parsed_ref.issues] == [
        "[Q212657,occupation: painter]",
        "[name: Artemisia Gentileschi]",
    ]
    # paper: QID read; the QID-less bracket is unresolved without graphs (an issue)
    paper = parse_answer(answer)
    assert keys(paper) == [
        ("Q212657", "name", "Artemisia Gentileschi"),
        ("Q212657", "occupation", "painter"),
    ]
    assert [i.bracket for i in paper.issues] == ["[name: Artemisia Gentileschi]"]


def test_colon_values_paper_vs_reference() -> None:
    answer = (
        "Nasmyth wrote a book [Q240633, notable works: The Moon: Considered as a Planet, a World, "
        "and a Satellite, name: James Nasmyth]."
    )
    # reference items: ["[Q240633, notable works", "The Moon", "Considered as a Planet, a World,
    # and a Satellite, name", "James Nasmyth]"] -> "The Moon" emitted, property "" after it, the
    # 3rd item is dropped (property "") but sets property "name" for the last one
    assert ref_keys(answer) == [
        ("Q240633", "notable works", "The Moon"),
        ("Q240633", "name", "James Nasmyth"),
    ]
    assert keys(parse_answer(answer)) == [
        ("Q240633", "notable works", "The Moon: Considered as a Planet, a World, and a Satellite"),
        ("Q240633", "name", "James Nasmyth"),
    ]


# Paper Table 20 (GPT-4's answer): three paragraphs, several facts per bracket.
TABLE_20 = (
    "Stephen Crane was an American writer born on November 1, 1871, in Newark, and died on June "
    "5, 1900, in Badenweiler [Q206534, date of birth: 1871-11-01, date of death: 1900-06-05, "
    "place of birth: Newark, place of death: Badenweiler]. He was a part of the literary realism "
    "movement and is best known for his notable work, The Red Badge of Courage [Q206534, "
    "movement: literary realism, notable works: The Red Badge of Courage]. Crane’s views on "
    "religion were atheistic [Q206534, religion: atheism]. His works often reflected the harsh "
    "realities of life, such as war, poverty, and human suffering [NA].\n"
    "Crane attended Syracuse University [Q206534, alma mater: Syracuse University], where his "
    "experiences likely influenced his writing. He was exposed to a diverse range of ideas and "
    "perspectives, which may have contributed to his realistic approach to literature [NA].\n"
    "While at Syracuse University, Stephen Crane was a member of the Syracuse Orange baseball "
    "team [Q206534, member of sports team: Syracuse Orange baseball]."
)


def test_table_20_paper_vs_reference() -> None:
    c = "Q206534"
    s1 = [
        (c, "date of birth", "1871-11-01"),
        (c, "date of death", "1900-06-05"),
        (c, "place of birth", "Newark"),
        (c, "place of death", "Badenweiler"),
    ]
    s2 = [(c, "movement", "literary realism"), (c, "notable works", "The Red Badge of Courage")]
    s3 = [(c, "religion", "atheism")]
    s5 = [(c, "alma mater", "Syracuse University")]
    s7 = [(c, "member of sports team", "Syracuse Orange baseball")]
    paper = parse_answer(TABLE_20)
    assert cites(paper) == [s1, s2, s3, [NA], s5, [NA], s7]
    assert paper.sentences[3].plain == (
        "His works often reflected the harsh realities of life, such as war, poverty, and human "
        "suffering."
    )
    # the reference separator is " +": "[NA].\nCrane" and "[NA].\nWhile" are not cut
    ref = parse_answer_reference(TABLE_20)
    assert cites(ref) == [s1, s2, s3, [NA, *s5], [NA, *s7]]
    assert ref.sentences[3].plain.startswith("His works often reflected")
    # (only " ." is tidied: the space before the comma stays)
    assert ref.sentences[3].plain.endswith(
        "human suffering.\nCrane attended Syracuse University , "
        "where his experiences likely influenced his writing."
    )
