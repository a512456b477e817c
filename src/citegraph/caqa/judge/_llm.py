"""LLM attribution judges: any chat model, a Table 11 prompt, and label extraction.

:class:`LLMJudge` sends one chat request per sample (the prompt's messages from
:func:`~citegraph.caqa.judge._prompts.chat_messages`), reads the label with
:func:`~citegraph.caqa.judge._labels.extract_label` and returns one :class:`Judgement` per sample:

================================  ==========  ===============  ====================================
outcome                           ``label``   ``error``        ``raw``
================================  ==========  ===============  ====================================
a label was read                  the label   ``None``         the reply
no label in the reply             ``None``    ``unparseable``  the reply
the model failed (EndpointError,  ``None``    ``"<Kind>:       ``""``
ModelError) for this sample                   <message>"``
================================  ==========  ===============  ====================================

A judgement of a failed model also holds the error's module-qualified class (``error_type``,
which the judged sample's record keeps). A missing optional dependency
(:class:`~citegraph.errors.MissingDependency`) and configuration errors are raised: they are not
about one sample.

Constrained replies (``replies="constrained"``) limit the reply to exactly one label word the
extraction reads (:func:`label_grammar`: the prompt's option words, plus a word for any label
they leave unread, as ``Insufficient`` in reference mode), with the grammar machinery of
:mod:`citegraph.models` (a logits processor for local models, the servers' grammar or JSON-schema
fields); a model that cannot constrain is refused when the judge is built. ``free`` (the
papers' setting) reads whatever the model wrote.

Structured output (``structured=True``) asks the server for ``{"label": <one of the prompt's
option words>}`` through OpenAI's ``response_format`` (``json_schema``, strict). Only
OpenAI-compatible servers receive it (vLLM and Ollama honour it too); local and mock models
ignore it and answer in free text, which the same extraction reads.

:class:`AttrScoreJudge` is an :class:`LLMJudge` with the ``attrscore`` prompt (AttrScore's
Attributable / Extrapolatory / Contradictory, mapped to supportive / irrelevant / contradictory as
Appendix C does).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any, ClassVar, get_args

from citegraph.caqa._types import CaqaSample, Label
from citegraph.caqa.judge._evaluator import Judgement, LabelSet
from citegraph.caqa.judge._labels import ExtractionMode, extract_label
from citegraph.caqa.judge._prompts import (
    chat_messages,
    judge_prompt,
    prompt_label_set,
    prompt_version,
)
from citegraph.caqa.judge._rules import CaqaRules
from citegraph.errors import ConfigError, EndpointError, MissingDependency, ModelError
from citegraph.models import ChatModel, ChatRequest, GenerateConfig, Grammar
from citegraph.models.chat import (
    ResolvedReplies,
    choice_grammar,
    choice_reply_text,
    generation_record,
)
from citegraph.models.grammar import grammar_mode_of
from citegraph.runs import error_fields

__all__ = [
    "LABEL_GRAMMAR",
    "UNPARSEABLE",
    "AttrScoreJudge",
    "LLMJudge",
    "label_grammar",
    "label_options",
    "label_response_format",
]

#: The name and version of the label grammar (recorded with every constrained judge).
LABEL_GRAMMAR = "caqa-labels-v1"

#: ``Judgement.error`` of a reply no label could be read from.
UNPARSEABLE = "unparseable"

#: The option words of each label set, as the Table 11 prompts spell them.
_DEFAULT_OPTIONS: dict[str, tuple[str, ...]] = {
    "four": ("Supportive", "Insufficient", "Contradictory", "Irrelevant"),
    "binary": ("Supportive", "Unsupported"),
    "attrscore": ("Attributable", "Extrapolatory", "Contradictory"),
}
#: Words that name each label, tried in order for a label the prompt's options leave unread.
_LABEL_WORDS: tuple[str, ...] = (
    "Supportive", "Support", "Attributable", "Insufficient", "Missing", "Contradictory",
    "Irrelevant", "Extrapolatory", "Unsupported",
)  # fmt: skip
_OPTIONS_RE = re.compile(r"Options:\s*([^.\n]+)")


def label_options(prompt: str) -> tuple[str, ...]:
    """The label words prompt ``prompt`` offers the model, in its order.

    Read from the prompt's ``Options: A, B, C or D`` sentence when it has one (so the authors'
    ``reference-4way`` gives ``Support, Missing, ...``), else the label set's usual words
    (``zero-shot``: Supportive, Insufficient, Contradictory, Irrelevant).
    """
    found = _OPTIONS_RE.search(str(judge_prompt(prompt).get("instruction", "")))
    if found is None:
        return _DEFAULT_OPTIONS[prompt_label_set(prompt)]
    words = re.split(r",\s*|\s+or\s+", found.group(1).strip())
    return tuple(w.strip() for w in words if w.strip())


def label_response_format(prompt: str) -> dict[str, Any]:
    """The OpenAI ``response_format`` asking for ``{"label": <option word>}`` (strict JSON
    schema; the enum is :func:`label_options` of ``prompt``)."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "attribution_label",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"label": {"type": "string", "enum": list(label_options(prompt))}},
                "required": ["label"],
                "additionalProperties": False,
            },
        },
    }


def label_grammar(prompt: str, extraction: ExtractionMode | CaqaRules = "paper") -> Grammar:
    """The grammar of a reply that is one label word of ``prompt``'s label set.

    The words are the prompt's options (:func:`label_options`) that ``extraction`` reads as a
    label, then, for each label of the set none of them gives, the first word of
    ``Supportive, Support, Attributable, Insufficient, Missing, Contradictory, Irrelevant,
    Extrapolatory, Unsupported`` that gives it; so every reply the grammar allows has a label,
    and every label can be given. JSON-schema servers answer ``{"label": <word>}``.

    Example:
        >>> label_grammar("reference-4way", "paper").lark
        'start: "Support" | "Missing" | "Contradictory" | "Irrelevant"'
        >>> label_grammar("zero-shot", "reference").lark
        'start: "Supportive" | "Contradictory" | "Irrelevant" | "Missing"'
    """
    label_set = prompt_label_set(prompt)
    words: dict[str, Label] = {}
    for word in label_options(prompt):
        label = extract_label(word, label_set, mode=extraction)
        if label is not None and label not in words.values():
            words[word] = label
    for word in _LABEL_WORDS:
        label = extract_label(word, label_set, mode=extraction)
        if label is not None and label not in words.values():
            words[word] = label
    return choice_grammar(LABEL_GRAMMAR, list(words), key="label")


class LLMJudge:
    """An :class:`~citegraph.caqa.Evaluator` asking a chat model (module docstring).

    Args:
        model: The chat model (closed by :meth:`aclose`).
        prompt: A chat or Alpaca-style judge prompt name (``zero-shot``, the default,
            ``few-shot``, ``alpaca``, ``attrscore``, ``reference-4way``...); its label set is the
            judge's.
        temperature: Sampling temperature (0: greedy, as the paper's GPT runs).
        seed: Sampling seed sent with every request.
        max_tokens: Most tokens per reply.
        structured: Ask for JSON ``{"label": ...}`` (OpenAI ``response_format``).
        extraction: ``"paper"`` (robust) or ``"reference"`` (the authors' first-match regex), or
            the :class:`~citegraph.caqa.CaqaRules` of one.
        concurrency: Most samples in flight (default: the model's request limit, else 8).
        replies: ``"free"`` (the papers' setting) or ``"constrained"``: each reply one label
            word (:func:`label_grammar`).

    Raises:
        ConfigError: Unknown prompt, an NLI prompt, an unknown extraction mode or a bad limit;
            a prompt given to a judge whose prompt is fixed (:class:`AttrScoreJudge`);
            constrained replies from a model that cannot constrain its output.

    Example:
        >>> from citegraph.models import MockChat
        >>> judge = LLMJudge(MockChat("Relationship Category: Supportive"))
        >>> judge.name
        'llm:mock/mock:caqa-table11-gpt-v1'
    """

    #: The prompt used when none is given.
    default_prompt: ClassVar[str] = "zero-shot"
    #: Whether the prompt is part of what the judge is (no other may be given).
    fixed_prompt: ClassVar[bool] = False

    def __init__(
        self,
        model: ChatModel,
        *,
        prompt: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int = 512,
        structured: bool = False,
        extraction: ExtractionMode | CaqaRules = "paper",
        concurrency: int | None = None,
        replies: ResolvedReplies = "free",
    ) -> None:
        if prompt is not None and self.fixed_prompt:
            name = type(self).__name__
            raise ConfigError(f"{name} always uses the {self.default_prompt!r} prompt")
        prompt = prompt or self.default_prompt
        if judge_prompt(prompt)["style"] not in ("chat", "alpaca"):
            raise ConfigError(f"judge prompt {prompt!r} is for NLI models; use NLIJudge")
        self.rules = CaqaRules.for_mode(extraction)
        if concurrency is not None and concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.model = model
        self.prompt = prompt
        self.prompt_version = prompt_version(prompt)
        self.extraction: ExtractionMode = self.rules.mode
        self.structured = structured
        self.config = GenerateConfig(temperature=temperature, seed=seed, max_tokens=max_tokens)
        if replies not in get_args(ResolvedReplies):
            raise ConfigError(f"judge replies {replies!r}: use 'free' or 'constrained'")
        self.replies: ResolvedReplies = replies
        self.grammar: Grammar | None = None
        if replies == "constrained":
            self.grammar_mode: str | None = grammar_mode_of(model)  # refuses before any item
            self.grammar = label_grammar(prompt, self.rules)
        else:
            self.grammar_mode = None
        use_format = structured and self.grammar is None  # a grammar carries its own JSON form
        self.response_format = label_response_format(prompt) if use_format else None
        self.concurrency = concurrency or int(getattr(model, "concurrency", 0) or 8)
        self._label_set = prompt_label_set(prompt)

    @property
    def name(self) -> str:
        """``llm:<model>:<prompt version>``, plus ``:constrained`` with constrained replies,
        ``:json`` with structured output and ``:reference-extraction`` with the authors'
        extraction."""
        name = f"llm:{self.model.name}:{self.prompt_version}"
        if self.grammar is not None:
            name += ":constrained"
        if self.structured:
            name += ":json"
        return name + self.rules.name_suffix

    @property
    def label_set(self) -> LabelSet:
        """The prompt's label set."""
        return self._label_set

    def request(self, sample: CaqaSample) -> ChatRequest:
        """The chat request sent for ``sample``."""
        return ChatRequest(
            messages=tuple(chat_messages(self.prompt, sample)),
            config=self.config,
            response_format=self.response_format,
            grammar=self.grammar,
        )

    def read(self, reply: str) -> Judgement:
        """The judgement a reply gives (label, or ``unparseable``)."""
        text = reply if self.grammar is None else choice_reply_text(reply, self.grammar)
        label = extract_label(text, self._label_set, mode=self.rules)
        return Judgement(label=label, raw=reply, error=None if label else UNPARSEABLE)

    async def judge_one(self, sample: CaqaSample) -> Judgement:
        """Judge one sample; a model failure becomes an error judgement. The judgement keeps
        what the model reported of its reply (``generation``, as records keep it)."""
        try:
            generation = await self.model.generate(self.request(sample))
        except MissingDependency:
            raise
        except (EndpointError, ModelError) as exc:
            return Judgement(label=None, raw="", **error_fields(exc))
        judgement = self.read(generation.text)
        return judgement.model_copy(update={"generation": generation_record(generation)})

    async def judge(self, samples: Sequence[CaqaSample]) -> list[Judgement]:
        """One judgement per sample, in order, at most ``concurrency`` requests at once."""
        semaphore = asyncio.Semaphore(self.concurrency)

        async def bounded(sample: CaqaSample) -> Judgement:
            async with semaphore:
                return await self.judge_one(sample)

        return list(await asyncio.gather(*(bounded(s) for s in samples)))

    async def aclose(self) -> None:
        """Close the chat model."""
        await self.model.aclose()

    def __repr__(self) -> str:
        return f"LLMJudge({self.name!r})"


class AttrScoreJudge(LLMJudge):
    """An :class:`LLMJudge` with AttrScore's three-way prompt (``attrscore``; Appendix C map),
    e.g. on ``hf/<path to attrscore-vicuna-13b>`` or a server; its options are
    :class:`LLMJudge`'s, and the prompt is always ``attrscore``."""

    default_prompt = "attrscore"
    fixed_prompt = True
