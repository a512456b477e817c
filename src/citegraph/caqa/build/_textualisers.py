"""Textualisers: the structured attribution, extended question and answer statement as text.

§4.2.3: the paper asks GPT-3.5-turbo to turn each category's subgraph into a citation (Table 8),
to extend the question when the query was extended (Table 9) and to turn the answer entities
into an answer statement (Table 10). :class:`LLMTextualiser` does the same with any
:class:`~citegraph.models.ChatModel` and the tables' prompts (``caqa/build/prompts/build.json``,
version ``caqa-build-v1``), each with its table's example as a one-shot demonstration, at
temperature 0. :class:`TemplateTextualiser` uses the deterministic templates of
:mod:`citegraph.caqa.build._text` instead (no model, offline, reproducible).

Failures: an error of the model (:class:`~citegraph.errors.EndpointError`,
:class:`~citegraph.errors.ModelError`) propagates unchanged, and a reply that is empty after
cleaning raises :class:`EmptyTextError` (a ``ModelError``). The builder records either as a
failed question, which a resumed build retries; nothing is silently replaced by a template.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any, Literal, ParamSpec, Protocol, runtime_checkable

from citegraph.caqa._types import Extension, Fact
from citegraph.caqa.build._text import (
    TEMPLATE_VERSION,
    answer_statement,
    extend_question,
    join_names,
    keeps_question,
    question_from_query,
    verbalise_facts,
)
from citegraph.caqa.queries import LogicalQuery, is_variable
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.models import ChatMessage, ChatModel, ChatRequest, GenerateConfig

#: The prompt version :class:`LLMTextualiser` uses by default.
BUILD_PROMPT_VERSION = "caqa-build-v1"
Step = Literal["citation", "question", "answer", "new_question"]
P = ParamSpec("P")
Keep = Literal["text", "line", "question"]


class EmptyTextError(ModelError):
    """The text model's reply was empty once its label, quotes and whitespace were removed."""

    def __init__(self, message: str, *, step: str, reply: str) -> None:
        super().__init__(message)
        self.step = step
        self.reply = reply


@runtime_checkable
class Textualiser(Protocol):
    """Writes a CAQA sample's text. ``name`` goes into every sample's ``text_source``."""

    name: str
    version: str

    async def citation(self, facts: Sequence[Fact], labels: Mapping[str, str]) -> str:
        """The citation text of a structured attribution's facts."""
        ...

    async def question(
        self,
        original_question: str,
        original: LogicalQuery,
        extended: LogicalQuery,
        extension: Extension,
        added: Sequence[Fact],
        labels: Mapping[str, str],
    ) -> str:
        """The question of the extended query (the original one when nothing was extended)."""
        ...

    async def answer(self, question: str, answer_names: Sequence[str]) -> str:
        """The answer statement: a sentence that answers ``question`` with ``answer_names``."""
        ...

    async def new_question(self, query: LogicalQuery, labels: Mapping[str, str]) -> str:
        """A question for a query that has none (queries sampled from the KG)."""
        ...


def _awaitable(template: Callable[P, str]) -> Callable[P, Coroutine[Any, Any, str]]:
    """An async twin of a template function (the templates need no model and never wait)."""

    async def twin(*args: P.args, **kwargs: P.kwargs) -> str:
        return template(*args, **kwargs)

    twin.__doc__ = f":func:`~citegraph.caqa.build._text.{template.__name__}`."
    return twin


class TemplateTextualiser:
    """The deterministic templates of :mod:`citegraph.caqa.build._text` (``caqa-template-v1``)."""

    name = "template"
    version = TEMPLATE_VERSION
    citation = staticmethod(_awaitable(verbalise_facts))
    question = staticmethod(_awaitable(extend_question))
    answer = staticmethod(_awaitable(answer_statement))
    new_question = staticmethod(_awaitable(question_from_query))


# ---------------------------------------------------------------------------- prompts
@cache
def _prompt_file() -> dict[str, Any]:
    text = (resources.files("citegraph.caqa.build") / "prompts" / "build.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def build_prompts(version: str = BUILD_PROMPT_VERSION) -> dict[str, Any]:
    """The prompts of ``version``: ``citation``, ``question``, ``answer``, ``new_question``,
    each with ``source``, ``instruction``, ``input``, ``output_label`` and ``demo``.

    Raises:
        ConfigError: unknown version.
    """
    versions = _prompt_file()["versions"]
    if version not in versions:
        raise ConfigError(f"unknown CAQA build prompt version {version!r}; have {list(versions)}")
    prompts: dict[str, Any] = versions[version]
    return prompts


def _name(term: str, labels: Mapping[str, str]) -> str:
    return term if is_variable(term) else labels.get(term) or term


def render_subgraph(facts: Sequence[Fact], labels: Mapping[str, str]) -> str:
    """Facts as Table 8 writes a subgraph, by label: ``[("Mexico", "continent", "North
    America"), ...]``."""

    def quoted(term: str) -> str:
        return json.dumps(labels.get(term) or term, ensure_ascii=False)

    return (
        "["
        + ", ".join(
            f"({quoted(f.subject)}, {quoted(f.relation)}, {quoted(f.object)})" for f in facts
        )
        + "]"
    )


def render_logical_form(query: LogicalQuery, labels: Mapping[str, str]) -> str:
    """A query as Table 9 writes one, by label: ``[(?a, country, Mexico) . (...) .]``.

    A union joins its patterns with ``UNION``; a single answer type adds ``(?a, type, T) .``.
    """
    patterns = [
        f"({_name(e.subject, labels)}, {_name(e.relation, labels)}, {_name(e.object, labels)}) ."
        for e in query.edges
    ]
    body = " UNION ".join(patterns) if query.operator == "or" else " ".join(patterns)
    if len(query.answer_types) == 1:
        body += f" ({query.answer}, type, {_name(query.answer_types[0], labels)}) ."
    return f"[{body}]"


def prompt_messages(step: Step, fields: Mapping[str, str], *, version: str) -> list[ChatMessage]:
    """The chat of one step: instruction, the table's demonstration, then ``fields``."""
    prompt = build_prompts(version)[step]
    demo = dict(prompt["demo"])
    output = demo.pop("output")
    return [
        ChatMessage(role="system", content=prompt["instruction"]),
        ChatMessage(role="user", content=prompt["input"].format(**demo)),
        ChatMessage(role="assistant", content=output),
        ChatMessage(role="user", content=prompt["input"].format(**fields)),
    ]


# ---------------------------------------------------------------------------- replies
_LABEL = re.compile(
    r"^[*_\s]*(?:extended\s+question|answer\s+statement|sentences?|citation|question|"
    r"statement|answer)\s*[*_]*\s*:\s*[*_]*\s*",
    re.IGNORECASE,
)
_QUOTES = {'"': '"', "“": "”", "'": "'", "‘": "’"}


def _unquote(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def clean_reply(text: str, *, keep: Keep) -> str:
    """A reply without an echoed label (``Sentences:``, ``Extended question:``, ``Answer
    statement:``...), wrapping quotes and surrounding whitespace.

    Args:
        text: The model's reply.
        keep: ``"text"``: all lines, joined with spaces (citations); ``"line"``: the first
            non-empty line (answer statements); ``"question"``: the first non-empty line, cut
            after its first ``?``.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines:
        lines[0] = _LABEL.sub("", lines[0])
    lines = [line for line in lines if line]
    if not lines:
        return ""
    if keep == "text":
        return _unquote(" ".join(lines))
    line = _unquote(lines[0])
    end = line.find("?") if keep == "question" else -1
    if end < 0:
        return line
    question = line[: end + 1]
    if question[0] in _QUOTES and _QUOTES[question[0]] not in question[1:]:
        question = question[1:].strip()  # the closing quote came after the "?"
    return question


# ---------------------------------------------------------------------------- textualiser
class LLMTextualiser:
    """The paper's GPT-3.5-turbo textualisation (Tables 8-10) with any chat model.

    ``question`` asks the model only when the query gained patterns by intersection; for
    ``none`` and ``union`` (same-name subjects, so the question reads the same) it returns the
    original question without a call.

    Args:
        model: The chat model.
        temperature: Sampling temperature (the paper's generation setting is not stated; 0 is
            deterministic).
        seed: Sent with every request.
        max_tokens: The longest reply.
        prompt_version: Which prompts of ``caqa/build/prompts/build.json``.

    Raises:
        ConfigError: unknown ``prompt_version``.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 256,
        prompt_version: str = BUILD_PROMPT_VERSION,
    ) -> None:
        build_prompts(prompt_version)  # fail early on an unknown version
        self.model = model
        self.prompt_version = prompt_version
        self.config = GenerateConfig(temperature=temperature, seed=seed, max_tokens=max_tokens)
        self.name = f"llm:{model.name}:{prompt_version}"
        self.version = prompt_version

    async def _ask(self, step: Step, fields: Mapping[str, str], *, keep: Keep) -> str:
        messages = prompt_messages(step, fields, version=self.prompt_version)
        generation = await self.model.generate(ChatRequest.of(messages, self.config))
        text = clean_reply(generation.text, keep=keep)
        if not text:
            raise EmptyTextError(
                f"{self.model.name} returned an empty {step} text: {generation.text!r}",
                step=step,
                reply=generation.text,
            )
        return text

    async def citation(self, facts: Sequence[Fact], labels: Mapping[str, str]) -> str:
        """Table 8: the subgraph as sentences (``""`` for no facts, without a call)."""
        if not facts:
            return ""
        fields = {"subgraph": render_subgraph(facts, labels)}
        return await self._ask("citation", fields, keep="text")

    async def question(
        self,
        original_question: str,
        original: LogicalQuery,
        extended: LogicalQuery,
        extension: Extension,
        added: Sequence[Fact],
        labels: Mapping[str, str],
    ) -> str:
        """Table 9: the original question extended to the extended query."""
        if keeps_question(extension, extended, labels):
            return original_question
        fields = {
            "original_question": original_question,
            "original": render_logical_form(original, labels),
            "extended": render_logical_form(extended, labels),
        }
        return await self._ask("question", fields, keep="question")

    async def answer(self, question: str, answer_names: Sequence[str]) -> str:
        """Table 10: the answer entities (joined "A, B and C") as an answer statement.

        Raises:
            DataError: no answer names.
        """
        if not answer_names:
            raise DataError("an answer statement needs at least one answer name", field="answers")
        fields = {"question": question, "answer": join_names(answer_names)}
        return await self._ask("answer", fields, keep="line")

    async def new_question(self, query: LogicalQuery, labels: Mapping[str, str]) -> str:
        """citegraph's prompt: a question for a sampled query."""
        fields = {"query": render_logical_form(query, labels), "answer": query.answer}
        return await self._ask("new_question", fields, keep="question")
