"""Throughput of CONNER's causal-LM metrics (embedded SmolLM2-135M), batched and one at a time.

Inputs are real CONNER items: the first ``--n`` NQ test items, each with its gold passage as the
knowledge. Three metrics run on them through ``causal_lm_scorer("local", batch_size=B)``:
sentence coherence (the perplexity of every sentence of each passage, one ``score`` call),
informativeness (the passage as a continuation of the informativeness prompt) and helpfulness
(the gold answer as a continuation of the passage prompt and of ``u=3`` prompts with other items'
passages). Each metric runs with a scorer of batch size 1 (one text per forward pass: one at a
time) and of each size in ``--batch-sizes``; after an untimed warm-up on the first four items,
the best of ``--repeat`` runs counts (the machines are shared). The scorer is wrapped to count
the tokens it scored (``TokenScores.n_tokens``: a prompt prefix is read but not counted, nor are
tokens cut by ``max_length``), so tokens/s is exactly the tokens the metric scored. Printed per
metric: seconds, items/s, tokens/s, the speed-up over one at a time and the largest difference
of a batched metric value from the one at a time. One torch thread unless ``--threads`` says
otherwise. ``--forward-costs`` first prints what one forward pass of the decoder costs at a few
lengths, one input and 8 at once (what the scorer's padding rule ``PAD_FREE_CPU`` rests on).
Prints figures only.

    .venv/bin/python benchmarks/conner_lm_scoring.py [--n 32] [--batch-sizes 8,16] [--threads 1]
        [--repeat 2] [--data-dir DIR] [--metrics coherence,informativeness,helpfulness]
        [--forward-costs]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import torch

from citegraph.conner import (
    Knowledge,
    MetricValue,
    helpfulness_async,
    informativeness_async,
    sentence_coherence_async,
)
from citegraph.datasets import load_conner
from citegraph.models import LMScorer, TokenScores, causal_lm_scorer
from lm_scoring import timed  # this script's folder is on sys.path: the KaLMA benchmark's helper

#: Runs one metric on the first ``k`` items with the given scorer.
Metric = Callable[[LMScorer, int], Coroutine[Any, Any, list[MetricValue]]]
#: The metrics (``--metrics`` names) and their labels.
LABELS = {
    "coherence": "sentence coherence",
    "informativeness": "informativeness",
    "helpfulness": "helpfulness, u=3",
}
#: Items of the warm-up run (helpfulness needs u + 1 = 4 to draw its negatives).
WARM_UP_ITEMS = 4


class CountingScorer:
    """An :class:`LMScorer` that delegates to ``inner`` and keeps every TokenScores it returns."""

    def __init__(self, inner: LMScorer) -> None:
        self.inner = inner
        self.scored: list[TokenScores] = []

    @property
    def name(self) -> str:
        """The inner scorer's name."""
        return self.inner.name

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The inner scorer's ``score``, recorded."""
        scores = await self.inner.score(texts, token_logprobs=token_logprobs)
        self.scored += scores
        return scores

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The inner scorer's ``score_continuations``, recorded."""
        scores = await self.inner.score_continuations(pairs, token_logprobs=token_logprobs)
        self.scored += scores
        return scores

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        """Through :meth:`score`, so that the tokens are counted."""
        return [s.perplexity for s in await self.score(texts)]


def measure(
    metric: Metric, scorer: CountingScorer, n: int, repeat: int
) -> tuple[float, list[TokenScores], list[MetricValue]]:
    """A warm-up, then the best time of ``repeat`` runs on ``n`` items, the scores and values."""
    values: list[MetricValue] = []

    def run(k: int = n) -> list[TokenScores]:
        scorer.scored = []  # a new list: the one returned before stays as it is
        values[:] = asyncio.run(metric(scorer, k))
        return scorer.scored

    run(min(n, WARM_UP_ITEMS))
    seconds, scored = timed(run, repeat)
    return seconds, scored, values


def max_difference(batched: list[MetricValue], singles: list[MetricValue]) -> float:
    """The largest ``|batched - one at a time|`` value (inf when only one of a pair is None)."""
    return max(
        (
            math.inf
            if (a.value is None) != (b.value is None)
            else abs((a.value or 0.0) - (b.value or 0.0))
            for a, b in zip(batched, singles, strict=True)
        ),
        default=0.0,
    )


def row(
    mode: str, seconds: float, base: float, n: int, scored: list[TokenScores], diff: str
) -> None:
    """One table line: ``n`` items and ``scored`` in ``seconds``; ``base``: one at a time."""
    rates = f"{n / seconds:8.2f} {sum(s.n_tokens for s in scored) / seconds:9.0f}"
    print(f"{mode:<24} {seconds:7.2f} {rates} {base / seconds:7.1f}x {diff:>9}")


def forward_costs(scorer: LMScorer, lengths: Sequence[int] = (1, 8, 32, 128, 512)) -> None:
    """Print the decoder's forward time for one input and for 8 at once, per length."""
    decoder = scorer._runner._decoder  # type: ignore[attr-defined]  # a CausalLMScorer's
    print(f"{'length':>6} {'1 input ms':>10} {'8 inputs ms':>11} {'ms/token':>8} {'gain':>5}")
    with torch.inference_mode():
        for length in lengths:
            one, eight = torch.randint(0, 1000, (1, length)), torch.randint(0, 1000, (8, length))
            single = timed(lambda x=one: decoder(input_ids=x), 3)[0]
            batch = timed(lambda x=eight: decoder(input_ids=x), 3)[0]
            times = f"{1000 * single:>10.1f} {1000 * batch:>11.1f} {1000 * single / length:>8.2f}"
            print(f"{length:>6} {times} {8 * single / batch:>4.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=32, help="NQ test items to score")
    parser.add_argument("--batch-sizes", default="8,16", help="batched modes (comma-separated)")
    parser.add_argument("--metrics", default=",".join(LABELS), help="which (comma-separated)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--repeat", type=int, default=2, help="runs per mode; the best counts")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--forward-costs", action="store_true", help="forward pass costs first")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    samples = load_conner("nq", args.data_dir, limit=args.n)
    texts = [s.gold_knowledge for s in samples]
    knowledge = [Knowledge(id=s.id, text=s.gold_knowledge, source="gold") for s in samples]
    every: dict[str, Metric] = {
        "coherence": lambda lm, k: sentence_coherence_async(texts[:k], lm),
        "informativeness": lambda lm, k: informativeness_async(samples[:k], texts[:k], lm),
        "helpfulness": lambda lm, k: helpfulness_async(samples[:k], knowledge[:k], lm, u=3),
    }
    names = [x.strip() for x in args.metrics.split(",")]
    if unknown := [x for x in names if x not in every]:
        parser.error(f"unknown metrics {unknown}; known: {', '.join(every)}")
    metrics = {LABELS[x]: every[x] for x in names}
    n = len(samples)
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    started = time.perf_counter()
    scorers = {b: CountingScorer(causal_lm_scorer("local", batch_size=b)) for b in [1, *sizes]}
    took = time.perf_counter() - started
    print(f"loaded {scorers[1].name} {len(scorers)} times in {took:.1f} s")
    if args.forward_costs:
        forward_costs(scorers[1].inner)
    singles = {label: measure(m, scorers[1], n, args.repeat) for label, m in metrics.items()}
    print(f"torch threads {args.threads}; n = {n} NQ test items, gold passage as knowledge")
    print("mean per item:")
    for label, (_, scored, _) in singles.items():
        tokens = sum(s.n_tokens for s in scored) / n
        dropped = sum(s.n_truncated for s in scored)
        print(
            f"  {label}: {len(scored) / n:.1f} texts scored, {tokens:.1f} tokens scored"
            f" ({dropped} truncated tokens in all, not counted)"
        )
    for label, metric in metrics.items():
        head = f"{'s':>7} {'items/s':>8} {'tokens/s':>9} {'speed-up':>8} {'max |dv|':>9}"
        print(f"\n{label:<24} {head}")
        base, scored, reference = singles[label]
        row("one at a time", base, base, n, scored, "-")
        for size in sizes:
            seconds, scored, values = measure(metric, scorers[size], n, args.repeat)
            diff = f"{max_difference(values, reference):.1e}"
            row(f"batched, size {size}", seconds, base, n, scored, diff)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
