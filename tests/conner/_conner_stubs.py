"""Stub CONNER models of known behaviour, shared by the run tests (score, select).

- :class:`StubLM`: 1 nat per whitespace token; 0.1 nat for a continuation found verbatim in its
  prompt (so helpfulness sees the answer in the knowledge, informativeness never does);
- :class:`SubstringNLI`: entailment exactly when the hypothesis occurs in the premise, else
  neutral;
- :class:`StubRelevance`: 1 when the knowledge mentions "dragon", else 0.25;
- :class:`WordCount`: paragraph coherence = the number of words.
"""

from __future__ import annotations

from collections.abc import Sequence

from citegraph.models import NLIProbs, TokenScores
from citegraph.models._nli_protocol import NLIPair


class StubLM:
    """1 nat per whitespace token; 0.1 nat for a continuation found verbatim in its prompt."""

    name = "stub-lm"

    def __init__(self) -> None:
        self.texts: list[str] = []

    @staticmethod
    def _scores(text: str, loss: float, token_logprobs: bool) -> TokenScores:
        n = len(text.split())
        if n == 0:
            return TokenScores(sum_nll=0.0, n_tokens=0, reason="empty")
        logprobs = tuple(-loss for _ in range(n)) if token_logprobs else None
        return TokenScores(sum_nll=loss * n, n_tokens=n, token_logprobs=logprobs)

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        self.texts += texts
        return [self._scores(t, 1.0, token_logprobs) for t in texts]

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        self.texts += [c for _, c in pairs]
        return [self._scores(c, 0.1 if c.strip() in p else 1.0, token_logprobs) for p, c in pairs]

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        return [s.perplexity for s in await self.score(texts)]


class SubstringNLI:
    """Entailment exactly when the hypothesis occurs in the premise; else neutral."""

    name = "stub-nli"

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        return [
            NLIProbs(contradiction=0.0, neutral=0.0, entailment=1.0)
            if p.hypothesis.strip() in p.premise
            else NLIProbs(contradiction=0.0, neutral=1.0, entailment=0.0)
            for p in pairs
        ]


class StubRelevance:
    name = "stub-rel"

    async def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [1.0 if "dragon" in k.lower() else 0.25 for _, k in pairs]


class WordCount:
    name = "stub-para"

    async def score(self, texts: Sequence[str]) -> list[float]:
        return [float(len(t.split())) for t in texts]
