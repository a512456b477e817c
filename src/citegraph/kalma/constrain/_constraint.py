"""One question's constraint, applied to one model: the request it sends, the text it keeps.

:class:`CitationConstraint` ties the question's :class:`CitationChoices` and grammar to a model's
grammar mode; answer generation (``kalma run``, ``ask``) and the build's annotation and extension
rounds (``kalma build``) all go through it, so a reply is treated the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citegraph.errors import EndpointError, ResponseFormatError
from citegraph.kalma.constrain._choices import CitationChoices
from citegraph.kalma.constrain._grammar import (
    JSON_INSTRUCTION,
    citation_grammar,
    render_json_answer,
)
from citegraph.kalma.constrain._once import drop_repeats
from citegraph.kalma.constrain._trim import cut_open_citation
from citegraph.kg import Subgraph
from citegraph.models import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    GenerateConfig,
    Generation,
    Grammar,
    GrammarMode,
)
from citegraph.models.chat import forget_cached
from citegraph.models.grammar import grammar_mode_of

__all__ = ["ONCE_AFTER_REPLY", "ONCE_IN_DECODING", "CitationConstraint"]

#: How each fact is kept to one citation per answer (the record's ``each_fact_once``).
ONCE_IN_DECODING = "in decoding: a cited fact leaves the grammar"
ONCE_AFTER_REPLY = "after the reply: repeated citations removed (the server's grammar is fixed)"


@dataclass(frozen=True, slots=True)
class CitationConstraint:
    """The citation grammar of some graphs, as one model applies it."""

    choices: CitationChoices
    grammar: Grammar
    mode: GrammarMode

    @classmethod
    def for_model(cls, model: ChatModel, graphs: Sequence[Subgraph]) -> CitationConstraint:
        """The constraint of ``graphs`` for ``model``.

        Raises:
            ConfigError: The model cannot constrain its output (names it and the modes).
        """
        mode = grammar_mode_of(model)
        choices = CitationChoices(graphs)
        return cls(choices, citation_grammar(choices), mode)

    def request(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> ChatRequest:
        """The request carrying the grammar (a JSON-schema model is also told to answer JSON,
        after the system instruction)."""
        sent = list(messages)
        if self.mode == "json-schema" and sent and sent[0].role == "system":
            sent[0] = sent[0].model_copy(update={"content": sent[0].content + JSON_INSTRUCTION})
        return ChatRequest(messages=tuple(sent), config=config, grammar=self.grammar)

    async def generate(
        self, model: ChatModel, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> tuple[Generation, str, dict[str, Any]]:
        """Ask ``model`` under the constraint: the generation, its text (:meth:`finish`) and the
        record of how it was made.

        A reply that does not render is dropped from the model's response cache, so a resumed
        run asks again instead of failing on the cached reply for ever.

        Raises:
            EndpointError, ModelError: The call failed, or its reply does not render.
        """
        request = self.request(messages, config)
        generation = await model.generate(request)
        try:
            text, record = self.finish(generation)
        except EndpointError:
            forget_cached(model, request)
            raise
        return generation, text, record

    def finish(self, generation: Generation) -> tuple[str, dict[str, Any]]:
        """The reply's text as KaLMA text, and the record of how it was made.

        A JSON-schema reply is rendered (:func:`render_json_answer`); a reply cut by
        ``max_tokens`` loses its unfinished citation (:func:`cut_open_citation`); a citation of
        a fact the reply cited before is removed (:func:`drop_repeats`: none in ``logits``
        mode, where decoding never writes one; counted in ``repeats_removed``).

        Raises:
            ResponseFormatError: A JSON-schema reply that is not the schema's JSON (saying so
                when ``max_tokens`` cut it before it closed).
        """
        raw = generation.raw or {}
        text = generation.text.strip()
        cut_short = generation.finish_reason == "length"
        if raw.get("grammar_mode") == "json-schema":
            try:
                text = render_json_answer(text, self.choices)
            except ResponseFormatError as exc:
                if not cut_short:
                    raise
                tokens = generation.usage.completion_tokens
                raise ResponseFormatError(
                    f"the constrained JSON reply was cut by max_tokens after "
                    f"{tokens if tokens is not None else 'its'} tokens, before it closed; "
                    f"raise --max-tokens ({exc})"
                ) from exc
        cut = False
        if cut_short:
            text, cut = cut_open_citation(text)
        text, repeats = drop_repeats(text, self.choices)
        record: dict[str, Any] = {
            "grammar": self.grammar.name,
            "mode": self.mode,
            "citable_facts": self.choices.size,
            "facts_left_out": len(self.choices.dropped),
            **({"facts_left_out_why": why} if (why := self.choices.left_out_why()) else {}),
            "cut_open_citation": cut,
            "each_fact_once": ONCE_IN_DECODING if self.mode == "logits" else ONCE_AFTER_REPLY,
            "repeats_removed": repeats,
        }
        for key in ("grammar_s", "grammar_steered", "grammar_updates", "grammar_updates_refused"):
            if key in raw:
                record[key] = raw[key]
        return text, record
