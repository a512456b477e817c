"""Generate one attributed answer: prompt -> model -> text, with failures recorded, not raised.

A model call that fails after its retries (server down, rate limit never lifted, local model
error) yields an answer with ``error`` set and empty text. Runs record it with its reason, score
it as the chosen mode says (paper: zero; reference: skipped) and retry it when resumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import EndpointError, MissingDependency, ModelError
from citegraph.kalma.generate._prompt import DEFAULT_PROMPT, build_messages
from citegraph.kg import Subgraph
from citegraph.models import ChatModel, ChatRequest, GenerateConfig, Generation, generate_config_for
from citegraph.runs import sync_twin


class GeneratedAnswer(BaseModel):
    """The model's answer to one question, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The raw generated text ('' on failure or empty output).")
    prompt_version: str
    error: str | None = Field(default=None, description="Why the model gave no answer.")
    generation: Generation | None = Field(default=None, description="Provider metadata.")

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
) -> GeneratedAnswer:
    """Ask ``model`` for an answer citing ``graphs`` (Table 13 prompt by default).

    Model failures (:class:`EndpointError`, :class:`ModelError`) are returned in ``error``;
    configuration errors still raise. Without ``config`` the model's own defaults apply
    (:func:`~citegraph.models.generate_config_for`: the embedded ``local`` model's short answers,
    stop sequences and repetition penalty, as on the command line).
    """
    messages = build_messages(question, graphs, version=prompt_version, split=split)
    request = ChatRequest(messages=tuple(messages), config=config or generate_config_for(model))
    try:
        generation = await model.generate(request)
    except MissingDependency:
        raise
    except (EndpointError, ModelError) as exc:
        return GeneratedAnswer(
            text="", prompt_version=prompt_version, error=f"{type(exc).__name__}: {exc}"
        )
    return GeneratedAnswer(
        text=generation.text.strip(), prompt_version=prompt_version, generation=generation
    )


generate_answer = sync_twin(generate_answer_async)
