"""The citation grammar's GBNF (llama.cpp, vLLM) says what its Lark form (llguidance) says.

Servers receive the GBNF text, local models the Lark text; a difference would let a server write
citations the local models cannot, or refuse answers they accept. Both forms are run as
recognisers over the same well-formed and malformed answers: the Lark form directly, the GBNF
through llguidance's own GBNF-to-Lark converter (``llguidance.gbnf_to_lark``), each under a byte
tokenizer; and the GBNF's string literals are read back with llama.cpp's escape rules (its
``parse_char``), so the quoting is checked against the server's reading, not the converter's.
Where xgrammar (vLLM's grammar backend) is installed, it reads the GBNF too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _kg_helpers import subgraph
from citegraph.datasets import load_biokalma
from citegraph.kalma.constrain import CitationChoices, citation_grammar
from citegraph.kg import Subgraph

llg = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402

from citegraph.models.grammar._llg import byte_tokenizer  # noqa: E402

#: Values that need quoting in GBNF or escaping in a regex, and two the choices leave out.
HOSTILE = (
    subgraph(
        "Q1",
        "Ada Lovelace",
        ("occupation", "mathematician"),
        ("nickname", 'the "Enchantress" of numbers'),
        ("path", "C:\\notes\\ada"),
        ("work", "Notes [on the Engine]"),
        ("formula", "a+b*(c|d)?^$/x"),
        ("city", "Zürich – Genève"),
        ("title", "Dr. Who"),
        ("question", "why?"),
        ("unbalanced", "open [bracket"),
        ("control", "tab\there"),
    ),
    subgraph("Q2", "Charles Babbage", ("occupation", "engineer")),
)

WELL_FORMED = [
    "Ada was a mathematician [Q1, occupation: mathematician].",
    'She was called so [Q1, nickname: the "Enchantress" of numbers]!',
    "Her path [Q1, path: C:\\notes\\ada] and her work [Q1, work: Notes [on the Engine]].",
    "[NA]",
    "Unknown [NA]. Known [qid: Q2, occupation: engineer]?",
    "Both [Q1, occupation: mathematician, city: Zürich – Genève, Q2, occupation: engineer].",
    "A formula [Q1, formula: a+b*(c|d)?^$/x] and more [NA]",
    "Two lines\nof text [NA].",
    "Emphatic [NA]?!",
    "Titles [Q1, title: Dr. Who] and questions [Q1, question: why?].",
    "Cited [NA] [Q2, occupation: engineer] twice [NA].",
]
MALFORMED = [
    "",
    "No citation.",
    "No citation at all",
    "Text after the last citation [NA] goes on",
    "A fact of another entity [Q1, occupation: engineer].",
    "An entity not retrieved [Q3, occupation: engineer].",
    "A bare id [Q1].",
    "A number [1].",
    "Unclosed [Q1, occupation: mathematician",
    "A name as a fact [Q1, Ada Lovelace].",
    "A sentence end before its citation. [NA]",
    "Nested [[NA]].",
    "A stray ] bracket [NA].",
    "Lower case [na].",
    "A space [ Q1, occupation: mathematician].",
    "Two spaces [Q1,  occupation: mathematician].",
    "No separator [Q1, occupation: mathematicianoccupation: engineer].",
    "qid twice [qid: qid: Q1, occupation: mathematician].",
    'Escaped quotes [Q1, nickname: the \\"Enchantress\\" of numbers].',
    "Doubled backslashes [Q1, path: C:\\\\notes\\\\ada].",
    "A value left out [Q1, unbalanced: open [bracket].",
    "A value left out [Q1, control: tab\there].",
    "Two brackets in one [Q1, occupation: mathematician][NA].x",
    "A fact twice [Q1, occupation: mathematician, occupation: mathematician].",
    "Out of the prompt's order [Q1, city: Zürich – Genève, occupation: mathematician].",
    "One entity twice [Q1, occupation: mathematician, Q1, city: Zürich – Genève].",
]


class _Recogniser:
    """Whole-string acceptance by one grammar (Lark text), byte by byte."""

    def __init__(self, lark: str) -> None:
        self.matcher = llg.LLMatcher(
            byte_tokenizer(), llg.LLMatcher.grammar_from_lark(lark), log_level=0
        )
        assert not self.matcher.is_error(), self.matcher.get_error()

    def __call__(self, text: str) -> bool:
        self.matcher.reset()
        tokens = list(text.encode("utf-8"))
        consumed = self.matcher.try_consume_tokens(tokens)
        return consumed == len(tokens) and self.matcher.is_accepting()


def _both(graphs: tuple[Subgraph, ...]) -> tuple[_Recogniser, _Recogniser, str]:
    grammar = citation_grammar(CitationChoices(graphs))
    return _Recogniser(grammar.lark), _Recogniser(gbnf_to_lark(grammar.gbnf)), grammar.gbnf


@pytest.mark.parametrize("text", WELL_FORMED)
def test_both_forms_accept_a_well_formed_answer(text: str) -> None:
    lark, gbnf, _ = _both(HOSTILE)
    assert lark(text) and gbnf(text)


@pytest.mark.parametrize("text", MALFORMED)
def test_both_forms_reject_a_malformed_answer(text: str) -> None:
    lark, gbnf, _ = _both(HOSTILE)
    assert not lark(text) and not gbnf(text)


def test_forms_agree_on_every_one_character_edit_of_real_answers(data_dir: Path) -> None:
    """Stephen Crane's retrieved graph (specific-0): each well-formed answer with one character
    deleted or one inserted (a bracket, a sentence end, a comma) is judged the same by both."""
    sample = load_biokalma("specific", data_dir)[0]
    lark, gbnf, _ = _both(sample.graphs)
    answers = [
        "Crane was born in Newark [Q206534, place of birth: Newark]. "
        "He died of tuberculosis [Q206534, cause of death: Tuberculosis, "
        "manner of death: natural causes] in 1900 [NA].",
        "He wrote The Red Badge of Courage [qid: Q206534, notable works: The Red Badge of "
        "Courage]!",
    ]
    n_accepted = n_checked = 0
    for answer in answers:
        assert lark(answer) and gbnf(answer)
        edits = {answer[:i] + answer[i + 1 :] for i in range(len(answer))}
        edits |= {answer[:i] + ch + answer[i:] for i in range(len(answer)) for ch in "[].,"}
        for edit in sorted(edits):
            verdict = lark(edit)
            assert gbnf(edit) == verdict, edit
            n_checked += 1
            n_accepted += verdict
    # deleting a letter of the free text keeps an answer well formed; most other edits do not
    assert 0 < n_accepted < n_checked


def test_no_citable_fact_leaves_only_na() -> None:
    lark, gbnf, text = _both((subgraph("Q9", "Nobody", ("control", "a\x01b")),))
    assert 'cite ::= "[NA]"' in text.splitlines()
    for answer, verdict in [("Nothing known [NA].", True), ("Q9 [Q9, control: a\x01b].", False)]:
        assert lark(answer) == gbnf(answer) == verdict


# llama.cpp's parse_char (src/llama-grammar.cpp): the escapes a GBNF literal may hold.
_SIMPLE_ESCAPES = {
    "t": "\t",
    "r": "\r",
    "n": "\n",
    "\\": "\\",
    '"': '"',
    "[": "[",
    "]": "]",
    "-": "-",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _read_gbnf_literal(text: str, at: int) -> tuple[str, int]:
    """The string a GBNF literal starting at ``text[at] == '"'`` denotes, as llama.cpp reads
    it, and the position after its closing quote."""
    assert text[at] == '"'
    out, i = [], at + 1
    while text[i] != '"':
        if text[i] != "\\":
            out.append(text[i])
            i += 1
        elif text[i + 1] in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[text[i + 1]])
            i += 2
        else:
            width = _HEX_ESCAPES[text[i + 1]]  # any other escape is a llama.cpp parse error
            out.append(chr(int(text[i + 2 : i + 2 + width], 16)))
            i += 2 + width
    return "".join(out), i + 1


def test_gbnf_literals_read_back_as_the_facts_on_llama_cpp() -> None:
    choices = CitationChoices(HOSTILE)
    _, _, text = _both(HOSTILE)
    rules = dict(line.split(" ::= ", 1) for line in text.splitlines())
    for n, entity in enumerate(choices.entities):
        facts = []
        for k in range(len(entity.facts)):
            fact, at = _read_gbnf_literal(rules[f"f{n}k{k}"], 0)
            assert at == len(rules[f"f{n}k{k}"])  # one literal per fact rule
            facts.append(fact)
        assert tuple(facts) == entity.facts
        assert rules[f"g{n}"] == f'"qid: "? "{entity.display_id}" ", " e{n}k0c4'
        last = len(entity.facts) - 1  # the last fact: nothing after it, in any count
        assert all(rules[f"e{n}k{last}c{c}"] == f"(f{n}k{last})" for c in range(1, 5))
    # one fact of Q1, then at most three of the later ones, or only later ones
    assert rules["e0k0c4"] == '(f0k0 (", " e0k1c3)?) | e0k1c4'
    assert rules["cite"] == '"[NA]" | "[" (g0 (", " (g1))? | g1 (", " (g0))?) "]"'
    # rule names are llama.cpp words ([a-zA-Z0-9-]); the root rule is named root
    assert all(re.fullmatch(r"[a-zA-Z0-9-]+", name) for name in rules) and "root" in rules


def test_vllm_xgrammar_reads_the_gbnf_the_same_way() -> None:
    """vLLM's default structured-output backend (xgrammar) parses the GBNF and judges the
    answers as the Lark form does (skipped where xgrammar is not installed: it is not a
    citegraph dependency)."""
    xgr = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string as xgrammar_accepts

    grammar = citation_grammar(CitationChoices(HOSTILE))
    parsed = xgr.Grammar.from_ebnf(grammar.gbnf)
    assert all(xgrammar_accepts(parsed, text) for text in WELL_FORMED)
    assert not any(xgrammar_accepts(parsed, text) for text in MALFORMED)
