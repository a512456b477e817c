"""The citation grammar of one question: free text, citations only of the retrieved triples,
each fact cited at most once.

The language (``kalma-citations-v2``) is, in words: free text in which every bracket is a
citation and every sentence is annotated. A citation is either ``[NA]`` or ``[`` entity-group
(``, `` entity-group)? ``]``, the two groups of different entities, where an entity group is
``qid: ``? *display id* (``, `` *fact*) one to four times (:data:`MAX_FACTS`,
:data:`MAX_GROUPS`), each *fact* one of that entity's ``relation: value`` texts
(:class:`CitationChoices`), listed in the order the prompt shows them, so none twice. So
``[Q206534, place of birth: Newark, occupation: novelist]`` is allowed exactly when both facts
are triples of Q206534's retrieved subgraph (in that order), and ``[Q1, Stephen Crane]``,
``[1]``, ``[Q1, a: b, a: b]`` or an unclosed ``[`` never are. A fact cited once is not cited
again in the same answer (:mod:`._once`: in decoding for local models, removed after the reply
for servers). Citations may stand anywhere in a sentence (``born on July 8 [NA] in Rome
[Q212657, place of birth: Rome].``), but a sentence ends (``.``, ``!``, ``?``) only right after
one, and the answer ends after one: the paper's instruction to annotate every claim, with [NA]
where the information lacks it, is kept by the grammar rather than hoped for (a small model
asked to cite, free, mostly does not). Text therefore holds no ``.``, ``!`` or ``?`` of its own
(``U.S.`` is written ``US``, decimals as words). It is the KaLMA answer format (paper Table 13)
as :func:`~citegraph.kalma.parse.parse_answer` reads it.

:func:`citation_grammar` writes the language in the three forms of
:class:`~citegraph.models.Grammar` (:mod:`._forms` writes the first two):

- Lark for llguidance: two lexemes, ``TEXT`` and ``CITE``, each one regular expression, so no
  lexing choice between overlapping facts can refuse a valid citation; its
  :class:`~citegraph.kalma.constrain.OncePerAnswer` update leaves out the facts already cited;
- GBNF for llama.cpp and vLLM: the same pieces as rules, the facts as string literals;
- a strict JSON schema (servers that constrain only JSON): ``{"sentences": [{"text": ...,
  "citations": [...]}]}`` where each citation is ``"NA"`` or one of the enum of
  ``"<display id>, <relation>: <value>"`` texts; :func:`render_json_answer` writes such a reply
  as KaLMA text. The schema cannot forbid a repeat (strict OpenAI schemas refuse
  ``uniqueItems``); the repeats are removed after the reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from citegraph.errors import ResponseFormatError
from citegraph.kalma.constrain._choices import CitableEntity, CitationChoices
from citegraph.kalma.constrain._forms import MAX_FACTS, MAX_GROUPS, gbnf_form, lark_form
from citegraph.kalma.constrain._once import OncePerAnswer
from citegraph.kalma.parse import sentence_spans
from citegraph.models import Grammar
from citegraph.models.grammar import Steering

__all__ = [
    "CITATION_GRAMMAR",
    "JSON_INSTRUCTION",
    "MAX_FACTS",
    "MAX_GROUPS",
    "CitationsMode",
    "citation_grammar",
    "render_json_answer",
]

CitationsMode = Literal["free", "constrained"]
#: The grammar's name and version (recorded with every constrained run). v2: the facts of a
#: bracket in the prompt's order, its two groups of different entities, each fact once per answer.
CITATION_GRAMMAR = "kalma-citations-v2"
#: Added to the system prompt when the reply must be JSON (the ``json-schema`` mode).
JSON_INSTRUCTION = (
    " Answer in JSON: a list of sentences, each with its text and the citations supporting it, "
    "chosen from the given information, or NA for a claim that needs a citation the "
    "information does not provide."
)
_NA = "NA"
#: Local decoding: where the model would end a sentence (or the reply) and the grammar wants a
#: citation first, the citation opens (``[`` or `` [``) instead of the model writing around it.
SENTENCE_END_STEERING = Steering(when=r"^\s*[.!?]", to=r"^\s?\[$", at_end=True)


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
    """The grammar allowing exactly ``choices``' citations, each fact once per answer in local
    decoding (see the module docstring)."""
    entities = choices.entities
    return Grammar(
        name=CITATION_GRAMMAR,
        lark=lark_form(entities),
        gbnf=gbnf_form(entities),
        json_schema=_json_schema(entities),
        steering=SENTENCE_END_STEERING,
        update=OncePerAnswer(choices),
    )


def render_json_answer(reply: str, choices: CitationChoices) -> str:
    """A ``json-schema`` reply written as a KaLMA answer.

    Each JSON sentence becomes one sentence of the paper parser, its citations as brackets before
    its final punctuation (``.`` where the sentence has none): consecutive facts of one entity
    share a bracket (``[Q1, a: b, c: d]``), ``NA`` is ``[NA]``. So every sentence the parser
    reads is cited: where a sentence's text holds sentence ends of its own (``He lived. Then he
    died``, a ``?``, a ``!``, a blank line), they are joined with ``;`` (``He lived; Then he
    died [Q1, ...].``) rather than leaving all but the last uncited. Brackets a server let into
    a sentence's text despite the schema become parentheses.

    Raises:
        ResponseFormatError: The reply is not JSON of the schema (a sentence without a ``text``
            string, ``citations`` that are not a list of strings, or no citation at all: the
            schema asks for at least one, ``NA`` where the information lacks it), or it cites
            outside the choices.
    """
    lookup = {f"{e.display_id}, {f}": (e, f) for e in choices.entities for f in e.facts}
    parts = []
    for text, cited in _json_sentences(reply):
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
        body = _one_sentence(text.replace("[", "(").replace("]", ")"))
        parts.append(_with_brackets(body, brackets))
    return " ".join(p for p in parts if p)


def _json_sentences(reply: str) -> list[tuple[str, list[str]]]:
    """``(text, citations)`` of each sentence of a ``json-schema`` reply, checked against the
    schema's shape.

    Raises:
        ResponseFormatError: The reply is not the schema's JSON (says where and why).
    """
    try:
        data = json.loads(reply)
    except ValueError as exc:
        raise _not_the_schema(reply, str(exc)) from exc
    sentences = data.get("sentences") if isinstance(data, dict) else None
    if not isinstance(sentences, list):
        raise _not_the_schema(reply, 'expected an object {"sentences": [...]}')
    out = []
    for k, sentence in enumerate(sentences, start=1):
        text = sentence.get("text") if isinstance(sentence, dict) else None
        cited = sentence.get("citations") if isinstance(sentence, dict) else None
        if not isinstance(text, str):
            raise _not_the_schema(reply, f"sentence {k} has no 'text' string")
        if not (isinstance(cited, list) and all(isinstance(c, str) for c in cited)):
            got = type(cited).__name__ if cited is not None else "none"
            raise _not_the_schema(
                reply, f"sentence {k}'s 'citations' must be a list of strings, got {got}"
            )
        if not cited:
            raise _not_the_schema(
                reply,
                f"sentence {k} cites nothing; the schema asks for at least one citation "
                "(NA where the information lacks it)",
            )
        out.append((text, list(cited)))
    return out


def _not_the_schema(reply: str, why: str) -> ResponseFormatError:
    return ResponseFormatError(
        f"the constrained reply is not the JSON the schema asks for ({why}); it starts "
        f"{reply[:80]!r}"
    )


#: Sentence-final punctuation at the end of a piece of text, before any closing quotes.
_PIECE_END = re.compile(r"[.!?\u2026]+(?=[\"'\u201d\u2019)\u00bb]*$)")
_ANY_END = re.compile(r"[.!?\u2026\s]+")


def _one_sentence(text: str) -> str:
    """``text`` as one sentence of the paper parser: where it splits (its own ``.``, ``!``,
    ``?`` or line break before a new sentence), the pieces are joined with ``; ``, their final
    punctuation dropped."""
    spans = sentence_spans(text)
    if len(spans) <= 1:
        return text
    pieces = [_PIECE_END.sub("", text[a:b].rstrip()) for a, b in spans[:-1]]
    pieces.append(text[spans[-1][0] : spans[-1][1]])
    joined = "; ".join(p for p in pieces if p.strip())
    if len(sentence_spans(joined)) > 1:  # a last resort: no sentence end left at all
        joined = _ANY_END.sub(" ", joined).strip()
    return joined


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
