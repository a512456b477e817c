"""The paper parser's sentence splitter, bracket finder and plain-text form."""

from __future__ import annotations

import pytest

from citegraph.kalma.parse import sentence_spans, strip_citations
from citegraph.kalma.parse._brackets import BracketSpan, find_brackets


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # initials: never a sentence end ("I" only when another initial follows)
        (
            "J. R. R. Tolkien wrote The Hobbit. He died in 1973.",
            ["J. R. R. Tolkien wrote The Hobbit.", "He died in 1973."],
        ),
        (
            "After the war, I. M. Pei designed it. He served in World War I. Then he left.",
            [
                "After the war, I. M. Pei designed it.",
                "He served in World War I.",
                "Then he left.",
            ],
        ),
        # titles before a name
        (
            "Dr. Smith met St. Paul and Mr. Jones. They talked.",
            ["Dr. Smith met St. Paul and Mr. Jones.", "They talked."],
        ),
        # dotted acronyms: split only before a common sentence opener ("He", not "Army")
        (
            "He joined the U.S. Army in 1917. He moved to Washington, D.C. He died there.",
            ["He joined the U.S. Army in 1917.", "He moved to Washington, D.C.", "He died there."],
        ),
        # closing abbreviations behave the same way
        (
            "His father was Eduardo Cansino, Sr. He was a dancer. "
            "Eduardo Cansino, Sr. was Spanish.",
            [
                "His father was Eduardo Cansino, Sr.",
                "He was a dancer.",
                "Eduardo Cansino, Sr. was Spanish.",
            ],
        ),
        # numbering abbreviations before a digit; decimals; ISO dates
        (
            "See No. 5 from Jan. 1871. It was 3.5 m tall. Born 1871-11-01. He died.",
            ["See No. 5 from Jan. 1871.", "It was 3.5 m tall.", "Born 1871-11-01.", "He died."],
        ),
        # ?, !, ellipsis, a quote closing the sentence
        (
            'Really? Yes! He wrote "The Monster." Then... Nothing.',
            ["Really?", "Yes!", 'He wrote "The Monster."', "Then...", "Nothing."],
        ),
        # lower case after a period: not a new sentence
        ("It was approx. three metres, i.e. large.", ["It was approx. three metres, i.e. large."]),
        # a line break always ends a sentence; blank lines give no empty sentence
        (
            "First line without stop\nSecond line.\n\nThird.",
            ["First line without stop", "Second line.", "Third."],
        ),
    ],
)
def test_sentence_spans_text(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_bracket_after_period_belongs_to_previous_sentence() -> None:
    text = (
        "He was born in Newark. [Q206534, place of birth: Newark] He died in Badenweiler. "
        "[Q206534, place of death: Badenweiler]"
    )
    assert sentences(text) == [
        "He was born in Newark. [Q206534, place of birth: Newark]",
        "He died in Badenweiler. [Q206534, place of death: Badenweiler]",
    ]
    # several brackets, a newline before the bracket, and a stray period after it
    text = "He wrote. [Q1, a: b] [NA]. Then\nhe left.\n[Q1, c: d] He died."
    assert sentences(text) == [
        "He wrote. [Q1, a: b] [NA].",
        "Then",
        "he left.\n[Q1, c: d]",
        "He died.",
    ]


def test_no_split_inside_brackets() -> None:
    # the value "Pieter Cornelisz Hooft (1581-1647). High bailiff ..." is a real BioKaLMA value:
    # the period inside the bracket is followed by a space and a capital, but is not a boundary
    text = (
        "He is described [Q1, described by source: Pieter Cornelisz Hooft (1581-1647). High "
        "bailiff of Muiden, historian and poet]. He died.\n"
        "His son [Q2, honorific suffix: Sr.\nX] lived."
    )
    assert sentences(text) == [
        "He is described [Q1, described by source: Pieter Cornelisz Hooft (1581-1647). High "
        "bailiff of Muiden, historian and poet].",
        "He died.",
        "His son [Q2, honorific suffix: Sr.\nX] lived.",
    ]


def test_split_edge_cases() -> None:
    assert sentence_spans("") == []
    assert sentence_spans("   \n  ") == []
    assert sentences("No terminator at all") == ["No terminator at all"]
    # offsets are into the original text, without surrounding whitespace
    assert sentence_spans("  A b.  C d.  ") == [(2, 6), (8, 12)]


def test_find_brackets_nesting_and_unclosed() -> None:
    # nested: the real value "[Ann] Sarah Kingsbury" stays inside its citation
    text = "x [Q272303, mother: [Ann] Sarah Kingsbury] y"
    assert find_brackets(text) == [BracketSpan(2, 42, True)]
    # an unclosed '[' stops at the next '[' / line break; brackets after it are still found
    text = "a [Q1, b: c [NA] d ] e [f\ng"
    #       0123456789012345678901234567
    # '[' at 2 is closed by the ']' at 19 ([NA] nests inside); '[' at 23 never closes: it stops
    # at the line break at 25
    assert find_brackets(text) == [BracketSpan(2, 20, True), BracketSpan(23, 25, False)]
    text = "[Q1, a: b [NA] end"
    assert find_brackets(text) == [BracketSpan(0, 10, False), BracketSpan(10, 14, True)]
    assert find_brackets("a ] b") == []


def test_strip_citations() -> None:
    # removing the brackets leaves "Rome ." and "film "Artemisia" , which": spaces are tidied
    assert strip_citations("born in Rome [Q212657, place of birth: Rome].") == "born in Rome."
    assert (
        strip_citations('the film "Artemisia" [Q212657, depicted by: Artemisia], which brought')
        == 'the film "Artemisia", which brought'
    )
    assert strip_citations("A [Q1, a: b] [Q2, c: d] and B [NA] .") == "A and B."
    # paragraphs are kept, an unclosed bracket stays as text
    assert strip_citations("One [NA].\n\nTwo  ( x ) [Q1, a: b") == "One.\n\nTwo (x) [Q1, a: b"
    assert strip_citations("") == ""
