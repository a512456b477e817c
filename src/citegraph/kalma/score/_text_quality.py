"""KaLMA text quality (§4.1, App. B.2, Tables 14-17): a G-Eval style LLM judge, 1-5 per criterion.

One judge call per criterion (coherence, consistency, fluency, relevance) at temperature 0. The
criterion prompts are the paper's Tables 14-17, shipped verbatim (they equal the authors'
``gpteval_prompt.json``) in ``kalma/prompts/geval.json``, version ``kalma-geval-v1``.

``mode="paper"`` (default)
    System = criterion prompt + ``" Response is only one integer."``; user =
    ``"Question: {q}\\nKnowledge: {kg}\\nAnswer: {answer}"`` with the answer's citations removed
    (:func:`strip_citations`). The score is the first number standing alone in the reply, after
    dropping scale mentions (``1-5``, ``1 to 5``) and denominators (``/5``, ``out of 5``): ``"4"``,
    ``"Score: 4"``, ``"4/5"``, ``"I'd rate it 4 out of 5"`` and ``"Coherence (1-5): 4"`` all give
    4. A number glued to a letter (``Q1``, ``GPT-4``, ``5th``) does not stand alone. The score is
    unmeasured (``None``, reply and reason recorded, left out of the mean) when the reply is
    empty, has no such number, when that number has a fractional part (``"3.5"``: the prompt asks
    for an integer and rounding would invent a judgement; ``"4.0"`` counts as 4), or when it is
    outside 1-5. A judge call that fails after the model's own retries (rate limit, server error,
    unreachable, malformed response) is unmeasured too; request errors (:class:`ClientError`) and
    model errors propagate.
``mode="reference"`` (the authors' ``GPT_EVAL.py``)
    System = prompt + ``"Response is only one integer."`` (no space: ``"...Criteria.Response
    is..."``); user = ``"Question: %s/nKnowledge: %s/nAnswer: %s"`` with the literal ``/n`` of
    their script, the answer cleaned with their regex. Score: if the reply is longer than 20
    characters only its last 10 are read; the first run of digits is the score; with none the
    score defaults to 3 (counted in ``n_defaulted``). Values above 5 are kept: the script's
    ``assert _score <= 5`` fails *after* the assignment and its ``except`` only prints, so the
    value stays (counted in ``n_out_of_range``). A failed call gives the script an empty reply,
    hence 3.

``replies="constrained"`` (either mode)
    The judge's reply is limited to one digit 1-5 (:func:`score_grammar`, ``kalma-geval-score-v1``;
    a JSON-schema server answers ``{"score": n}``, read back as ``n``) with the grammar machinery
    of :mod:`citegraph.models`, so every criterion gets a score; the same parsing then reads it.
    A model that cannot constrain is refused before its first call. ``free`` (the default, the
    papers' setting) reads what the model wrote. Constrained verdicts and summaries record
    ``judge_replies: constrained``; free ones carry no such key, as before.

The paper says text-davinci-003 judged 100 randomly sampled outputs; the script uses
``gpt-3.5-turbo-0613`` on the *first* 100 answers whose KG is not empty (:func:`reference_subset`).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from citegraph.errors import (
    ConfigError,
    EndpointUnavailable,
    RateLimited,
    ResponseFormatError,
    ServerError,
)
from citegraph.kalma._prompt_files import prompt_file
from citegraph.kalma._rules import KalmaRules, Mode, rules_of
from citegraph.kalma.parse import reference_plain, strip_citations
from citegraph.metrics import summarise_runs
from citegraph.models import ChatMessage, ChatModel, ChatRequest, GenerateConfig, Grammar
from citegraph.models.chat import ResolvedReplies, choice_grammar, choice_reply_text
from citegraph.models.grammar import grammar_mode_of
from citegraph.runs import blocking

Criterion = Literal["coherence", "consistency", "fluency", "relevance"]
CRITERIA: tuple[Criterion, ...] = ("coherence", "consistency", "fluency", "relevance")
GEVAL_VERSION = "kalma-geval-v1"
#: The name and version of the score grammar (recorded with constrained verdicts).
SCORE_GRAMMAR = "kalma-geval-score-v1"

#: Judge sampling: greedy, short replies (the prompt asks for one integer).
JUDGE_CONFIG = GenerateConfig(temperature=0.0, top_p=1.0, max_tokens=32, seed=0)

EMPTY_REPLY = "empty reply"
NO_SCORE = "no integer score in the reply"
NON_INTEGER = "non-integer score"
OUT_OF_RANGE = "score outside 1-5"
JUDGE_FAILED = "judge call failed"
DEFAULTED = "no digits in the (last 10 characters of the) reply: the authors' default 3"
KEPT_OUT_OF_RANGE = "score outside 1-5, kept as the authors' script keeps it"

_TRANSIENT = (RateLimited, ServerError, EndpointUnavailable, ResponseFormatError)
_NUMBER = r"\d+(?:\.\d+)?"
_TOKEN = re.compile(
    rf"(?P<range>(?<![\w.,-]){_NUMBER}\s*(?:-|–|—|\bto\b)\s*{_NUMBER})"
    rf"|(?P<denominator>(?:/|\bout\s+of\b)\s*{_NUMBER})"
    rf"|(?P<number>(?<![\w.,-]){_NUMBER}(?![\w]|[.,]\d))",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"[0-9]+")


def score_grammar() -> Grammar:
    """The grammar of a judge reply that is one score: ``1`` to ``5`` (JSON ``{"score": n}``).

    Example:
        >>> score_grammar().gbnf
        'root ::= "1" | "2" | "3" | "4" | "5"'
    """
    return choice_grammar(SCORE_GRAMMAR, [str(n) for n in range(1, 6)], key="score")


def _drop_free(out: dict[str, Any]) -> dict[str, Any]:
    """``judge_replies`` left out when free, so free records and metrics are as before."""
    if out.get("judge_replies") == "free":
        out.pop("judge_replies")
    return out


def _geval() -> dict[str, Any]:
    return prompt_file("geval.json")


def geval_prompt(criterion: str) -> str:
    """The criterion's instruction (paper Tables 14-17), verbatim.

    Raises:
        ConfigError: On an unknown criterion.
    """
    _check_criteria([criterion])
    prompt: str = _geval()["criteria"][criterion]
    return prompt


def judge_messages(
    question: str,
    knowledge_text: str,
    answer: str,
    criterion: str,
    *,
    mode: Mode | KalmaRules = "paper",
) -> list[ChatMessage]:
    """The system and user messages of one judge call (see the module docstring).

    Args:
        question: The question.
        knowledge_text: The KG context as the answering model saw it (e.g. ``flatten_kg``).
        answer: The answer, citations included (they are removed here).
        criterion: One of :data:`CRITERIA`.
        mode: ``"paper"`` or ``"reference"``, or their rules.
    """
    rules = rules_of(mode)
    prompt = geval_prompt(criterion)
    suffix: str = _geval()["score_instruction"]
    if rules.judge_script_prompt:
        system = prompt + suffix
        user = "Question: %s/nKnowledge: %s/nAnswer: %s" % (  # noqa: UP031 (the authors' bug)
            question,
            knowledge_text,
            reference_plain(answer),
        )
    else:
        system = f"{prompt} {suffix}"
        plain = strip_citations(answer)
        user = f"Question: {question}\nKnowledge: {knowledge_text}\nAnswer: {plain}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


class ParsedScore(BaseModel):
    """A judge reply read as a score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    score: int | None = Field(description="The score; None when unmeasured (paper mode).")
    reason: str | None = Field(default=None, description="Why unmeasured, defaulted or odd.")
    defaulted: bool = Field(default=False, description="Reference mode: the default 3 was used.")


def parse_score(reply: str, *, mode: Mode | KalmaRules = "paper") -> ParsedScore:
    """Read a judge reply as a 1-5 score (rules in the module docstring).

    Example:
        >>> parse_score("I'd rate it 4 out of 5").score
        4
    """
    if rules_of(mode).judge_script_score:
        text = reply[-10:] if len(reply) > 20 else reply
        found = _DIGITS.search(text)
        if found is None:
            return ParsedScore(score=3, reason=DEFAULTED, defaulted=True)
        value = int(found.group())
        return ParsedScore(score=value, reason=KEPT_OUT_OF_RANGE if value > 5 else None)
    if not reply.strip():
        return ParsedScore(score=None, reason=EMPTY_REPLY)
    number = next((m.group("number") for m in _TOKEN.finditer(reply) if m.group("number")), None)
    if number is None:
        return ParsedScore(score=None, reason=NO_SCORE)
    whole, _, fraction = number.partition(".")
    if fraction.strip("0"):
        return ParsedScore(score=None, reason=NON_INTEGER)
    value = int(whole)
    if not 1 <= value <= 5:
        return ParsedScore(score=None, reason=OUT_OF_RANGE)
    return ParsedScore(score=value)


class CriterionScore(BaseModel):
    """The judge's verdict on one criterion for one answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    criterion: str = Field(description="coherence, consistency, fluency or relevance.")
    score: int | None = Field(
        description="1-5 (reference mode: any parsed value); None: unmeasured."
    )
    reply: str = Field(description="The judge's reply, verbatim ('' when the call failed).")
    reason: str | None = Field(default=None, description="Why unmeasured, defaulted or odd.")
    defaulted: bool = Field(default=False, description="Reference mode: the default 3 was used.")


class TextQuality(BaseModel):
    """The text-quality verdicts for one answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: str = Field(description="'paper' or 'reference'.")
    prompt_version: str = Field(description="Version of the criterion prompts.")
    judge: str = Field(description="The judge model, as provider/model.")
    scores: dict[str, CriterionScore] = Field(description="Criterion -> verdict, in order.")
    judge_replies: ResolvedReplies = Field(
        default="free", description="'free' or 'constrained' (a score grammar); dumped if not free."
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_free(handler(self))


async def judge_text_quality_async(
    question: str,
    knowledge_text: str,
    answer: str,
    model: ChatModel,
    *,
    mode: Mode | KalmaRules = "paper",
    criteria: Sequence[str] = CRITERIA,
    config: GenerateConfig = JUDGE_CONFIG,
    replies: ResolvedReplies = "free",
) -> TextQuality:
    """Ask ``model`` to rate ``answer`` on each criterion (the calls run concurrently).

    Args:
        question: The question.
        knowledge_text: The KG context as text (reference parity: the authors' ``KGstr``).
        answer: The answer with its citations (removed before judging).
        model: The judge.
        mode: ``"paper"`` or ``"reference"`` (module docstring).
        criteria: Which criteria to judge, in order.
        config: Sampling settings; temperature 0 by default, as the paper and the script.
        replies: ``"free"`` (the papers' setting) or ``"constrained"`` (a digit 1-5 by grammar).

    Returns:
        One :class:`CriterionScore` per criterion.

    Raises:
        ConfigError: On an unknown mode, criterion or replies setting; constrained replies
            from a model that cannot constrain (before any call).
        ClientError, ModelError: The judge rejected the request or could not run.
    """
    rules = rules_of(mode)
    _check_criteria(criteria)
    grammar = judge_grammar(model, replies)
    verdicts = await asyncio.gather(
        *(
            _judge_one(question, knowledge_text, answer, model, c, rules, config, grammar)
            for c in criteria
        )
    )
    return TextQuality(
        mode=rules.mode,
        prompt_version=_geval()["version"],
        judge=model.name,
        scores={v.criterion: v for v in verdicts},
        judge_replies=replies,
    )


def judge_grammar(model: ChatModel, replies: ResolvedReplies) -> Grammar | None:
    """The score grammar when ``replies`` is constrained (None when free).

    Raises:
        ConfigError: An unknown setting, or constrained replies from a model that cannot
            constrain (:func:`~citegraph.models.grammar_mode_of`).
    """
    if replies == "free":
        return None
    if replies != "constrained":
        raise ConfigError(f"judge replies {replies!r}: use 'free' or 'constrained'")
    grammar_mode_of(model)
    return score_grammar()


judge_text_quality = blocking(judge_text_quality_async)


async def _judge_one(
    question: str,
    knowledge_text: str,
    answer: str,
    model: ChatModel,
    criterion: str,
    rules: KalmaRules,
    config: GenerateConfig,
    grammar: Grammar | None = None,
) -> CriterionScore:
    messages = judge_messages(question, knowledge_text, answer, criterion, mode=rules)
    request = ChatRequest(messages=tuple(messages), config=config, grammar=grammar)
    try:
        generation = await model.generate(request)
    except _TRANSIENT as exc:
        failed = f"{JUDGE_FAILED}: {type(exc).__name__}"
        if rules.judge_script_score:  # the script's three tries fail -> reply "" -> default 3
            return CriterionScore(
                criterion=criterion, score=3, reply="", reason=failed, defaulted=True
            )
        return CriterionScore(criterion=criterion, score=None, reply="", reason=failed)
    text = generation.text if grammar is None else choice_reply_text(generation.text, grammar)
    parsed = parse_score(text, mode=rules)
    return CriterionScore(
        criterion=criterion,
        score=parsed.score,
        reply=generation.text,
        reason=parsed.reason,
        defaulted=parsed.defaulted,
    )


class TextQualitySummary(BaseModel):
    """One criterion's scores over answers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    criterion: str
    mean: float | None = Field(description="Mean of the measured scores; None if none.")
    std: float | None = Field(description="Sample std of the measured scores (n - 1); None if < 2.")
    n: int = Field(description="Answers judged on this criterion.")
    n_measured: int = Field(description="Answers with a score.")
    n_unmeasured: int = Field(description="Answers left out of the mean (score None).")
    unmeasured_reasons: dict[str, int] = Field(description="Reason -> count, unmeasured only.")
    n_defaulted: int | None = Field(
        description="Reference mode: replies scored 3 by default (in the mean); None in paper mode."
    )
    n_out_of_range: int | None = Field(
        description="Reference mode: scores above 5 kept in the mean; None in paper mode."
    )
    mode: str
    prompt_version: str
    judge_replies: ResolvedReplies = Field(
        default="free", description="'free' or 'constrained' (a score grammar); dumped if not free."
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_free(handler(self))


def aggregate_text_quality(results: Sequence[TextQuality]) -> dict[str, TextQualitySummary]:
    """Per-criterion mean and counts over answers.

    Args:
        results: One :class:`TextQuality` per answer, all of one mode and prompt version.

    Returns:
        Criterion -> summary, for every criterion judged in at least one result.

    Raises:
        ConfigError: If the results mix modes, prompt versions or free and constrained replies.
    """
    settings = {(r.mode, r.prompt_version, r.judge_replies) for r in results}
    if len(settings) > 1:
        raise ConfigError(
            f"cannot aggregate results of different modes/prompts/judge replies: {settings}"
        )
    mode, version, replies = settings.pop() if settings else ("paper", GEVAL_VERSION, "free")
    by_criterion: dict[str, list[CriterionScore]] = {}
    for result in results:
        for name, verdict in result.scores.items():
            by_criterion.setdefault(name, []).append(verdict)
    out: dict[str, TextQualitySummary] = {}
    for name, verdicts in by_criterion.items():
        runs = summarise_runs([v.score for v in verdicts])
        reasons = Counter(v.reason or "" for v in verdicts if v.score is None)
        reference = KalmaRules.for_mode(mode).judge_script_score
        out[name] = TextQualitySummary(
            criterion=name,
            mean=runs.mean,
            std=runs.std,
            n=runs.n_runs,
            n_measured=runs.n_measured,
            n_unmeasured=runs.n_runs - runs.n_measured,
            unmeasured_reasons=dict(sorted(reasons.items())),
            n_defaulted=sum(v.defaulted for v in verdicts) if reference else None,
            n_out_of_range=(
                sum(v.score is not None and not 1 <= v.score <= 5 for v in verdicts)
                if reference
                else None
            ),
            mode=mode,
            prompt_version=version,
            judge_replies=replies,
        )
    return out


def reference_subset(
    ids: Sequence[str], has_graph: Sequence[bool] | Callable[[str], bool], n: int = 100
) -> list[str]:
    """The answers the authors' ``GPT_EVAL.py`` judges: the first ``n`` whose KG is not empty.

    The paper says it "randomly sample[s] 100 outputs"; the script reads the answers CSV in order
    and keeps rows whose KG string is not ``"[]"`` until it has 100.

    Args:
        ids: Answer ids in file order.
        has_graph: Per id (same order), or a function of the id: whether its KG is non-empty.
        n: How many to keep.

    Raises:
        ConfigError: If ``has_graph`` is a sequence of another length, or ``n`` < 0.
    """
    if n < 0:
        raise ConfigError(f"n must be >= 0, got {n}")
    if callable(has_graph):
        flags = [bool(has_graph(i)) for i in ids]
    else:
        if len(has_graph) != len(ids):
            raise ConfigError(f"{len(ids)} ids but {len(has_graph)} has_graph flags")
        flags = [bool(f) for f in has_graph]
    return [i for i, keep in zip(ids, flags, strict=True) if keep][:n]


def _check_criteria(criteria: Sequence[str]) -> None:
    unknown = [c for c in criteria if c not in CRITERIA]
    if unknown:
        raise ConfigError(f"unknown criteria {unknown}; choose from {', '.join(CRITERIA)}")
