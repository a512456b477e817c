"""CONNER's prompts: zero-shot and few-shot knowledge generation, few-shot answer generation.

The templates are data (``prompts/knowledge.json``, versioned): the paper's Table 11 (zero-shot
knowledge prompts), Table 12 (few-shot knowledge example templates) and Table 13 (few-shot answer
example templates), every one of them, with the ones the paper marks best as the defaults.

A few-shot prompt is ``example_1 \\n ... example_k \\n example_test`` (paper Appendix F.2): the
demonstrations are other test items rendered with their gold knowledge (and gold answer), the
test example is the template with its target slot left empty. The paper draws demonstrations
from the training set, which CONNER did not release; here they come from a pool of items (by
default the test set itself), drawn with a seeded generator per item, never the item itself nor
an item with the same gold knowledge (5 NQ passages and many WoW sentences repeat), never a WoW
item without knowledge (``no_passages_used``), and (default) never a passage over 350 words, the
limit of the authors' prompt maker. The default number of shots is 8, as in the paper's
demonstration-selection experiment (n = 8) and the authors' helpfulness code (``[:8]``).

Every prompt carries a version, ``conner-v<file version>/<template id>`` plus
``/<k>shot-seed<seed>`` for few-shot prompts, recorded in every output.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import NO_PASSAGE, ConnerSample, ConnerTask
from citegraph.errors import ConfigError
from citegraph.models import ChatMessage

__all__ = [
    "DEFAULT_DEMO_MAX_WORDS",
    "DEFAULT_SHOTS",
    "PROMPT_KINDS",
    "PromptKind",
    "PromptTemplate",
    "answer_prompt",
    "default_template",
    "get_template",
    "knowledge_prompt",
    "prompt_messages",
    "prompt_templates",
    "prompt_version",
    "select_demonstrations",
]

PromptKind = Literal["knowledge-zero-shot", "knowledge-few-shot", "answer-few-shot"]
PROMPT_KINDS: tuple[PromptKind, ...] = (
    "knowledge-zero-shot",
    "knowledge-few-shot",
    "answer-few-shot",
)
#: Demonstrations per few-shot prompt by default.
DEFAULT_SHOTS = 8
#: Longest demonstration knowledge (words) by default, as the authors' prompt maker.
DEFAULT_DEMO_MAX_WORDS = 350


class PromptTemplate(BaseModel):
    """One prompt or example template of the paper's Tables 11-13."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable id, e.g. 'nq-zs-4', 'wow-fs-5', 'nq-ans-1'.")
    task: ConnerTask
    kind: PromptKind
    template: str = Field(description="str.format template (see the module docstring).")
    best: bool = Field(description="Marked best in the paper (the default for its task).")
    separator: str = Field(description="What joins the examples of a few-shot prompt.")
    target: Literal["knowledge", "answer"] | None = Field(
        description="The slot left empty in the test example (None: zero-shot)."
    )
    note: str | None = Field(default=None, description="How the text was read from the paper.")
    file_version: int = Field(description="Version of the prompts file.")

    @property
    def version(self) -> str:
        """``conner-v<file version>/<id>``."""
        return f"conner-v{self.file_version}/{self.id}"


@cache
def _load() -> tuple[PromptTemplate, ...]:
    raw = json.loads(
        resources.files("citegraph.conner.acquire")
        .joinpath("prompts/knowledge.json")
        .read_text("utf-8")
    )
    out = []
    for kind, group in raw["sets"].items():
        for entry in group["prompts"]:
            out.append(
                PromptTemplate(
                    kind=kind,
                    separator=entry.pop("separator", group["separator"]),
                    target=group["target"],
                    file_version=raw["version"],
                    **entry,
                )
            )
    return tuple(out)


def prompt_templates(
    kind: PromptKind | None = None, task: ConnerTask | None = None
) -> list[PromptTemplate]:
    """All templates, optionally of one kind and task, in the paper's order."""
    return [t for t in _load() if kind in (None, t.kind) and task in (None, t.task)]


def get_template(template_id: str) -> PromptTemplate:
    """The template with this id.

    Raises:
        ConfigError: No such id (the message lists the known ones).
    """
    for t in _load():
        if t.id == template_id:
            return t
    known = ", ".join(t.id for t in _load())
    raise ConfigError(f"unknown CONNER prompt {template_id!r}; known: {known}")


def default_template(kind: PromptKind, task: ConnerTask) -> PromptTemplate:
    """The template the paper marks best for ``kind`` and ``task``."""
    if kind not in PROMPT_KINDS:
        raise ConfigError(f"unknown prompt kind {kind!r}; choose one of {PROMPT_KINDS}")
    (best,) = [t for t in prompt_templates(kind, task) if t.best]
    return best


def prompt_version(template: PromptTemplate, *, shots: int = 0, seed: int = 0) -> str:
    """The version recorded with outputs: ``template.version``, plus ``/<k>shot-seed<s>``
    for few-shot templates."""
    if template.target is None:
        return template.version
    return f"{template.version}/{shots}shot-seed{seed}"


def select_demonstrations(
    target: ConnerSample,
    pool: Sequence[ConnerSample],
    *,
    shots: int = DEFAULT_SHOTS,
    seed: int = 0,
    max_words: int | None = DEFAULT_DEMO_MAX_WORDS,
) -> list[ConnerSample]:
    """Draw ``shots`` demonstrations for ``target`` from ``pool`` (see the module docstring).

    The draw depends only on ``seed``, ``target.id`` and the set of eligible pool items (not
    their order), so an item gets the same demonstrations whatever else is generated and in
    whatever order. Fewer than ``shots`` are returned when the pool has fewer eligible items.

    Raises:
        ConfigError: ``shots`` < 0 or ``max_words`` < 1.
    """
    if shots < 0:
        raise ConfigError(f"shots must be >= 0, got {shots}")
    if max_words is not None and max_words < 1:
        raise ConfigError(f"max_words must be >= 1, got {max_words}")
    eligible = [
        s
        for s in pool
        if s.task == target.task
        and s.id != target.id
        and s.gold_knowledge != target.gold_knowledge
        and s.gold_knowledge != NO_PASSAGE
        and (max_words is None or len(s.gold_knowledge.split()) <= max_words)
    ]
    eligible.sort(key=lambda s: s.id)  # the draw does not depend on the pool's order
    rng = random.Random(f"conner-demos:{seed}:{target.id}")
    return rng.sample(eligible, min(shots, len(eligible)))


def template_of_kind(
    template: PromptTemplate | str | None, kind: PromptKind, task: ConnerTask
) -> PromptTemplate:
    """``template`` (a template or its id; None: the paper's best of ``kind`` for ``task``),
    checked to be of ``kind`` and for ``task``.

    Raises:
        ConfigError: Unknown id, or a template of another kind or task.
    """
    if template is None:
        return default_template(kind, task)
    chosen = get_template(template) if isinstance(template, str) else template
    if chosen.kind != kind or chosen.task != task:
        article = "an" if kind.startswith("a") else "a"
        raise ConfigError(
            f"prompt {chosen.id!r} is a {chosen.kind} prompt for {chosen.task!r}, not "
            f"{article} {kind} prompt for {task!r}"
        )
    return chosen


def _resolve(
    template: PromptTemplate | str | None, kind: PromptKind, task: ConnerTask
) -> PromptTemplate:
    if template is None:
        return default_template(kind, task)
    resolved = get_template(template) if isinstance(template, str) else template
    allowed = (
        ("knowledge-zero-shot", "knowledge-few-shot") if kind != "answer-few-shot" else (kind,)
    )
    if resolved.kind not in allowed or resolved.task != task:
        raise ConfigError(
            f"prompt {resolved.id!r} is a {resolved.kind} prompt for {resolved.task!r}; "
            f"expected a {' or '.join(allowed)} prompt for {task!r}"
        )
    return resolved


def _fill(template: PromptTemplate, sample: ConnerSample, knowledge: str, answer: str) -> str:
    values = {
        "topic": sample.topic,
        "query": sample.query,
        "utterance": sample.query,
        "knowledge": knowledge,
        "answer": answer,
        "response": answer,
    }
    return template.template.format_map(values)


def _test_example(template: PromptTemplate, sample: ConnerSample, knowledge: str) -> str:
    text = _fill(template, sample, knowledge, "")
    return text.rstrip(" ") if template.target is not None else text


def knowledge_prompt(
    sample: ConnerSample,
    *,
    template: PromptTemplate | str | None = None,
    demonstrations: Sequence[ConnerSample] = (),
) -> str:
    """The knowledge-generation prompt for ``sample``.

    Args:
        sample: The test item.
        template: A template or id of kind ``knowledge-zero-shot`` or ``knowledge-few-shot``;
            default the paper's best zero-shot prompt for the task.
        demonstrations: For a few-shot template: the items shown first, with their gold
            knowledge (see :func:`select_demonstrations`).

    Raises:
        ConfigError: Unknown template, one of another task or kind, or demonstrations given
            for a zero-shot template.
    """
    chosen = _resolve(template, "knowledge-zero-shot", sample.task)
    if chosen.target is None:
        if demonstrations:
            raise ConfigError(f"zero-shot prompt {chosen.id!r} takes no demonstrations")
        return _fill(chosen, sample, "", "")
    parts = [_fill(chosen, d, d.gold_knowledge, d.gold_answer) for d in demonstrations]
    parts.append(_test_example(chosen, sample, ""))
    return chosen.separator.join(parts)


def answer_prompt(
    sample: ConnerSample,
    knowledge: str,
    *,
    template: PromptTemplate | str | None = None,
    demonstrations: Sequence[ConnerSample] = (),
) -> str:
    """The few-shot answer-generation prompt (paper Table 13) for ``sample`` given ``knowledge``.

    Demonstrations show their gold knowledge and gold answer (NQ) or response (WoW); the test
    example shows ``knowledge`` and leaves the answer empty.

    Raises:
        ConfigError: Unknown template or one of another task or kind.
    """
    chosen = _resolve(template, "answer-few-shot", sample.task)
    parts = [_fill(chosen, d, d.gold_knowledge, d.gold_answer) for d in demonstrations]
    parts.append(_test_example(chosen, sample, knowledge))
    return chosen.separator.join(parts)


def prompt_messages(text: str) -> tuple[ChatMessage, ...]:
    """A prompt as chat messages: one user message (the paper uses no system prompt)."""
    return (ChatMessage(role="user", content=text),)
