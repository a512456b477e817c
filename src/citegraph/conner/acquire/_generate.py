"""Generation-based knowledge acquisition: prompt a chat model for knowledge about each item.

:func:`generate_knowledge` renders the paper's zero-shot or few-shot knowledge prompt for each
sample (:mod:`citegraph.conner.acquire._prompts`), sends it as one user message, and returns one
:class:`GeneratedKnowledge` per sample, in order. A failed call (an
:class:`~citegraph.errors.EndpointError` or :class:`~citegraph.errors.ModelError` after the model's
own retries) is recorded in ``error`` (its class in ``error_type``) and the other samples go on; bad
options raise before any call. Decoding is greedy by default (temperature 0), as the paper reports.

The generated text is cleaned by :func:`clean_knowledge`: surrounding whitespace removed and,
since few-shot prompts invite a model to go on with another example, everything from a new
``Topic:`` line on dropped. An empty generation is kept as knowledge with empty text (the model
said nothing; metrics treat it as unmeasured), not as an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citegraph.conner._types import Knowledge
from citegraph.conner.acquire._prompts import (
    DEFAULT_DEMO_MAX_WORDS,
    DEFAULT_SHOTS,
    PromptKind,
    PromptTemplate,
    knowledge_prompt,
    prompt_messages,
    prompt_version,
    select_demonstrations,
    template_of_kind,
)
from citegraph.datasets import ConnerSample, ConnerTask
from citegraph.errors import ConfigError, EndpointError, ModelError
from citegraph.models import ChatModel, ChatRequest, GenerateConfig, Generation
from citegraph.models.chat import generation_record
from citegraph.runs import Progress, blocking, error_fields, run_bounded_async

__all__ = ["GeneratedKnowledge", "clean_knowledge", "generate_knowledge"]

_T = TypeVar("_T")
_R = TypeVar("_R")
_NEXT_EXAMPLE = re.compile(r"\n\s*Topic:")


class GenerationOutcome(BaseModel):
    """What one prompt for one sample gave: the result (the field :attr:`result_field` names) or
    the error, exactly one of them, with the prompt's version and the model's raw text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    result_field: ClassVar[str]
    """The field that holds the result (None exactly when ``error`` is set)."""

    id: str = Field(description="The sample id.")
    error: str | None = Field(default=None, description="Why generation failed.")
    error_type: str | None = Field(
        default=None,
        description="The module-qualified class of the error, when the model call raised it "
        "(what a failed record stores as its ``error_type``).",
    )
    raw_text: str | None = Field(
        default=None, description="The model's text before cleaning or extraction."
    )
    prompt_version: str = Field(description="The prompt's version (see citegraph.conner).")
    demonstrations: tuple[str, ...] = Field(
        default=(), description="Ids of the few-shot demonstrations, in prompt order."
    )
    finish_reason: str | None = Field(default=None, description="As the model reported it.")
    generation: dict[str, Any] | None = Field(
        default=None,
        description="What the model reported of its reply, as a record keeps it "
        "(:func:`~citegraph.models.chat.generation_record`: model, finish_reason, usage, cached, "
        "attempts, latency_s, and batch_size for a local model's fresh reply); None on error.",
    )

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if (getattr(self, self.result_field) is None) == (self.error is None):
            raise ValueError(f"exactly one of {self.result_field} and error is set")
        return self


class GeneratedKnowledge(GenerationOutcome):
    """The outcome of generating knowledge for one sample: knowledge, or the error."""

    result_field = "knowledge"

    knowledge: Knowledge | None = Field(description="The cleaned knowledge; None on error.")

    @property
    def ok(self) -> bool:
        """Whether knowledge was generated."""
        return self.knowledge is not None


def single_task(samples: Sequence[ConnerSample], doing: str) -> ConnerTask:
    """The task every sample (at least one) is of.

    Raises:
        ConfigError: The samples mix tasks (the message says to ``doing`` one at a time).
    """
    tasks = {s.task for s in samples}
    if len(tasks) > 1:
        raise ConfigError(f"samples mix tasks {sorted(tasks)}; {doing} one task at a time")
    return samples[0].task


def clean_knowledge(text: str) -> str:
    """Strip whitespace and drop a continuation that starts a new ``Topic:`` example."""
    match = _NEXT_EXAMPLE.search(text)
    return (text[: match.start()] if match else text).strip()


def _knowledge_template(
    prompt: str, template: PromptTemplate | str | None, task: ConnerTask
) -> PromptTemplate:
    kinds: dict[str, PromptKind] = {
        "zero-shot": "knowledge-zero-shot",
        "few-shot": "knowledge-few-shot",
    }
    if prompt not in kinds:
        raise ConfigError(f"prompt must be 'zero-shot' or 'few-shot', got {prompt!r}")
    return template_of_kind(template, kinds[prompt], task)


async def generate_knowledge_async(
    samples: Sequence[ConnerSample],
    model: ChatModel,
    *,
    prompt: Literal["zero-shot", "few-shot"] = "zero-shot",
    template: PromptTemplate | str | None = None,
    shots: int = DEFAULT_SHOTS,
    pool: Sequence[ConnerSample] | None = None,
    demo_max_words: int | None = DEFAULT_DEMO_MAX_WORDS,
    temperature: float = 0.0,
    top_p: float = 1.0,
    max_tokens: int = 256,
    seed: int = 0,
    demo_seed: int | None = None,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> list[GeneratedKnowledge]:
    """Generate knowledge for each sample with ``model`` (see the module docstring).

    Args:
        samples: The test items (all of one task).
        model: Any chat model (``citegraph.models.chat_model(...)``, ``MockChat``, ...).
        prompt: ``"zero-shot"`` (paper Table 11) or ``"few-shot"`` (Table 12).
        template: A template or id of that kind; default the paper's best for the task.
        shots: Few-shot demonstrations per prompt.
        pool: Where demonstrations come from (default ``samples``); see
            :func:`~citegraph.conner.acquire.select_demonstrations`.
        demo_max_words: Longest demonstration knowledge, in words (None: no limit).
        temperature, top_p, max_tokens, seed: Sampling parameters.
        demo_seed: Seed of the draw of demonstrations (default ``seed``); fixing it while
            ``seed`` varies samples several candidates from the same prompts (§5).
        concurrency: Requests in flight at once.
        progress: Called as ``progress(done, total)``.

    Returns:
        One result per sample, in order; knowledge source ``llm:<model>:<prompt version>``.

    Raises:
        ConfigError: Bad options, an unknown template, or samples of more than one task.
    """
    samples = list(samples)
    if not samples:
        return []
    chosen = _knowledge_template(prompt, template, single_task(samples, "generate"))
    few = chosen.target is not None
    demo_seed = seed if demo_seed is None else demo_seed
    version = prompt_version(chosen, shots=shots, seed=demo_seed)
    config = GenerateConfig(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed)
    source = f"llm:{model.name}:{version}"
    demo_pool = list(pool) if pool is not None else samples
    plans = []
    for sample in samples:
        demos = (
            select_demonstrations(
                sample, demo_pool, shots=shots, seed=demo_seed, max_words=demo_max_words
            )
            if few
            else []
        )
        text = knowledge_prompt(sample, template=chosen, demonstrations=demos)
        plans.append((sample, tuple(d.id for d in demos), text))

    async def one(plan: tuple[ConnerSample, tuple[str, ...], str]) -> GeneratedKnowledge:
        sample, demo_ids, text = plan
        common: dict[str, Any] = {
            "id": sample.id,
            "prompt_version": version,
            "demonstrations": demo_ids,
        }
        try:
            request = ChatRequest(messages=prompt_messages(text), config=config)
            generation = await model.generate(request)
        except (EndpointError, ModelError) as exc:
            return GeneratedKnowledge(knowledge=None, **error_fields(exc), **common)
        return _knowledge_result(generation, source, common)

    return await run_bounded_async(plans, one, concurrency=concurrency, progress=progress)


generate_knowledge = blocking(generate_knowledge_async)


def _knowledge_result(
    generation: Generation, source: str, common: dict[str, Any]
) -> GeneratedKnowledge:
    knowledge = Knowledge(id=common["id"], text=clean_knowledge(generation.text), source=source)
    return GeneratedKnowledge(
        knowledge=knowledge,
        raw_text=generation.text,
        finish_reason=generation.finish_reason,
        generation=generation_record(generation),
        **common,
    )
