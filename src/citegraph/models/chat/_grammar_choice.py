"""A grammar whose language is one of a few fixed replies: a judge's label or score.

:func:`choice_grammar` writes the three forms of :class:`~citegraph.models.Grammar` for the
language "exactly one of ``choices``": Lark ``start: "A" | "B"``, GBNF ``root ::= "A" | "B"``
and the strict JSON schema ``{"<key>": <enum of the choices>}`` (integers when every choice is
one, so ``{"score": 4}``). :func:`choice_reply_text` turns a reply back into the choice it
names (a JSON-schema server's reply is JSON; every other reply is the choice itself).

Whether a judge's replies are constrained is its :data:`JudgeReplies` setting: ``free`` (the
papers' setting: the reply is read by the judge's parser), ``constrained`` (the reply is one of
the parser's words), or ``auto`` (the default: constrained for local models, ``local`` and
``hf/...``, which otherwise rarely answer in the format; free for servers and the mock, as the
papers ran them). :func:`resolve_judge_replies` makes ``auto`` one of the other two.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from citegraph.errors import ConfigError
from citegraph.models.chat._factory import parse_model_spec
from citegraph.models.grammar import Grammar

__all__ = [
    "JudgeReplies",
    "ResolvedReplies",
    "choice_grammar",
    "choice_reply_text",
    "resolve_judge_replies",
]

JudgeReplies = Literal["auto", "free", "constrained"]
ResolvedReplies = Literal["free", "constrained"]
#: Providers whose judges are constrained under ``auto``.
_CONSTRAINED_BY_DEFAULT = ("local", "hf")


def resolve_judge_replies(setting: str, spec: str) -> ResolvedReplies:
    """``free`` or ``constrained``: the setting, with ``auto`` resolved for the judge ``spec``.

    Raises:
        ConfigError: An unknown setting or model provider.

    Example:
        >>> resolve_judge_replies("auto", "local"), resolve_judge_replies("auto", "openai/gpt-4o")
        ('constrained', 'free')
    """
    if setting in ("free", "constrained"):
        return setting  # type: ignore[return-value]
    if setting != "auto":
        raise ConfigError(f"judge replies {setting!r}: use 'auto', 'free' or 'constrained'")
    provider, _ = parse_model_spec(spec)
    return "constrained" if provider in _CONSTRAINED_BY_DEFAULT else "free"


def _quoted(text: str) -> str:
    """``text`` as a double-quoted literal both Lark and GBNF read (JSON escapes)."""
    return json.dumps(text, ensure_ascii=False)


def choice_grammar(name: str, choices: Sequence[str], *, key: str) -> Grammar:
    """The grammar of a reply that is exactly one of ``choices``.

    Args:
        name: The grammar's name with its version (recorded in runs, part of cache keys).
        choices: The replies allowed, in order (distinct, non-empty).
        key: The JSON schema's one property (``label``, ``score``).

    Raises:
        ConfigError: No choices, an empty one or a repeated one.

    Example:
        >>> g = choice_grammar("yes-no-v1", ["Yes", "No"], key="answer")
        >>> g.lark, g.gbnf
        ('start: "Yes" | "No"', 'root ::= "Yes" | "No"')
        >>> choice_grammar("s", ["1", "2"], key="score").json_schema["properties"]
        {'score': {'type': 'integer', 'enum': [1, 2]}}
    """
    words = list(choices)
    if not words or any(not w for w in words) or len(set(words)) != len(words):
        raise ConfigError(f"grammar {name!r} needs distinct non-empty choices, got {words}")
    alternatives = " | ".join(_quoted(w) for w in words)
    enum: dict[str, Any]
    if all(w.isdigit() for w in words):
        enum = {"type": "integer", "enum": [int(w) for w in words]}
    else:
        enum = {"type": "string", "enum": words}
    schema = {
        "type": "object",
        "properties": {key: enum},
        "required": [key],
        "additionalProperties": False,
    }
    return Grammar(
        name=name,
        lark=f"start: {alternatives}",
        gbnf=f"root ::= {alternatives}",
        json_schema=schema,
    )


def choice_reply_text(reply: str, grammar: Grammar) -> str:
    """The choice a reply under ``grammar`` names: the value of its JSON key when the reply is
    that JSON object (a JSON-schema server's reply), else the reply stripped.

    Example:
        >>> g = choice_grammar("s", ["1", "2"], key="score")
        >>> choice_reply_text('{"score": 2}', g), choice_reply_text(" 1", g)
        ('2', '1')
    """
    text = reply.strip()
    if grammar.json_schema is None or not text.startswith("{"):
        return text
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text
    [key] = grammar.json_schema["properties"]
    if isinstance(data, dict) and key in data and not isinstance(data[key], bool | dict | list):
        return str(data[key])
    return text
