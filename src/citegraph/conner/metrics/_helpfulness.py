"""CONNER helpfulness (Eq. 6): how much a knowledge text lowers the loss of the gold answer.

``S_help = max(0, 1 - L(q, k, a) / mean_i L(q, k_i^-, a))``, where ``L`` is the mean
cross-entropy (nats per token) of the gold answer ``a`` given a prompt holding the query ``q`` and
a knowledge text, ``k`` is the knowledge under evaluation and ``k_1^-..k_u^-`` are ``u``
knowledge texts of *other* items (irrelevant knowledge, the paper's baseline).

Choices (the paper leaves them open; each is recorded in :attr:`MetricValue.details`):

- **Prompt**: the reference code's answer prompt
  ``"Passage: {knowledge}\\nQuery: {query}\\nAnswer: "`` (:data:`HELPFULNESS_PROMPT`, the
  form of its few-shot inference sample; the query is the NQ question or the last WoW turn).
  Its zero-shot prompts are :data:`ZERO_SHOT_PROMPTS`. Its few-shot demonstrations are not in
  the released snapshot, so none are invented: pass your own as ``few_shot`` (a prefix put
  before the prompt; :func:`answer_demonstrations` formats them the reference way).
- **Negatives**: ``u`` distinct texts drawn without replacement from the pool (default: the
  knowledge texts being evaluated) among entries whose id differs from the item's; blank texts
  are never drawn. The draw uses ``random.Random(f"{seed}:{sample id}")`` over the pool sorted by
  ``(id, text)``, so it is reproducible and independent of the order and batching of the items.
  ``u`` is not given in the paper; the default is 3. (The reference script drew one unseeded
  demonstration passage of another item.)
- The no-max value ``1 - L(k) / baseline`` is kept as ``details["unclipped"]`` (the paper's
  Appendix Table 16 reports it without the max).
- ``mode="reference"`` (:attr:`ConnerRules.gold_max_words <citegraph.conner.ConnerRules>`) cuts
  a gold knowledge text (``source == "gold"``) to its first 500 space-separated words, as
  ``helpfulness.py`` does for the reference passage. The reference
  zero-shot ``wo_knowledge`` prompt bug (it includes the reference passage) is not reproduced:
  there is no "without knowledge" condition here; score ``Knowledge(text="")`` to get one.

An answer the scorer cannot score (empty answer) or a zero baseline gives ``None`` with the
reason. To mirror the reference LLaMA setup, score with ``prepend_bos=True`` (its tokenizer adds
BOS, so the first answer token is predicted from the last prompt token either way).
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from citegraph.conner._types import DetailValue, Knowledge, MetricValue
from citegraph.conner.metrics._rules import ConnerRules, Mode
from citegraph.datasets import ConnerSample, ConnerTask
from citegraph.errors import ConfigError, ModelError
from citegraph.models import LMScorer, TokenScores
from citegraph.runs import blocking

__all__ = [
    "HELPFULNESS_PROMPT",
    "ZERO_SHOT_PROMPTS",
    "answer_demonstrations",
    "helpfulness",
    "helpfulness_async",
    "max_negatives",
    "too_few_negatives",
]

#: The reference code's answer prompt (its few-shot inference sample), version "passage-query/1".
HELPFULNESS_PROMPT = "Passage: {knowledge}\nQuery: {query}\nAnswer: "
#: The reference code's zero-shot answer prompts, per task.
ZERO_SHOT_PROMPTS: dict[ConnerTask, str] = {
    "nq": "Read the passage and answer the question below:\n"
    "Passage: {knowledge}\nQuestion: {query}\nAnswer: ",
    "wow": "Using the knowledge from the passage, complete the dialogue below:\n"
    "Passage: {knowledge}\nSpeaker 1: {query}\nSpeaker 2: ",
}
_KNOWN_PROMPTS = {
    HELPFULNESS_PROMPT: "conner-passage-query/1",
    ZERO_SHOT_PROMPTS["nq"]: "conner-zero-shot-nq/1",
    ZERO_SHOT_PROMPTS["wow"]: "conner-zero-shot-wow/1",
}
_FIELDS = frozenset({"knowledge", "query", "topic"})

Progress = Callable[[int, int], None]


def _short_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _check_template(template: str) -> str:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise ConfigError(f"bad helpfulness prompt template {template!r}: {exc}") from exc
    if unknown := fields - _FIELDS:
        raise ConfigError(
            f"helpfulness prompt uses unknown fields {sorted(unknown)}; known: {sorted(_FIELDS)}"
        )
    if not {"knowledge", "query"} <= fields:
        raise ConfigError("a helpfulness prompt needs the fields {knowledge} and {query}")
    return _KNOWN_PROMPTS.get(template, "custom:" + _short_hash(template))


def answer_demonstrations(
    demos: Sequence[tuple[ConnerSample, str]], *, prompt: str = HELPFULNESS_PROMPT
) -> str:
    """A few-shot prefix: each ``(sample, knowledge text)`` as the prompt plus its gold answer.

    The reference format: ``Passage: {k}\\nQuery: {last turn}\\nAnswer: {answer}`` followed by a
    blank line, for each demonstration (texts stripped).

    Raises:
        ConfigError: The prompt template is invalid.
    """
    _check_template(prompt)
    return "".join(
        prompt.format(knowledge=k.strip(), query=s.query.strip(), topic=s.topic.strip())
        + s.gold_answer.strip()
        + "\n\n"
        for s, k in demos
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """One item's prompts: ``prefixes[0]`` holds its knowledge, the rest the negatives."""

    prefixes: list[str]
    answer: str
    negative_ids: list[str]
    details: dict[str, DetailValue]


def _pool_entries(pool: Sequence[Knowledge]) -> list[tuple[str, str]]:
    return sorted({(k.id, k.text.strip()) for k in pool if k.text.strip()})


def max_negatives(pool: Sequence[Knowledge], ids: Iterable[str]) -> int:
    """The largest ``u`` helpfulness can use for every item of ``ids`` with ``pool`` as its
    negatives: the fewest non-blank knowledge texts of *other* items any of them has.

    Example: three items with knowledge (``a``, ``b``, ``c``): each has two others, so ``u``
    can be 2 at most.

        >>> pool = [Knowledge(id=i, text=f"text {i}", source="gold") for i in "abc"]
        >>> max_negatives(pool, ["a", "b", "c"])
        2
    """
    entries = _pool_entries(pool)
    per_id = Counter(i for i, _ in entries)
    return min((len(entries) - per_id[i] for i in ids), default=len(entries))


def too_few_negatives(u: int, most: int, where: str) -> str:
    """The message for a ``u`` larger than the ``most`` negatives ``where`` allows, saying
    what to do (``--u`` on the command line)."""
    if most < 1:
        return (
            f"{where}: helpfulness draws u={u} negatives from the knowledge of the other "
            "items, and there is none to draw from (it needs at least 2 items with "
            "non-blank knowledge); leave helpfulness out of --metrics"
        )
    return (
        f"{where}: helpfulness draws u={u} negatives from the knowledge of the other items, "
        f"and there are only {most} to draw from: rerun with --u {most} (u={most} from "
        "Python), or leave helpfulness out of --metrics"
    )


def _draw(entries: list[tuple[str, str]], own_id: str, u: int, seed: int) -> list[tuple[str, str]]:
    others = [e for e in entries if e[0] != own_id]
    if len(others) < u:
        raise ConfigError(too_few_negatives(u, len(others), f"sample {own_id!r}"))
    return random.Random(f"{seed}:{own_id}").sample(others, u)


def _knowledge_text(item: Knowledge, rules: ConnerRules) -> tuple[str, int]:
    text = item.text.strip()
    most = rules.gold_max_words
    if most is not None and item.source == "gold":
        words = text.split(" ")
        if len(words) > most:
            return " ".join(words[:most]).strip(), len(words) - most
    return text, 0


def _plan(
    sample: ConnerSample,
    item: Knowledge,
    entries: list[tuple[str, str]],
    *,
    template: str,
    prefix: str,
    u: int,
    seed: int,
    rules: ConnerRules,
) -> _Plan:
    def render(knowledge: str) -> str:
        return prefix + template.format(
            knowledge=knowledge, query=sample.query.strip(), topic=sample.topic.strip()
        )

    text, cut = _knowledge_text(item, rules)
    negatives = _draw(entries, sample.id, u, seed)
    details: dict[str, DetailValue] = {"u": u, "mode": rules.mode}
    if cut:
        details["words_truncated"] = cut
    return _Plan(
        prefixes=[render(text), *(render(t) for _, t in negatives)],
        answer=sample.gold_answer.strip(),
        negative_ids=[i for i, _ in negatives],
        details=details,
    )


def _score(plan: _Plan, scores: Sequence[TokenScores], model: str) -> MetricValue:
    details = dict(plan.details)
    details["negatives"] = json.dumps(plan.negative_ids)
    own, negatives = scores[0], scores[1:]
    details["n_answer_tokens"] = own.n_tokens
    details["n_truncated"] = own.n_truncated
    loss = own.mean_nll
    if loss is None:
        reason = f"answer loss not measured: {own.reason}"
        return MetricValue(value=None, reason=reason, model=model, details=details)
    details["loss"] = loss
    neg_losses = [s.mean_nll for s in negatives]
    measured = [x for x in neg_losses if x is not None]
    details["negative_losses"] = json.dumps(neg_losses)
    if len(measured) < len(neg_losses):
        why = next(s.reason for s in negatives if s.mean_nll is None)
        reason = f"baseline loss not measured: {why}"
        return MetricValue(value=None, reason=reason, model=model, details=details)
    baseline = sum(measured) / len(measured)
    details["baseline_loss"] = baseline
    if baseline <= 0.0:
        reason = "the baseline loss is 0: the ratio is undefined"
        return MetricValue(value=None, reason=reason, model=model, details=details)
    unclipped = 1.0 - loss / baseline
    details["unclipped"] = unclipped
    return MetricValue(value=max(0.0, unclipped), model=model, details=details)


def _resolve_prompt(prompt: str | Mapping[ConnerTask, str], task: ConnerTask) -> str:
    if isinstance(prompt, str):
        return prompt
    if task not in prompt:
        raise ConfigError(f"the helpfulness prompt mapping has no template for task {task!r}")
    return prompt[task]


async def helpfulness_async(
    samples: Sequence[ConnerSample],
    knowledge: Sequence[Knowledge],
    scorer: LMScorer,
    *,
    u: int = 3,
    seed: int = 0,
    prompt: str | Mapping[ConnerTask, str] = HELPFULNESS_PROMPT,
    few_shot: str | Mapping[str, str] = "",
    negatives: Sequence[Knowledge] | None = None,
    mode: Mode | ConnerRules = "paper",
    batch_size: int = 32,
    progress: Progress | None = None,
) -> list[MetricValue]:
    """CONNER helpfulness (Eq. 6) of each knowledge text for its sample (see the module docs).

    Args:
        samples: The items; ``knowledge[i]`` is evaluated for ``samples[i]`` (ids must match).
        knowledge: The knowledge texts to evaluate, aligned with ``samples``.
        scorer: The downstream causal LM (the paper used LLaMA-65B).
        u: Negatives per item.
        seed: Seed of the negatives' draw.
        prompt: Template with ``{knowledge}``, ``{query}`` and optionally ``{topic}``, ending
            where the answer starts; or one template per task (e.g. :data:`ZERO_SHOT_PROMPTS`).
        few_shot: A prefix put before every prompt (demonstrations), or one per sample id.
        negatives: The pool negatives are drawn from (default: ``knowledge``).
        mode: ``"paper"``, or ``"reference"`` to cut gold knowledge to 500 words (or the
            run's :class:`~citegraph.conner.ConnerRules`).
        batch_size: Items per scorer call (each contributes ``u + 1`` prompt/answer pairs).
        progress: Called as ``progress(items done, items total)`` after each scorer call.

    Returns:
        One :class:`MetricValue` per item, in order; ``details`` holds ``loss`` (L(k)),
        ``baseline_loss``, ``negative_losses``, ``negatives`` (their ids), ``u``, ``unclipped``
        (the value without the max), ``n_answer_tokens``, ``n_truncated``, ``prompt``,
        ``few_shot`` and ``mode``.

    Raises:
        ConfigError: Misaligned inputs, a bad option or template, a missing few-shot prefix, or
            too few other items to draw ``u`` negatives from.
        ModelError: The scorer failed or returned the wrong number of scores.
    """
    if len(samples) != len(knowledge):
        raise ConfigError(f"{len(samples)} samples but {len(knowledge)} knowledge texts")
    for sample, item in zip(samples, knowledge, strict=True):
        if sample.id != item.id:
            raise ConfigError(f"knowledge for {item.id!r} is aligned with sample {sample.id!r}")
    if u < 1:
        raise ConfigError(f"u must be >= 1, got {u}")
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    rules = ConnerRules.for_mode(mode)
    entries = _pool_entries(knowledge if negatives is None else negatives)
    plans: list[_Plan] = []
    for sample, item in zip(samples, knowledge, strict=True):
        template = _resolve_prompt(prompt, sample.task)
        version = _check_template(template)
        if isinstance(few_shot, str):
            prefix = few_shot
        elif sample.id in few_shot:
            prefix = few_shot[sample.id]
        else:
            raise ConfigError(f"no few-shot prefix for sample {sample.id!r}")
        plan = _plan(
            sample, item, entries, template=template, prefix=prefix, u=u, seed=seed, rules=rules
        )
        plan.details["prompt"] = version
        plan.details["few_shot"] = _short_hash(prefix) if prefix else "none"
        plans.append(plan)
    results: list[MetricValue] = []
    for start in range(0, len(plans), batch_size):
        chunk = plans[start : start + batch_size]
        pairs = [(p, plan.answer) for plan in chunk for p in plan.prefixes]
        scores = await scorer.score_continuations(pairs)
        if len(scores) != len(pairs):
            raise ModelError(f"{scorer.name}: {len(scores)} scores for {len(pairs)} pairs")
        offset = 0
        for plan in chunk:
            width = len(plan.prefixes)
            results.append(_score(plan, scores[offset : offset + width], scorer.name))
            offset += width
        if progress is not None:
            progress(len(results), len(plans))
    return results


helpfulness = blocking(helpfulness_async)
