"""Causal-LM log-probabilities from a server's completions endpoint (:class:`ServerLMScorer`).

Spec ``vllm/<model>`` (or ``openai/<model>`` with a ``base_url``, for any OpenAI-compatible
server that echoes prompt log-probabilities). Each batch of texts is one legacy completions
request::

    POST <base_url>/completions
    {"model": <model>, "prompt": [<text>, ...], "max_tokens": 1, "temperature": 0.0,
     "echo": true, "logprobs": 1, "add_special_tokens": false}

``add_special_tokens: false`` (a vLLM extra field, sent to ``vllm/`` only) keeps BOS out, as the
local scorer's default (``prepend_bos=False``). With ``echo`` each choice's ``logprobs`` holds the
prompt's tokens, their ``token_logprobs`` (the first ``null``: it has no prediction) and
``text_offset`` (where each token starts in the echoed text); the one generated token that
``max_tokens: 1`` forces starts at the end of the prompt and is dropped. vLLM's
``prompt_logprobs`` field is not used.

The results follow :class:`~citegraph.models.CausalLMScorer`'s conventions (see
:mod:`citegraph.models.lm._scorer`): a text of ``n`` tokens scores ``n - 1`` (the first token has
no prediction); a continuation is scored in ``prefix + continuation`` (no separator added), its
tokens being those that **end after the prefix's last character** (read from ``text_offset``), so
a token merged across the boundary (``"Wikipedia: " + "Paris"`` -> ``" Paris"``) counts as a
continuation token, as in the local rule. Where the tokenisation differs:

- the server tokenises, so numbers match a local run of the same weights only up to the server's
  kernels and dtype;
- the local rule compares token ids with the prefix's own tokenisation; this one compares
  characters. They differ only when joining re-tokenises the prefix before its last token (rare
  with BPE): the local rule then scores those earlier tokens too;
- ``text_offset`` counts the characters of each token's decoded text: a character split across
  tokens (byte-level BPE on non-Latin text) may shift the boundary by a token.

``max_length``: a text longer than ``max_length`` tokens is cut from the right exactly as locally
(a causal model's log-probabilities of the first tokens do not depend on later ones, so the kept
tokens' numbers are those of the cut text; ``n_truncated`` records the rest). A prefix +
continuation longer than ``max_length`` is **not measured** (a per-item reason): the server saw
the whole prefix, where the local scorer cuts it from the left. An input the server refuses (e.g.
longer than its context) is not measured either, with the server's message as its reason.
Nothing unmeasured is ever a zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from citegraph.errors import ConfigError, ResponseFormatError
from citegraph.models.lm._inputs import FIRST_TOKEN
from citegraph.models.lm._scores import TokenScores
from citegraph.models.server import PRESETS, Endpoint, Refused, ServedModel

__all__ = ["SERVER_LM_PROVIDERS", "ServerLMScorer"]

#: Providers whose completions endpoint can score prompts.
SERVER_LM_PROVIDERS = ("vllm", "openai")

_HINT = (
    "serve a generative model with its completions endpoint, e.g. 'vllm serve <model>', "
    "and check --base-url (it includes /v1)"
)


class ServerLMScorer(ServedModel):
    """An :class:`~citegraph.models.LMScorer` on a server's prompt log-probabilities.

    Args:
        model: The model name the server knows.
        provider: ``"vllm"`` or ``"openai"`` (any OpenAI-compatible server, with ``base_url``).
        endpoint: The server (its URL includes ``/v1``; default: the provider's preset), its
            client's limits and the response cache.
        batch_size: Texts per request.
        max_length: Most tokens per input (see the module docstring); ``None``: the server's.

    Raises:
        ConfigError: A bad option, or an unknown provider.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "vllm",
        endpoint: Endpoint | None = None,
        batch_size: int = 8,
        max_length: int | None = None,
    ) -> None:
        if provider not in SERVER_LM_PROVIDERS:
            raise ConfigError(f"LM scoring by server needs one of {SERVER_LM_PROVIDERS}")
        if max_length is not None and max_length < 2:
            raise ConfigError(f"max_length must be >= 2, got {max_length}")
        super().__init__(
            model,
            provider=provider,
            endpoint=endpoint,
            batch_size=batch_size,
            missing_hint=_HINT,
            presets=PRESETS,
        )
        self._limit = max_length

    @property
    def endpoint(self) -> str:
        """The server's base URL."""
        return self._items.client.endpoint

    @property
    def settings(self) -> dict[str, Any]:
        """What determines the numbers besides the model, for run records."""
        return {
            "name": self.name,
            "endpoint": self.endpoint,
            "max_length": self._limit,
            "prepend_bos": False,
        }

    @property
    def cache_hits(self) -> int:
        """Inputs answered from the response cache."""
        return self._items.hits

    def request_params(self) -> dict[str, Any]:
        """Every field of a completions request but ``prompt``."""
        params: dict[str, Any] = {
            "model": self._items.client.model,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        if self._items.client.provider == "vllm":
            params["add_special_tokens"] = False
        return params

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The NLL of each whole text (module docstring), in order.

        Raises:
            ClientError: The server has no completions route (404) or refuses every request.
            ResponseFormatError: The server returns no prompt log-probabilities.
            RateLimited, ServerError, EndpointUnavailable: After the retries.
        """
        return await self._scores([("", t) for t in texts], token_logprobs)

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The NLL of each continuation given its prefix (module docstring), in order.

        Raises:
            As :meth:`score`.
        """
        return await self._scores(list(pairs), token_logprobs, joined=True)

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        """``exp(mean NLL)`` of each text; None for a text with nothing scored."""
        return [s.perplexity for s in await self.score(texts)]

    async def _scores(
        self, pairs: list[tuple[str, str]], keep: bool, *, joined: bool = False
    ) -> list[TokenScores]:
        out: list[TokenScores | None] = [None] * len(pairs)
        todo: list[int] = []
        for i, (_prefix, rest) in enumerate(pairs):
            if not rest:
                out[i] = _unscored("empty continuation" if joined else "empty text", keep)
            else:
                todo.append(i)
        params = self.request_params()
        found = await self._items.results(
            "/completions",
            [{"prompt": pairs[i][0] + pairs[i][1]} for i in todo],
            params=params,
            body=lambda batch: {**params, "prompt": [item["prompt"] for item in batch]},
            parse=self._parse,
        )
        for i, result in zip(todo, found, strict=True):
            if isinstance(result, Refused):
                out[i] = _unscored(f"refused by the server: {result.reason}", keep)
            else:
                prefix, rest = pairs[i]
                out[i] = self._token_scores(result, len(prefix), len(prefix + rest), joined, keep)
        return [s for s in out if s is not None]

    def _parse(self, data: dict[str, Any], batch: list[dict[str, Any]]) -> list[Any]:
        """``{"offsets", "logprobs"}`` of the prompt tokens of each choice, by choice index."""
        where = self._items.where(self._items.client.url("/completions"))
        choices = data.get("choices")
        if not isinstance(choices, list) or len(choices) != len(batch):
            raise ResponseFormatError(f"{where} answered without one choice per prompt", url=where)
        ordered = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        return [
            _prompt_tokens(choice, item["prompt"], where)
            for choice, item in zip(ordered, batch, strict=True)
        ]

    def _token_scores(
        self, result: dict[str, Any], boundary: int, end: int, pair: bool, keep: bool
    ) -> TokenScores:
        offsets: list[int] = result["offsets"]
        logprobs: list[float | None] = result["logprobs"]
        n = len(offsets)
        limit = self._limit or n
        if pair and boundary > 0:
            ends = [*offsets[1:], end]
            first = next((i for i, e in enumerate(ends) if e > boundary), n)
            start = max(first, 1)
            if n > limit:
                return _unscored(
                    f"{n} tokens, more than max_length={limit}: the server scored the whole "
                    "prefix, where the local scorer cuts it from the left",
                    keep,
                )
            kept, cut = n, 0
        else:
            start, kept = 1, min(n, limit)
            cut = n - kept
        scored = [float(v) for v in logprobs[start:kept] if v is not None]
        if start >= kept:
            return _unscored(FIRST_TOKEN, keep, cut)
        return TokenScores(
            sum_nll=max(-math.fsum(scored), 0.0),
            n_tokens=len(scored),
            token_logprobs=tuple(scored) if keep else None,
            n_truncated=cut,
        )

    def __repr__(self) -> str:
        return f"ServerLMScorer({self.name!r}, base_url={self.endpoint!r})"


def _unscored(reason: str, keep: bool, cut: int = 0) -> TokenScores:
    return TokenScores(
        sum_nll=0.0, n_tokens=0, token_logprobs=() if keep else None, n_truncated=cut, reason=reason
    )


def _prompt_tokens(choice: Any, prompt: str, where: str) -> dict[str, Any]:
    """The offsets and log-probabilities of the prompt's tokens in an echoed choice."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise ResponseFormatError(
            f"{where} returned no prompt log-probabilities (no 'logprobs' object in the choice); "
            "the server must support 'echo' with 'logprobs' on /completions (vLLM does)",
            url=where,
        )
    text = choice.get("text")
    offsets = logprobs.get("text_offset")
    values = logprobs.get("token_logprobs")
    if not isinstance(text, str) or not text.startswith(prompt):
        raise ResponseFormatError(
            f"{where} did not echo the prompt (the choice's text does not start with it); "
            "prompt log-probabilities need 'echo'",
            url=where,
        )
    if (
        not isinstance(offsets, list)
        or not isinstance(values, list)
        or len(offsets) != len(values)
        or not all(isinstance(o, int) for o in offsets)
    ):
        raise ResponseFormatError(
            f"{where} returned no usable prompt log-probabilities: 'text_offset' and "
            "'token_logprobs' must be lists of the same length",
            url=where,
        )
    n = sum(1 for o in offsets if o < len(prompt))
    kept = values[:n]
    if any(not isinstance(v, int | float) for v in kept[1:]):
        raise ResponseFormatError(
            f"{where} returned a null or non-numeric log-probability after the first token",
            url=where,
        )
    return {"offsets": offsets[:n], "logprobs": kept}
