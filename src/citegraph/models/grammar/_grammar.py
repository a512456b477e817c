"""Constrained generation: a grammar every chat provider can apply in its own way.

A :class:`Grammar` carries one language in the three forms providers take:

- ``lark``: llguidance's Lark dialect. Local transformers models (``hf/...``, ``local``) apply it
  as a logits processor, and the mock model decodes its script under it byte by byte
  (:mod:`citegraph.models.grammar._llg`);
- ``gbnf``: GBNF, the grammar format of llama.cpp's ``grammar`` field; vLLM takes it too
  (``structured_outputs.grammar``, EBNF read by its xgrammar backend);
- ``json_schema``: a strict JSON schema for servers that constrain only JSON (OpenAI, Ollama).
  The reply is then JSON in that schema, and the caller renders it into text (the grammar's
  owner knows how: see :mod:`citegraph.kalma.constrain`).

A grammar may also change as the reply grows (:class:`GrammarUpdate`, local decoding only): the
citation grammar lets each fact be cited once per answer that way, which no fixed context-free
grammar can say without listing every order of the facts.

How each provider applies a grammar is its :data:`GrammarMode`, which a model declares in its
``grammar_mode`` attribute; :func:`grammar_mode_of` reads it and refuses, naming the model and
every mode citegraph knows, a model that has none (a user's own ``ChatModel`` class, say).
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError
from citegraph.io import json_text

__all__ = [
    "GRAMMAR_MODES",
    "Grammar",
    "GrammarMode",
    "GrammarUpdate",
    "Steering",
    "grammar_mode_of",
]

GrammarMode = Literal["logits", "vllm-grammar", "gbnf", "json-schema"]

#: Every way a provider applies a :class:`Grammar`, and the providers that use it.
GRAMMAR_MODES: dict[str, str] = {
    "logits": "a logits processor in local generation (hf/..., local; mock decodes under it)",
    "vllm-grammar": "vLLM's structured_outputs.grammar request field (vllm/...)",
    "gbnf": "llama.cpp's GBNF grammar request field (llamacpp/...)",
    "json-schema": "a strict JSON-schema response_format (openai/..., ollama/...)",
}


class Steering(BaseModel):
    """Where a local model wants to write what the grammar refuses, what it writes instead.

    When the model's most likely next token is refused and its text matches ``when`` (or it is
    the end of the reply and ``at_end``), only the allowed tokens whose text matches ``to`` are
    left. The citation grammar uses it so that a sentence end the grammar refuses (a citation
    must come first) opens a citation, instead of leaving the model to write around it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    when: str = Field(description="Regex (Python) over a refused top token's text.")
    to: str = Field(description="Regex over the texts of the tokens left then.")
    at_end: bool = Field(default=True, description="Also when the refused top token ends.")


@runtime_checkable
class GrammarUpdate(Protocol):
    """A grammar that changes as the reply grows (local decoding: ``logits`` mode and the mock).

    After each token whose text holds one of :attr:`trigger`'s characters, the decoder calls
    the update with the reply so far; a Lark grammar it returns replaces the current one (it
    must accept the reply so far: the decoder feeds it every token of the reply again), None
    keeps it. Servers receive the grammar's fixed forms only; what they cannot hold is the
    grammar owner's to check after the reply.
    """

    name: ClassVar[str]
    """What the update does, with its version (part of the grammar's digest)."""
    trigger: ClassVar[str]
    """Characters after which the update is asked (``"]"``: when a citation may have closed)."""

    def __call__(self, reply: str) -> str | None:
        """The Lark grammar of the whole reply from now on, given the reply so far, or None."""
        ...


class Grammar(BaseModel):
    """One generation constraint in the forms providers take (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    name: str = Field(description="What the grammar is, with its version (recorded in runs).")
    lark: str = Field(description="The language in llguidance's Lark dialect.")
    gbnf: str = Field(description="The same language in GBNF (llama.cpp, vLLM).")
    json_schema: dict[str, Any] | None = Field(
        default=None,
        description="A strict JSON schema whose replies the caller renders into the language; "
        "None: servers that constrain only JSON cannot apply this grammar.",
    )
    steering: Steering | None = Field(
        default=None, description="Local decoding only: see :class:`Steering`."
    )
    update: GrammarUpdate | None = Field(
        default=None,
        exclude=True,
        description="Local decoding only: how the Lark form changes as the reply grows "
        "(:class:`GrammarUpdate`); named in the digest, never serialised.",
    )

    def digest(self) -> str:
        """A short SHA-256 of all three forms and the update's name (part of cache keys)."""
        data = self.model_dump(mode="json")
        if self.update is not None:
            data["update"] = self.update.name
        text = json_text(data, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def grammar_mode_of(model: object) -> GrammarMode:
    """How ``model`` applies a grammar (its ``grammar_mode``).

    Raises:
        ConfigError: The model declares no mode: the message names it and lists the modes.
    """
    mode = getattr(model, "grammar_mode", None)
    if mode in GRAMMAR_MODES:
        return mode  # type: ignore[no-any-return]
    name = getattr(model, "name", type(model).__name__)
    listed = "; ".join(f"{m}: {what}" for m, what in GRAMMAR_MODES.items())
    raise ConfigError(
        f"model {name!r} cannot constrain its output: it supports none of citegraph's grammar "
        f"modes ({listed}). Use a provider that does, or free generation"
    )
