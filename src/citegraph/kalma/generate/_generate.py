"""Generate one attributed answer: prompt -> model -> text, with failures recorded, not raised.

A model call that fails after its retries (server down, rate limit never lifted, local model
error) yields an answer with ``error`` set and empty text. Runs record it with its reason, leave
it out of the scores (failed is not zero) and retry it when resumed.

With ``citations="constrained"`` the request carries the question's citation grammar
(:mod:`citegraph.kalma.constrain`), applied as the model's grammar mode says; a ``json-schema``
reply is rendered into KaLMA text (a reply that does not render is a failure, dropped from the
response cache so that a resumed run asks again), and a reply cut by ``max_tokens`` inside a
citation loses that unfinished citation. :attr:`GeneratedAnswer.constraint` records how.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import EndpointError, MissingDependency, ModelError
from citegraph.kalma.constrain import (
    JSON_INSTRUCTION,
    CitationChoices,
    CitationsMode,
    citation_grammar,
    cut_open_citation,
    render_json_answer,
)
from citegraph.kalma.generate._prompt import DEFAULT_PROMPT, build_messages
from citegraph.kg import Subgraph
from citegraph.models import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    GenerateConfig,
    Generation,
    Grammar,
    forget_cached,
    generate_config_for,
    grammar_mode_of,
)
from citegraph.runs import sync_twin


class GeneratedAnswer(BaseModel):
    """The model's answer to one question, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The raw generated text ('' on failure or empty output).")
    prompt_version: str
    error: str | None = Field(default=None, description="Why the model gave no answer.")
    generation: Generation | None = Field(default=None, description="Provider metadata.")
    citations: CitationsMode = Field(default="free", description="How citations were made.")
    constraint: dict[str, Any] | None = Field(
        default=None,
        description="Constrained citations: the grammar and its mode, the citable facts, the "
        "facts left out, seconds spent in the grammar (local models), whether an unfinished "
        "citation was cut at max_tokens.",
    )

    @property
    def empty_reason(self) -> str | None:
        """Why the answer is empty, or None when it has text."""
        if self.error:
            return f"generation failed: {self.error}"
        if not self.text.strip():
            return "the model returned an empty answer"
        return None


async def generate_answer_async(
    question: str,
    graphs: Sequence[Subgraph],
    model: ChatModel,
    *,
    config: GenerateConfig | None = None,
    prompt_version: str = DEFAULT_PROMPT,
    split: Literal["general", "specific"] = "specific",
    citations: CitationsMode = "free",
) -> GeneratedAnswer:
    """Ask ``model`` for an answer citing ``graphs`` (Table 13 prompt by default).

    Model failures (:class:`EndpointError`, :class:`ModelError`) are returned in ``error``;
    configuration errors still raise. Without ``config`` the model's own defaults apply
    (:func:`~citegraph.models.generate_config_for`: the embedded ``local`` model's short answers,
    stop sequences and repetition penalty, as on the command line).

    Raises:
        ConfigError: ``citations="constrained"`` with a model that cannot constrain its output.
    """
    messages = build_messages(question, graphs, version=prompt_version, split=split)
    sampling = config or generate_config_for(model)
    if citations == "free":
        request = ChatRequest(messages=tuple(messages), config=sampling)
        choices = grammar = None
    else:
        mode = grammar_mode_of(model)
        choices = CitationChoices(graphs)
        grammar = citation_grammar(choices)
        if mode == "json-schema":
            messages = _with_json_instruction(messages)
        request = ChatRequest(messages=tuple(messages), config=sampling, grammar=grammar)
    failed = GeneratedAnswer(text="", prompt_version=prompt_version, citations=citations)
    try:
        generation = await model.generate(request)
    except MissingDependency:
        raise
    except (EndpointError, ModelError) as exc:
        return failed.model_copy(update={"error": f"{type(exc).__name__}: {exc}"})
    text = generation.text.strip()
    if choices is None or grammar is None:
        return GeneratedAnswer(text=text, prompt_version=prompt_version, generation=generation)
    try:
        text, record = _finish_constrained(text, generation, choices, grammar)
    except (EndpointError, ModelError) as exc:  # a JSON reply that does not render: failed
        forget_cached(model, request)  # and asked again on resume, not read back from the cache
        return failed.model_copy(update={"error": f"{type(exc).__name__}: {exc}"})
    return GeneratedAnswer(
        text=text,
        prompt_version=prompt_version,
        generation=generation,
        citations=citations,
        constraint=record,
    )


def _with_json_instruction(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The messages with :data:`JSON_INSTRUCTION` after the system instruction."""
    first = messages[0]
    return [first.model_copy(update={"content": first.content + JSON_INSTRUCTION}), *messages[1:]]


def _finish_constrained(
    text: str, generation: Generation, choices: CitationChoices, grammar: Grammar
) -> tuple[str, dict[str, Any]]:
    """The answer text of a constrained generation and the record of how it was made."""
    raw = generation.raw or {}
    mode = raw.get("grammar_mode")
    if mode == "json-schema":
        text = render_json_answer(text, choices)
    cut = False
    if generation.finish_reason == "length":
        text, cut = cut_open_citation(text)
    record: dict[str, Any] = {
        "grammar": grammar.name,
        "mode": mode,
        "citable_facts": choices.size,
        "facts_left_out": len(choices.dropped),
        "cut_open_citation": cut,
    }
    if "grammar_s" in raw:
        record["grammar_s"] = raw["grammar_s"]
    return text, record


generate_answer = sync_twin(generate_answer_async)
