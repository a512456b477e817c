"""Stub CONNER models of known behaviour, and run helpers, shared by the run tests.

- :class:`StubLM`: 1 nat per whitespace token; 0.1 nat for a continuation found verbatim in its
  prompt (so helpfulness sees the answer in the knowledge, informativeness never does);
- :class:`SubstringNLI`: entailment exactly when the hypothesis occurs in the premise, else
  neutral;
- :class:`StubRelevance`: 1 when the knowledge mentions "dragon", else 0.25;
- :class:`WordCount`: paragraph coherence = the number of words;
- :class:`WordEmbedder`: a bag of hashed words (a retriever that needs no model);
- :func:`merged_metrics`: a run done whole and as two shards merged (``runs merge``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citegraph.models import NLIPair, NLIProbs, TokenScores
from citegraph.runs import Runtime, finalize, merge_runs, task_type


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


class WordEmbedder:
    """16 dimensions; each word adds 1 to the dimension its SHA-256 picks."""

    name = "stub-words"

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * 16
            for word in text.lower().split():
                vector[hashlib.sha256(word.encode()).digest()[0] % 16] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            vectors.append([x / norm for x in vector])
        return vectors


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    """The newest record of each id in a run's ``samples.jsonl``."""
    lines = (path / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def merged_metrics(
    task: str, run: Callable[[Path, Runtime], object], tmp_path: Path, *, limit: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``run`` into ``whole`` (the first ``limit`` items), and as shards 0/2 and 1/2 merged
    into ``merged`` (``merge_runs`` then the task's ``finalize``, as ``runs merge`` does).

    Returns:
        The metrics of the whole run (without its live-only ``seconds``) and the merged run's.
    """
    run(tmp_path / "whole", Runtime(limit=limit))
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, out in enumerate(shards):
        run(out, Runtime(limit=limit, shard=f"{i}/2"))
    merged = finalize(task_type(task), merge_runs(shards, tmp_path / "merged"))
    assert json.loads((tmp_path / "merged" / "metrics.json").read_text()) == merged
    whole = json.loads((tmp_path / "whole" / "metrics.json").read_text())
    whole.pop("seconds", None)
    return whole, merged
