"""CONNER informativeness (Eq. 5): ``S_info(k, q) = 1 - exp(1/M * sum_t ln P(k_t | k_<t, q))``.

One minus the geometric-mean probability a causal LM (the paper: GPT-Neo-2.7B) gives the
knowledge tokens after a prompt holding the query: knowledge the model expects scores low,
surprising knowledge high. As in the authors' ``info.py``:

- the prompt is :data:`INFO_PROMPT` with the topic and the query (:func:`informativeness_prefix`;
  for NQ a ``"?"`` is appended to a question without one; for WoW the query is the dialogue
  history joined with ``" [SEP] "``, see :func:`~citegraph.conner.metrics.metric_query`);
- the knowledge is cut to its first ``max_words`` = 300 whitespace-separated words (joined by
  single spaces);
- ``first_token="drop"`` leaves out the prediction of the first knowledge token (the one made
  from the last prompt token), as ``info.py``'s slicing does; the default ``"keep"`` scores
  every knowledge token, as Eq. 5 says. ``info.py`` slices at the length of the prompt's own
  tokenisation: with a BPE tokenizer whose prompt ends in a space token (GPT-Neo:
  ``"Wikipedia: "``), the space merges into the first knowledge token, so the reference skips the
  first *two* knowledge tokens; ``"drop"`` skips one (the prompt/knowledge boundary follows
  :class:`~citegraph.models.CausalLMScorer`'s rule, where the merged token is a knowledge token).

An empty knowledge text is None (``info.py`` gets a NaN loss, which its ``nanmean`` skips).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from citegraph.conner._types import DetailValue, MetricValue
from citegraph.conner.metrics._relevance import WowQuery, metric_query
from citegraph.datasets import ConnerSample
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.models import LMScorer, TokenScores
from citegraph.runs import blocking

__all__ = ["INFO_PROMPT", "informativeness", "informativeness_prefix", "truncate_words"]

#: The prompt of CONNER's ``info.py`` (the paper's best zero-shot prompt, Table 11).
INFO_PROMPT = (
    "Generate a Wikipedia to answer the given question.\n"
    "Topic: {topic}.\nQuestion: {query}\nWikipedia: "
)

FirstToken = Literal["keep", "drop"]


def informativeness_prefix(sample: ConnerSample, *, wow_query: WowQuery = "history") -> str:
    """The prompt the knowledge is scored after (:data:`INFO_PROMPT` filled in).

    Args:
        sample: The test item (its topic, query and, for WoW, history).
        wow_query: See :func:`~citegraph.conner.metrics.metric_query`.
    """
    query = metric_query(sample, wow_query=wow_query).strip()
    if sample.task == "nq" and query and not query.endswith("?"):
        query += "?"
    return INFO_PROMPT.format(topic=sample.topic.strip(), query=query)


def truncate_words(text: str, max_words: int | None) -> tuple[str, int]:
    """``text`` cut to its first ``max_words`` words (joined by single spaces), and the number
    of words dropped; ``max_words=None`` returns the stripped text unchanged."""
    if max_words is None:
        return text.strip(), 0
    words = text.split()
    return " ".join(words[:max_words]), max(0, len(words) - max_words)


def _value(scores: TokenScores, first_token: FirstToken) -> tuple[float | None, int, str | None]:
    """(mean NLL, tokens counted, reason when unmeasured)."""
    if not scores.measured:
        return None, 0, scores.reason
    if first_token == "keep":
        return scores.mean_nll, scores.n_tokens, None
    logprobs = scores.token_logprobs
    if logprobs is None:
        raise ModelError("first_token='drop' needs token_logprobs from the LM scorer")
    rest = logprobs[1:]
    if not rest:
        return None, 0, "only one knowledge token, whose prediction first_token='drop' drops"
    return -math.fsum(rest) / len(rest), len(rest), None


async def informativeness_async(
    samples: Sequence[ConnerSample],
    knowledge: Sequence[str],
    lm: LMScorer,
    *,
    first_token: FirstToken = "keep",
    max_words: int | None = 300,
    wow_query: WowQuery = "history",
) -> list[MetricValue]:
    """CONNER informativeness (Eq. 5) of each knowledge text given its sample's query.

    Args:
        samples: The test items, one per knowledge text.
        knowledge: The knowledge texts.
        lm: The causal-LM scorer (one batched ``score_continuations`` call).
        first_token: ``"keep"`` (Eq. 5) or ``"drop"`` (the reference slicing, see the module).
        max_words: Words of knowledge kept (300 as the reference); None keeps all.
        wow_query: See :func:`~citegraph.conner.metrics.metric_query`.

    Returns:
        One :class:`MetricValue` per text (``model`` = ``lm.name``); ``details``: ``mean_nll``,
        ``n_tokens`` (tokens counted), ``n_truncated`` (input tokens the LM's ``max_length``
        dropped), ``words_dropped``, ``first_token``. Empty knowledge is None.

    Raises:
        DataError: ``samples`` and ``knowledge`` differ in length.
        ConfigError: Bad ``first_token`` or ``max_words``.
        ModelError: The LM returned the wrong number of results.
    """
    if len(samples) != len(knowledge):
        raise DataError(f"{len(samples)} samples for {len(knowledge)} texts", field="samples")
    if first_token not in ("keep", "drop"):
        raise ConfigError(f"first_token must be 'keep' or 'drop', got {first_token!r}")
    if max_words is not None and max_words < 1:
        raise ConfigError(f"max_words must be >= 1 or None, got {max_words}")
    cut = [truncate_words(text, max_words) for text in knowledge]
    todo = [i for i, (text, _) in enumerate(cut) if text]
    pairs = [(informativeness_prefix(samples[i], wow_query=wow_query), cut[i][0]) for i in todo]
    scores = (
        await lm.score_continuations(pairs, token_logprobs=first_token == "drop") if pairs else []
    )
    if len(scores) != len(pairs):
        raise ModelError(f"{lm.name}: {len(scores)} scores for {len(pairs)} texts")
    by_index = dict(zip(todo, scores, strict=True))
    values: list[MetricValue] = []
    for i, (_, dropped) in enumerate(cut):
        result = by_index.get(i)
        if result is None:
            values.append(MetricValue(value=None, reason="empty knowledge", model=lm.name))
            continue
        mean_nll, counted, reason = _value(result, first_token)
        details: dict[str, DetailValue] = {
            "mean_nll": mean_nll,
            "n_tokens": counted,
            "n_truncated": result.n_truncated,
            "words_dropped": dropped,
            "first_token": first_token,
        }
        value = None if mean_nll is None else 1.0 - math.exp(-mean_nll)
        values.append(MetricValue(value=value, reason=reason, model=lm.name, details=details))
    return values


informativeness = blocking(informativeness_async)
