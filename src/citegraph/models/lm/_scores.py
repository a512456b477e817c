"""What an LM scorer gives back (:class:`TokenScores`) and the :class:`LMScorer` protocol.

:class:`~citegraph.models.CausalLMScorer` implements the protocol with a transformers model; the
CONNER metrics and KaLMA benchmark construction take any object that satisfies it (tests pass
stubs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["LMScorer", "TokenScores"]


class TokenScores(BaseModel):
    """The negative log-likelihood of the scored tokens of one text or continuation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sum_nll: float = Field(ge=0.0, description="Sum of -ln P(token | earlier tokens), in nats.")
    n_tokens: int = Field(ge=0, description="How many tokens were scored.")
    token_logprobs: tuple[float, ...] | None = Field(
        default=None, description="ln P of each scored token, in order, when asked for."
    )
    n_truncated: int = Field(default=0, ge=0, description="Input tokens dropped by max_length.")
    reason: str | None = Field(
        default=None, description="Why nothing was scored (set exactly when n_tokens == 0)."
    )

    @model_validator(mode="after")
    def _check(self) -> TokenScores:
        if (self.n_tokens == 0) != (self.reason is not None):
            raise ValueError("reason is given exactly when no token was scored")
        if self.n_tokens == 0 and self.sum_nll != 0.0:
            raise ValueError("sum_nll must be 0 when no token was scored")
        if self.token_logprobs is not None and len(self.token_logprobs) != self.n_tokens:
            raise ValueError("token_logprobs must hold one value per scored token")
        return self

    @property
    def measured(self) -> bool:
        """Whether any token was scored (else :attr:`mean_nll` and :attr:`perplexity` are None)."""
        return self.n_tokens > 0

    @property
    def mean_nll(self) -> float | None:
        """Mean NLL per scored token (the cross-entropy), or None when nothing was scored."""
        return self.sum_nll / self.n_tokens if self.n_tokens else None

    @property
    def perplexity(self) -> float | None:
        """``exp(mean_nll)``; None when nothing was scored (see :attr:`reason`), never NaN."""
        mean = self.mean_nll
        if mean is None:
            return None
        return math.exp(mean) if mean < 700.0 else math.inf


@runtime_checkable
class LMScorer(Protocol):
    """Batched causal-LM scores; results are in input order, one per input."""

    @property
    def name(self) -> str:
        """A stable description of the model, recorded with every number."""
        ...

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The NLL of each whole text."""
        ...

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The NLL of each ``(prefix, continuation)``'s continuation tokens given the prefix."""
        ...

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        """The perplexity of each text (None when nothing could be scored)."""
        ...
