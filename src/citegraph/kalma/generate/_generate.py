"""Generate one attributed answer: prompt -> model -> text, with failures recorded, not raised.

A model call that fails after its retries (server down, rate limit never lifted, local model
error) yields an answer with ``error`` set (and ``error_type``, the error's class) and empty
text. Runs record it with its reason, leave
it out of the scores (failed is not zero) and retry it when resumed.

With ``citations="constrained"`` the request carries the question's citation grammar
(:mod:`citegraph.kalma.constrain`), applied as the model's grammar mode says; a ``json-schema``
reply is rendered into KaLMA text (a reply that does not render is a failure, dropped from the
response cache so that a resumed run asks again), and a reply cut by ``max_tokens`` inside a
citation loses that unfinished citation. :attr:`AttributedAnswer.constraint` records how.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import EndpointError, MissingDependency, ModelError
from citegraph.kalma.constrain import CitationConstraint, CitationsMode
from citegraph.kalma.generate._prompt import DEFAULT_PROMPT, build_messages
from citegraph.kg import Subgraph
from citegraph.models import ChatModel, ChatRequest, GenerateConfig, Generation
from citegraph.models.chat import generate_config_for
from citegraph.runs import blocking, error_fields, hand_back_slot


class AttributedAnswer(BaseModel):
    """The model's attributed answer to one question (text citing KG facts), or why there is
    none. Not CONNER's :class:`~citegraph.conner.acquire.DownstreamAnswer` (an answer made from
    knowledge, to judge the knowledge by)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The raw generated text ('' on failure or empty output).")
    prompt_version: str
    error: str | None = Field(default=None, description="Why the model gave no answer.")
    error_type: str | None = Field(
        default=None,
        description="The module-qualified class of the error, when ``error`` is set (what a "
        "failed record stores as its ``error_type``).",
    )
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
) -> AttributedAnswer:
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
    constraint = None
    if citations == "constrained":
        constraint = CitationConstraint.for_model(model, graphs)
    failed = AttributedAnswer(text="", prompt_version=prompt_version, citations=citations)
    record: dict[str, Any] | None = None
    try:
        if constraint is None:
            request = ChatRequest(messages=tuple(messages), config=sampling)
            generation = await model.generate(request)
            text = generation.text.strip()
        else:  # a JSON reply that does not render is a failed call too
            generation, text, record = await constraint.generate(model, messages, sampling)
    except MissingDependency:
        raise
    except (EndpointError, ModelError) as exc:
        await hand_back_slot()
        return failed.model_copy(update=error_fields(exc))
    await hand_back_slot()  # in a run, the next question's call starts before this is scored
    return AttributedAnswer(
        text=text,
        prompt_version=prompt_version,
        generation=generation,
        citations=citations,
        constraint=record,
    )


generate_answer = blocking(generate_answer_async)
