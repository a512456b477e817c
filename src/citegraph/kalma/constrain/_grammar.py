"""The citation grammar of one question: free text, citations only of the retrieved triples.

The language (``kalma-citations-v1``) is, in words: free text in which every bracket is a
citation and every sentence is annotated. A citation is either ``[NA]`` or ``[`` entity-group
(``, `` entity-group)? ``]``, where an entity group is ``qid: ``? *display id* (``, `` *fact*)
one to four times (:data:`MAX_FACTS`, :data:`MAX_GROUPS`) and each *fact* one of that entity's
``relation: value`` texts (:class:`CitationChoices`). So
``[Q206534, occupation: novelist, place of birth: Newark]`` is allowed exactly when both facts
are triples of Q206534's retrieved subgraph, and ``[Q1, Stephen Crane]``, ``[1]`` or an unclosed
``[`` never are. Citations may stand anywhere in a sentence (``born on July 8 [NA] in Rome
[Q212657, place of birth: Rome].``), but a sentence ends (``.``, ``!``, ``?``) only right after
one, and the answer ends after one: the paper's instruction to annotate every claim, with [NA]
where the information lacks it, is kept by the grammar rather than hoped for (a small model
asked to cite, free, mostly does not). Text therefore holds no ``.``, ``!`` or ``?`` of its own
(``U.S.`` is written ``US``, decimals as words). It is the KaLMA answer format (paper Table 13)
as :func:`~citegraph.kalma.parse.parse_answer` reads it.

:func:`citation_grammar` writes the language in the three forms of
:class:`~citegraph.models.Grammar`:

- Lark for llguidance: two terminals, ``TEXT`` and ``CITE``, each one regular expression, so no
  lexing choice between overlapping facts can refuse a valid citation;
- GBNF for llama.cpp and vLLM: one rule per entity, its facts as string alternatives;
- a strict JSON schema (servers that constrain only JSON): ``{"sentences": [{"text": ...,
  "citations": [...]}]}`` where each citation is ``"NA"`` or one of the enum of
  ``"<display id>, <relation>: <value>"`` texts; :func:`render_json_answer` writes such a reply
  as KaLMA text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from citegraph.errors import ResponseFormatError
from citegraph.kalma.constrain._choices import CitableEntity, CitationChoices
from citegraph.models import Grammar, Steering

__all__ = [
    "CITATION_GRAMMAR",
    "JSON_INSTRUCTION",
    "CitationsMode",
    "citation_grammar",
    "render_json_answer",
]

CitationsMode = Literal["free", "constrained"]
#: The grammar's name and version (recorded with every constrained run).
CITATION_GRAMMAR = "kalma-citations-v1"
#: Added to the system prompt when the reply must be JSON (the ``json-schema`` mode).
JSON_INSTRUCTION = (
    " Answer in JSON: a list of sentences, each with its text and the citations supporting it, "
    "chosen from the given information, or NA for a claim that needs a citation the "
    "information does not provide."
)
_NA = "NA"
#: At most this many facts of one entity, and entities, in one citation: the paper's brackets
#: hold one to four facts; without a bound a small model lists facts until ``max_tokens``.
MAX_FACTS = 4
MAX_GROUPS = 2
#: Local decoding: where the model would end a sentence (or the reply) and the grammar wants a
#: citation first, the citation opens (``[`` or `` [``) instead of the model writing around it.
SENTENCE_END_STEERING = Steering(when=r"^\s*[.!?]", to=r"^\s?\[$", at_end=True)
_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~/")


def _regex_literal(text: str) -> str:
    """``text`` as a regular expression matching exactly it (llguidance's Rust syntax; ``/``
    escaped for Lark's ``/.../``)."""
    return "".join("\\" + ch if ch in _REGEX_META else ch for ch in text)


def _gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _cite_regex(entities: Sequence[CitableEntity]) -> str:
    groups = "|".join(
        "(qid: )?" + _regex_literal(e.display_id)
        + "(, (" + "|".join(_regex_literal(f) for f in e.facts) + f")){{1,{MAX_FACTS}}}"
        for e in entities
    )  # fmt: skip
    if not groups:
        return r"\[NA\]"
    return rf"\[(NA|({groups})(, ({groups})){{0,{MAX_GROUPS - 1}}})\]"


def _lark(entities: Sequence[CitableEntity]) -> str:
    return "\n".join(
        [
            "start: (TEXT? CITE END?)+",
            r"TEXT: /[^\[\].!?]+/",
            f"CITE: /{_cite_regex(entities)}/",
            r"END: /[.!?]+/",
        ]
    )


def _gbnf(entities: Sequence[CitableEntity]) -> str:
    lines = [
        "root ::= (text* cite end?)+",
        r"text ::= [^\[\].!?]",
        r"end ::= [.!?]+",
    ]
    if entities:
        names = " | ".join(f"e{i}" for i in range(len(entities)))
        lines.append(
            'cite ::= "[NA]" | "[" group' + _optional('", " group', MAX_GROUPS - 1) + ' "]"'
        )
        lines.append(f"group ::= {names}")
        for i, e in enumerate(entities):
            facts = f'", " f{i}' + _optional(f'", " f{i}', MAX_FACTS - 1)
            lines.append(f'e{i} ::= "qid: "? {_gbnf_literal(e.display_id)} {facts}')
            lines.append(f"f{i} ::= " + " | ".join(_gbnf_literal(f) for f in e.facts))
    else:
        lines.append('cite ::= "[NA]"')
    return "\n".join(lines)


def _optional(item: str, times: int) -> str:
    """``item`` at most ``times`` more times, as nested GBNF options (no ``{m,n}``, which older
    llama.cpp and some EBNF readers lack): `` (a (a)?)?``."""
    text = ""
    for _ in range(times):
        text = f" ({item}{text})?"
    return text


def _choice_texts(entities: Sequence[CitableEntity]) -> list[str]:
    return [f"{e.display_id}, {f}" for e in entities for f in e.facts]


def _json_schema(entities: Sequence[CitableEntity]) -> dict[str, Any]:
    sentence = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "pattern": r"^[^\[\]]*$"},
            "citations": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "enum": [*_choice_texts(entities), _NA]},
            },
        },
        "required": ["text", "citations"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"sentences": {"type": "array", "items": sentence}},
        "required": ["sentences"],
        "additionalProperties": False,
    }


def citation_grammar(choices: CitationChoices) -> Grammar:
    """The grammar allowing exactly ``choices``' citations (see the module docstring)."""
    entities = choices.entities
    return Grammar(
        name=CITATION_GRAMMAR,
        lark=_lark(entities),
        gbnf=_gbnf(entities),
        json_schema=_json_schema(entities),
        steering=SENTENCE_END_STEERING,
    )


def render_json_answer(reply: str, choices: CitationChoices) -> str:
    """A ``json-schema`` reply written as a KaLMA answer.

    Each sentence's citations become brackets before its final punctuation (``.`` where the
    sentence has none): consecutive facts of one entity share a bracket (``[Q1, a: b, c: d]``),
    ``NA`` is ``[NA]``. Brackets a server let into a sentence's text despite the schema become
    parentheses.

    Raises:
        ResponseFormatError: The reply is not JSON of the schema, or cites outside the choices.
    """
    try:
        data = json.loads(reply)
        sentences = data["sentences"]
        items = [(str(s["text"]), [str(c) for c in s["citations"]]) for s in sentences]
    except (ValueError, KeyError, TypeError) as exc:
        raise ResponseFormatError(
            f"the constrained reply is not the JSON the schema asks for ({exc}); it starts "
            f"{reply[:80]!r}"
        ) from exc
    lookup = {f"{e.display_id}, {f}": (e, f) for e in choices.entities for f in e.facts}
    parts = []
    for text, cited in items:
        brackets: list[str] = []
        group: tuple[CitableEntity, list[str]] | None = None
        for choice in cited:
            if choice == _NA:
                if group is not None:
                    brackets.append(choices.citation(*group))
                    group = None
                brackets.append("[NA]")
                continue
            if choice not in lookup:
                raise ResponseFormatError(f"the constrained reply cites {choice!r}, not a choice")
            entity, fact = lookup[choice]
            if group is not None and group[0] is entity:
                group[1].append(fact)
            else:
                if group is not None:
                    brackets.append(choices.citation(*group))
                group = (entity, [fact])
        if group is not None:
            brackets.append(choices.citation(*group))
        parts.append(_with_brackets(text.replace("[", "(").replace("]", ")"), brackets))
    return " ".join(p for p in parts if p)


def _with_brackets(text: str, brackets: list[str]) -> str:
    """``text`` with ``brackets`` placed before its final ``.``, ``!`` or ``?``; a sentence
    without one ends in ``.`` (the KaLMA parser splits sentences there, so two JSON sentences
    stay two)."""
    body = text.strip()
    end = len(body)
    while end and body[end - 1] in ".!?":
        end -= 1
    stop = body[end:] or "."
    if not body[:end].strip() and not brackets:
        return ""
    return f"{' '.join([body[:end].rstrip(), *brackets]).strip()}{stop}"
