"""The deterministic numbers of :class:`~citegraph.testing.FakeOpenAIServer`'s scoring routes.

Small rules a test can work out by hand:

- **Tokens** (``/v1/completions``): a token is a run of whitespace and the word after it
  (``"Paris is big"`` -> ``"Paris"``, ``" is"``, ``" big"``; trailing whitespace is a token of
  its own). ``text_offset`` is where the token starts. Every token but the first gets the
  log-probability ``-len(token) / 10`` (``" is"``: -0.3); the first gets ``null``. With
  ``echo`` the prompt's tokens come first, then ``max_tokens`` generated tokens ``" x"`` (each
  -1.0) starting at the end of the prompt; without ``echo`` only the generated ones.
- **Relevance** (``/v1/rerank``, ``/rerank``): the share of the query's distinct lower-cased words
  that occur in the document (``"capital of France"`` vs ``"Paris is the capital of France"``:
  1.0). Results are sorted best first, as the servers sort them.
- **NLI** (``/classify``): an input is ``premise[SEP]hypothesis``. Hypothesis words all in the
  premise: entailment 0.8 (the other two 0.1 each); else a hypothesis containing ``not``:
  contradiction 0.7, neutral 0.2, entailment 0.1; else neutral 0.6, contradiction 0.3,
  entailment 0.1. ``probs`` follow the server's ``labels`` order (default
  :data:`NLI_FAKE_LABELS`, deliberately not CONNER's order) and ``label`` names the argmax.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["NLI_FAKE_LABELS", "SCORE_ROUTES", "fake_logprob", "fake_tokens", "score_reply"]

#: The POST routes answered with deterministic scores.
SCORE_ROUTES = frozenset({"/v1/completions", "/v1/rerank", "/rerank", "/classify"})
#: The class labels of ``/classify`` by index, unless the server is given others.
NLI_FAKE_LABELS = ("contradiction", "entailment", "neutral")

_TOKEN = re.compile(r"\s*\S+|\s+$")


def fake_tokens(text: str) -> list[tuple[str, int]]:
    """``(token, offset)`` of each token of ``text``.

    Example:
        >>> fake_tokens("Paris is big")
        [('Paris', 0), (' is', 5), (' big', 8)]
    """
    return [(m.group(), m.start()) for m in _TOKEN.finditer(text)]


def fake_logprob(token: str) -> float:
    """The log-probability of a token that is not the first: ``-len(token) / 10``."""
    return -len(token) / 10


def _completions(body: dict[str, Any]) -> dict[str, Any]:
    prompts = body["prompt"]
    prompts = [prompts] if isinstance(prompts, str) else list(prompts)
    n_new = int(body.get("max_tokens") or 0)
    choices = []
    for index, prompt in enumerate(prompts):
        tokens = fake_tokens(prompt) if body.get("echo") else []
        values: list[float | None] = [
            None if i == 0 else fake_logprob(t) for i, (t, _) in enumerate(tokens)
        ]
        start = len(prompt) if body.get("echo") else 0
        text = prompt if body.get("echo") else ""
        for k in range(n_new):
            tokens.append((" x", start + 2 * k))
            values.append(-1.0)
        text += " x" * n_new
        logprobs = None
        if body.get("logprobs") is not None:
            logprobs = {
                "tokens": [t for t, _ in tokens],
                "token_logprobs": values,
                "text_offset": [o for _, o in tokens],
                "top_logprobs": None,
            }
        choices.append(
            {"index": index, "text": text, "logprobs": logprobs, "finish_reason": "length"}
        )
    return {
        "id": "cmpl-fake",
        "object": "text_completion",
        "model": body.get("model"),
        "choices": choices,
        "usage": {},
    }


def relevance(query: str, document: str) -> float:
    """The fake relevance of ``document`` to ``query`` (module docstring)."""
    words = set(query.lower().split())
    found = set(document.lower().split())
    return len(words & found) / len(words) if words else 0.0


def _rerank(body: dict[str, Any]) -> Any:
    query = body["query"]
    if "texts" in body:  # TEI: a JSON array of {index, score}
        scores = [relevance(query, t) for t in body["texts"]]
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return [{"index": i, "score": scores[i]} for i in order]
    documents = body["documents"]
    scores = [relevance(query, d) for d in documents]
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    top = body.get("top_n") or len(order)
    results = [
        {"index": i, "document": {"text": documents[i]}, "relevance_score": scores[i]}
        for i in order[:top]
    ]
    return {"id": "rerank-fake", "model": body.get("model"), "results": results, "usage": {}}


def nli_probs(text: str) -> dict[str, float]:
    """The fake NLI probabilities of ``premise[SEP]hypothesis`` by label (module docstring)."""
    premise, _, hypothesis = text.partition("[SEP]")
    said = set(premise.lower().split())
    words = hypothesis.lower().split()
    if words and all(w in said for w in words):
        return {"entailment": 0.8, "neutral": 0.1, "contradiction": 0.1}
    if "not" in words:
        return {"contradiction": 0.7, "neutral": 0.2, "entailment": 0.1}
    return {"neutral": 0.6, "contradiction": 0.3, "entailment": 0.1}


def _classify(body: dict[str, Any], labels: tuple[str, ...]) -> dict[str, Any]:
    inputs = body["input"]
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    data = []
    for index, text in enumerate(inputs):
        by_label = nli_probs(text)
        probs = [by_label.get(label, 0.0) for label in labels]
        best = probs.index(max(probs))
        data.append(
            {"index": index, "label": labels[best], "probs": probs, "num_classes": len(labels)}
        )
    return {
        "id": "classify-fake",
        "object": "list",
        "model": body.get("model"),
        "data": data,
        "usage": {},
    }


def score_reply(route: str, body: dict[str, Any], labels: tuple[str, ...]) -> Any:
    """The JSON answer of a scoring ``route`` to ``body``.

    Raises:
        KeyError, TypeError, ValueError: The body lacks what the route needs (a 400 reply).
    """
    if route == "/v1/completions":
        return _completions(body)
    if route in ("/v1/rerank", "/rerank"):
        return _rerank(body)
    return _classify(body, labels)
