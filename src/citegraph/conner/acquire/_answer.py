"""Downstream answers from acquired knowledge: NQ short answers and WoW responses.

CONNER's extrinsic metrics judge knowledge by what it does downstream: helpfulness compares the
loss of the gold answer given the knowledge, validity checks the answer a model generates from it.
:func:`generate_answers` produces those answers with the paper's few-shot answer prompts (Table
13; demonstrations are other items with their gold knowledge and gold answer, drawn as for
knowledge generation), one user message per sample, greedy by default.

The answer is the first non-empty line of the generation, without a repeated ``Answer:`` /
``Speaker 2:`` label (:func:`extract_answer`); the raw text is kept. Failed calls and samples
without knowledge are recorded in ``error`` (a failed call's class in ``error_type``), never
raised; ``too_long`` marks a prompt that does not fit the model's context (a failure that no
retry mends).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from citegraph.conner._types import Knowledge
from citegraph.conner.acquire._generate import (
    GeneratedKnowledge,
    GenerationOutcome,
    Progress,
    single_task,
)
from citegraph.conner.acquire._prompts import (
    DEFAULT_DEMO_MAX_WORDS,
    DEFAULT_SHOTS,
    PromptTemplate,
    answer_prompt,
    prompt_messages,
    prompt_version,
    select_demonstrations,
    template_of_kind,
)
from citegraph.datasets import ConnerSample
from citegraph.errors import ConfigError, EndpointError, ModelError, PromptTooLong
from citegraph.models import ChatModel, ChatRequest, GenerateConfig
from citegraph.runs import blocking, error_fields, run_bounded_async

__all__ = ["DownstreamAnswer", "extract_answer", "generate_answers"]

_LABEL = re.compile(r"^\s*(?:answer|speaker\s*2)\s*:\s*", re.IGNORECASE)


class DownstreamAnswer(GenerationOutcome):
    """The downstream answer generated for one sample from one knowledge text, or the error
    (what the extrinsic metrics judge the knowledge by; not KaLMA's
    :class:`~citegraph.kalma.AttributedAnswer`, an answer that cites KG facts)."""

    result_field = "answer"

    answer: str | None = Field(description="The extracted answer; None on error.")
    model: str = Field(description="The answering model's name.")
    knowledge_source: str | None = Field(
        default=None, description="The source of the knowledge the answer was generated from."
    )
    too_long: bool = Field(
        default=False,
        description="The error is that the prompt exceeds the model's context (retrying will "
        "not help).",
    )


def extract_answer(text: str) -> str:
    """The first non-empty line of ``text``, stripped, without a leading ``Answer:`` or
    ``Speaker 2:`` label ('' when there is none)."""
    for line in text.splitlines():
        line = _LABEL.sub("", line, count=1).strip()
        if line:
            return line
    return ""


def _index(knowledge: Sequence[Knowledge | GeneratedKnowledge]) -> dict[str, Any]:
    by_id: dict[str, Knowledge | GeneratedKnowledge] = {}
    for item in knowledge:
        if item.id in by_id:
            raise ConfigError(f"two knowledge texts for sample {item.id!r}")
        by_id[item.id] = item
    return by_id


async def generate_answers_async(
    samples: Sequence[ConnerSample],
    knowledge: Sequence[Knowledge | GeneratedKnowledge],
    model: ChatModel,
    *,
    template: PromptTemplate | str | None = None,
    shots: int = DEFAULT_SHOTS,
    pool: Sequence[ConnerSample] | None = None,
    demo_max_words: int | None = DEFAULT_DEMO_MAX_WORDS,
    temperature: float = 0.0,
    max_tokens: int = 64,
    seed: int = 0,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> list[DownstreamAnswer]:
    """Generate the downstream answer of each sample from its knowledge.

    Args:
        samples: The test items (all of one task).
        knowledge: One knowledge text per sample, matched by id (``Knowledge`` or the results
            of :func:`~citegraph.conner.acquire.generate_knowledge`; failed ones are recorded as
            errors).
        model: Any chat model.
        template: An ``answer-few-shot`` template or id; default the paper's best for the task.
        shots: Demonstrations per prompt (0: zero-shot use of the same template).
        pool: Where demonstrations come from (default ``samples``).
        demo_max_words: Longest demonstration knowledge, in words (None: no limit).
        temperature, max_tokens, seed: Sampling parameters (``seed`` also seeds the draw).
        concurrency: Requests in flight at once.
        progress: Called as ``progress(done, total)``.

    Returns:
        One result per sample, in order.

    Raises:
        ConfigError: Bad options, an unknown template, two knowledge texts for one sample, or
            samples of more than one task.
    """
    samples = list(samples)
    if not samples:
        return []
    chosen = template_of_kind(template, "answer-few-shot", single_task(samples, "answer"))
    version = prompt_version(chosen, shots=shots, seed=seed)
    config = GenerateConfig(temperature=temperature, max_tokens=max_tokens, seed=seed)
    by_id = _index(knowledge)
    demo_pool = list(pool) if pool is not None else samples

    plans: list[tuple[dict[str, Any], str | None, dict[str, Any] | None]] = []
    for sample in samples:
        common: dict[str, Any] = {"id": sample.id, "model": model.name, "prompt_version": version}
        item = by_id.get(sample.id)
        if isinstance(item, GeneratedKnowledge):
            if item.knowledge is None:  # the knowledge's failure, with its type
                why = {"error": f"no knowledge: {item.error}", "error_type": item.error_type}
                plans.append((common, None, why))
                continue
            item = item.knowledge
        if item is None:
            plans.append((common, None, {"error": "no knowledge for this sample"}))
            continue
        demos = select_demonstrations(
            sample, demo_pool, shots=shots, seed=seed, max_words=demo_max_words
        )
        common["knowledge_source"] = item.source
        common["demonstrations"] = tuple(d.id for d in demos)
        text = answer_prompt(sample, item.text, template=chosen, demonstrations=demos)
        plans.append((common, text, None))

    async def one(
        plan: tuple[dict[str, Any], str | None, dict[str, Any] | None],
    ) -> DownstreamAnswer:
        common, text, missing = plan
        if text is None:
            return DownstreamAnswer(answer=None, **(missing or {}), **common)
        request = ChatRequest(messages=prompt_messages(text), config=config)
        try:
            generation = await model.generate(request)
        except (EndpointError, ModelError) as exc:
            too_long = isinstance(exc, PromptTooLong)
            return DownstreamAnswer(answer=None, **error_fields(exc), too_long=too_long, **common)
        return DownstreamAnswer(
            answer=extract_answer(generation.text),
            raw_text=generation.text,
            finish_reason=generation.finish_reason,
            **common,
        )

    return await run_bounded_async(plans, one, concurrency=concurrency, progress=progress)


generate_answers = blocking(generate_answers_async)
