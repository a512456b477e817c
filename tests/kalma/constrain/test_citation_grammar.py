"""The citation grammar (kalma-citations-v1) against the parser: what it lets through parses to
retrieved triples, what the parser cannot read or what lies outside the graphs it refuses."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from _kg_helpers import subgraph
from citegraph.datasets import load_biokalma
from citegraph.kalma.constrain import CitationChoices, citation_grammar, cut_open_citation
from citegraph.kalma.parse import parse_answer
from citegraph.kg import Subgraph
from citegraph.models.grammar import grammar_accepts
from citegraph.models.grammar._llg import _allowed_bytes, byte_tokenizer, compile_grammar

pytestmark = pytest.mark.needs("llguidance")

# Paper Table 13's demonstration answer, its one uncited sentence given [NA] (the grammar asks
# every sentence to end on a citation) and "Orazio's" with a plain apostrophe.
TABLE_13 = (
    "Artemisia Gentileschi was an Italian painter born on July 8, 1596 [NA] in Rome [Q212657, "
    "ethnic group: Italians, occupation: painter, place of birth: Rome]. She was a member of the "
    "Accademia delle Arti del Disegno and is best known for her work Judith Slaying Holofernes "
    "[Q212657, member of: Accademia delle Arti del Disegno, notable works: Judith Slaying "
    "Holofernes]. She was the eldest child of the Tuscan painter Orazio Gentileschi [Q212657, "
    "father: Orazio Gentileschi]. Orazio Gentileschi was an Italian painter [NA] born in 1563 and "
    "died in 1639 [Q367360, ethnic group: Italians, date of birth: 1563-07-19, date of death: "
    "1639-02-07]. He was born in Pisa and died in London [Q367360, place of death: London]. "
    "He also provided her with the opportunity to study with him [NA]. She became an important "
    "second-generation proponent of Caravaggio's dramatic realism [Q212657, movement: "
    "Caravaggisti]."
)


def _graph(qid: str, *facts: tuple[str, str]) -> Subgraph:
    return subgraph(qid, qid, *facts)


# The parser tests' canonical citations (tests/kalma/parse/test_parse_paper.py), with graphs
# holding their triples: a value with a comma, with ": ", with nested brackets, two entities in
# one bracket, the build prompts' "qid: " lead.
PARSER_CASES = [
    (
        "He worked in Washington DC [Q44690, work location: Washington, D.C., name: Lincoln].",
        [_graph("Q44690", ("work location", "Washington, D.C."), ("name", "Lincoln"))],
    ),
    (
        "Her mother [Q272303, mother: [Ann] Sarah Kingsbury] was Irish [NA].",
        [_graph("Q272303", ("mother", "[Ann] Sarah Kingsbury"))],
    ),
    (
        "It [Q9, notable works: Smith, John: A Life, place of birth: Newark].",
        [_graph("Q9", ("notable works", "Smith, John: A Life"), ("place of birth", "Newark"))],
    ),
    (
        "X [Q1, a: b, Q2, c: d] [Q1, e: f].",
        [_graph("Q1", ("a", "b"), ("e", "f")), _graph("Q2", ("c", "d"))],
    ),
    (
        "Crane [qid: Q206534, place of birth: Newark].",
        [_graph("Q206534", ("place of birth", "Newark"))],
    ),
    ("A [NA]. B [NA]! C [NA]?", [_graph("Q1", ("a", "b"))]),
]


# Table 13's knowledge, the facts its demonstration cites (paper Appendix D).
TABLE_13_GRAPHS = [
    _graph(
        "Q212657",
        ("ethnic group", "Italians"),
        ("occupation", "painter"),
        ("place of birth", "Rome"),
        ("member of", "Accademia delle Arti del Disegno"),
        ("notable works", "Judith Slaying Holofernes"),
        ("father", "Orazio Gentileschi"),
        ("movement", "Caravaggisti"),
    ),
    _graph(
        "Q367360",
        ("ethnic group", "Italians"),
        ("date of birth", "1563-07-19"),
        ("date of death", "1639-02-07"),
        ("place of death", "London"),
    ),
]


@pytest.mark.parametrize(("answer", "graphs"), PARSER_CASES)
def test_accepts_the_parsers_well_formed_citations(answer: str, graphs: list[Subgraph]) -> None:
    grammar = citation_grammar(CitationChoices(graphs))
    assert grammar_accepts(grammar, answer)
    parsed = parse_answer(answer, graphs)
    assert not parsed.issues
    held = {t.key for g in graphs for t in g.triples}
    assert all(c.triple.key in held for c in parsed.kg_citations if c.triple)


def test_accepts_the_table_13_demonstration() -> None:
    grammar = citation_grammar(CitationChoices(TABLE_13_GRAPHS))
    assert grammar_accepts(grammar, TABLE_13)
    parsed = parse_answer(TABLE_13, TABLE_13_GRAPHS)
    assert (len(parsed.kg_citations), len(parsed.citations) - len(parsed.kg_citations)) == (11, 3)
    # the paper's own version has one sentence without a citation: refused at its full stop
    uncited = TABLE_13.replace(" with him [NA].", " with him.")
    assert not grammar_accepts(grammar, uncited)


REFUSED = [
    ("A [1].", "a number"),
    ("A [citation needed].", "not a citation"),
    ("A [].", "empty"),
    ("A [Q5].", "a QID without a fact"),
    ("A [Q1, Stephen Crane].", "a label without a fact"),
    ("A [Q1, a:].", "an empty value"),
    ("A [Q1, a: b", "unclosed"),
    ("A [Q1, a: c].", "a value outside the graph"),
    ("A [Q1, x: b].", "a relation outside the graph"),
    ("A [Q3, a: b].", "an entity outside the graph"),
    ("A [Q2, a: b].", "another entity's fact"),
    ("A [ NA ].", "a lenient spelling the parser reads but the grammar does not write"),
    ("A [Q1,a: b].", "no space after the comma"),
    ("A ] [NA].", "a stray closing bracket"),
    ("A [Q1, a: b] and more.", "a sentence end without a citation"),
    ("A [Q1, a: b] and more", "an answer ending on text"),
    ("", "an empty answer"),
    ("A [Q1, a: b, a: b, a: b, a: b, a: b].", "five facts of one entity (at most four)"),
    ("A [Q1, a: b, Q2, c: d, Q1, a: b].", "three entity groups (at most two)"),
    ("A [Q1, a: b, a: b].", "a fact listed twice in one bracket"),
    ("A [Q1, a: b, Q1, a: b].", "one entity's group twice in one bracket"),
    ("A [Q1, a: b]. B [Q1, a: b].", "a fact cited again in the answer"),
]


@pytest.mark.parametrize(("answer", "why"), REFUSED)
def test_refuses_malformed_and_outside_the_graph(answer: str, why: str) -> None:
    graphs = [_graph("Q1", ("a", "b")), _graph("Q2", ("c", "d"))]
    assert not grammar_accepts(citation_grammar(CitationChoices(graphs)), answer), why


def test_every_biokalma_fact_is_citable_alone_and_parses_back(data_dir: Path) -> None:
    samples = load_biokalma("specific", data_dir)[:60]
    checked = 0
    for sample in samples:
        choices = CitationChoices(sample.graphs)
        assert not choices.dropped, choices.dropped  # BioKaLMA's values all read back
        grammar = citation_grammar(choices)
        for entity in choices.entities[:2]:
            for fact in entity.facts[:5]:
                answer = f"It is so {choices.citation(entity, [fact])}."
                assert grammar_accepts(grammar, answer), answer
                [cited] = parse_answer(answer, sample.graphs).kg_citations
                assert cited.triple is not None
                assert f"{cited.triple.relation}: {cited.triple.value}" == fact
                checked += 1
    assert checked > 300


def test_facts_the_parser_cannot_read_back_are_left_out() -> None:
    graph = _graph("Q1", ("a", "b"), ("note", "x ] y"), ("tab", "p\tq"))
    choices = CitationChoices([graph])
    assert choices.entities[0].facts == ("a: b",)
    assert sorted(r for _, r in choices.dropped) == [
        "a control character in the relation or value",
        "the parser does not read its citation back",
    ]
    assert not grammar_accepts(citation_grammar(choices), "A [Q1, note: x ] y].")


def _random_sentence(grammar_lark: object, rng: random.Random, steps: int) -> str:
    """A random walk through the grammar's language over bytes: printable bytes in text, '['
    often, any allowed byte inside a citation; it ends once the grammar allows it."""
    matcher = compile_grammar(byte_tokenizer(), grammar_lark)  # type: ignore[arg-type]
    out = bytearray()
    for n in range(steps):
        allowed = _allowed_bytes(matcher)
        if 256 in allowed and (n > steps // 2 or rng.random() < 0.02):
            break
        choices = sorted(b for b in allowed if b < 256 and (b >= 32 or b == 10))
        opening = ord("[") in choices and rng.random() < 0.15
        byte = ord("[") if opening else rng.choice(choices)
        assert matcher.consume_token(byte)
        out.append(byte)
    return out.decode("utf-8", errors="strict") if 256 in _allowed_bytes(matcher) else ""


def test_random_walks_of_the_grammar_parse_with_every_citation_retrieved(data_dir: Path) -> None:
    samples = [s for s in load_biokalma("specific", data_dir)[:40] if s.graphs][:12]
    citations = 0
    for seed, sample in enumerate(samples):
        grammar = citation_grammar(CitationChoices(sample.graphs))
        held = {t.key for g in sample.graphs for t in g.triples}
        rng = random.Random(seed)
        for _ in range(5):
            text = _random_sentence(grammar, rng, 400)
            if not text:
                continue
            parsed = parse_answer(text, sample.graphs)
            assert not parsed.issues, (text, parsed.issues)
            for c in parsed.kg_citations:
                assert c.triple is not None and c.triple.key in held, (text, c)
            citations += len(parsed.citations)
    assert citations > 100


def test_cut_open_citation() -> None:
    assert cut_open_citation("Born in Rome [Q1, place of birth: Ro") == ("Born in Rome", True)
    assert cut_open_citation("Born [Q1, a: b].") == ("Born [Q1, a: b].", False)
