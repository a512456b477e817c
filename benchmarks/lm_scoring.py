"""Throughput of the causal-LM scorer (embedded SmolLM2-135M) on KaLMA-style coherence inputs.

Candidate texts are built as in knowledge selection: for each of the first BioKaLMA graphs with
enough facts, the paragraph is the template sentences of its first ``--paragraph-facts`` facts
("<name>'s <relation> is <value>.") and every further fact gives one candidate, paragraph + its
sentence. The script scores the same ``--n`` candidates one call per text and then batched
(batch sizes 1, 4, 8, 16 by default; batches are sorted by length) and prints texts per second
and input tokens per second, plus the largest difference of a batched perplexity from the one at
a time; and, at batch size 8, the same candidates as (paragraph, sentence) continuations. Then
the scorer's batch plan against a plain loop over fixed batches of 64 texts in input order (one
forward pass per 64, padded to the longest; same model, inputs and dtype), with the CPU plan
and with the accelerator plan forced (512 inputs, 32,768 positions, padding free up to 256 per
input): the host cost of planning, and the padded positions each way. One
torch thread unless ``--threads`` says otherwise; each mode runs ``--repeat`` times and the best
time counts (the machines are shared). Prints figures only.

    .venv/bin/python benchmarks/lm_scoring.py [--n 48] [--threads 1] [--repeat 2] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import torch

from citegraph.datasets import load_biokalma
from citegraph.models.lm._inputs import plan_batches
from citegraph.models.lm._scorer import TokenScores, causal_lm_scorer

#: The plain loop's batch size (the harness before the batch plan used fixed batches of 64).
PLAIN_BATCH = 64


def candidates(n: int, paragraph_facts: int, data_dir: str | None) -> list[tuple[str, str]]:
    """``n`` (paragraph, " " + one more fact sentence) pairs from the first BioKaLMA graphs."""
    pairs: list[tuple[str, str]] = []
    for sample in load_biokalma("specific", data_dir):
        for graph in sample.graphs:
            name = graph.center.name
            sentences = [f"{name}'s {t.relation} is {t.value}." for t in graph.triples]
            if len(sentences) > paragraph_facts:
                paragraph = " ".join(sentences[:paragraph_facts])
                pairs += [(paragraph, f" {s}") for s in sentences[paragraph_facts:]]
            if len(pairs) >= n:
                return pairs[:n]
    return pairs


def timed(run: Callable[[], list[TokenScores]], repeat: int) -> tuple[float, list[TokenScores]]:
    """The best wall time of ``repeat`` runs (the machines are shared) and the last scores."""
    best, scores = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        scores = run()
        best = min(best, time.perf_counter() - start)
    return best, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="candidate texts to score")
    parser.add_argument("--paragraph-facts", type=int, default=6)
    parser.add_argument("--batch-sizes", default="1,4,8,16")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--repeat", type=int, default=2, help="runs per mode; the best counts")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pairs = candidates(args.n, args.paragraph_facts, args.data_dir)
    texts = [p + c for p, c in pairs]
    started = time.perf_counter()
    base = causal_lm_scorer("local")
    took = time.perf_counter() - started
    print(f"loaded {base.name} in {took:.1f} s; torch threads {args.threads}")
    base.score_sync(texts)  # warm-up: the first pass over new shapes is slower
    seconds, singles = timed(lambda: [base.score_sync([t])[0] for t in texts], args.repeat)
    n_tokens = sum(s.n_tokens + 1 for s in singles)  # + the unpredicted first token
    print(f"{len(texts)} texts, {n_tokens / len(texts):.0f} tokens each on average")
    print(f"{'mode':<34} {'s':>7} {'texts/s':>8} {'tokens/s':>9} {'max |dppl|':>11}")

    def row(label: str, seconds: float, diff: str) -> None:
        rates = f"{len(texts) / seconds:8.1f} {n_tokens / seconds:9.0f}"
        print(f"{label:<34} {seconds:7.2f} {rates} {diff:>11}")

    row("texts, one call per text", seconds, "-")
    for size in (int(x) for x in args.batch_sizes.split(",")):
        scorer = causal_lm_scorer("local", batch_size=size)  # the converted folder: ~1 s
        seconds, batched = timed(lambda: scorer.score_sync(texts), args.repeat)  # noqa: B023
        diff = max(
            abs((a.perplexity or 0.0) - (b.perplexity or 0.0))
            for a, b in zip(batched, singles, strict=True)
        )
        row(f"texts, batched, size {size}", seconds, f"{diff:.2e}")
        if size == 8:  # the KaLMA candidates as (paragraph, sentence): logits of the sentence only
            seconds, _ = timed(lambda: scorer.score_continuations_sync(pairs), args.repeat)  # noqa: B023
            row("continuations, batched, size 8", seconds, "-")
    plan_against_plain_loop(texts, singles, args.repeat, row)


def padded_positions(scorer: Any, texts: list[str]) -> tuple[int, int]:
    """Forward passes and padded positions (inputs x width) the scorer's plan makes."""
    ids = scorer._tokenizer(texts, add_special_tokens=False)["input_ids"]
    widths = sorted((len(x) for x in ids), reverse=True)
    cuts = plan_batches(widths, scorer._batch_size, scorer._max_batch_tokens, scorer._pad_free)
    return len(cuts), sum((end - begin) * widths[begin] for begin, end in cuts)


def plan_against_plain_loop(
    texts: list[str], singles: list[TokenScores], repeat: int, row: Callable[..., None]
) -> None:
    """The scorer's plan (CPU, and the accelerator plan forced) against fixed batches of 64."""
    plain = causal_lm_scorer("local", batch_size=PLAIN_BATCH, max_batch_tokens=1 << 30)
    plain._pad_free = 1 << 30  # one forward pass per 64 texts, whatever their lengths
    ids = plain._tokenizer(texts, add_special_tokens=False)["input_ids"]
    chunks = [texts[k : k + PLAIN_BATCH] for k in range(0, len(texts), PLAIN_BATCH)]
    padded = sum(
        len(chunk) * max(len(x) for x in ids[k * PLAIN_BATCH : (k + 1) * PLAIN_BATCH])
        for k, chunk in enumerate(chunks)
    )
    seconds, scores = timed(lambda: [s for c in chunks for s in plain.score_sync(c)], repeat)
    row(f"plain loop, batches of {PLAIN_BATCH}", seconds, _diff(scores, singles))
    print(f"{'':<34} {len(chunks)} passes, {padded} padded positions")
    for label, forced in (("CPU plan", None), ("accelerator plan", (512, 32_768, 256))):
        scorer = causal_lm_scorer("local")
        if forced is not None:
            scorer._batch_size, scorer._max_batch_tokens, scorer._pad_free = forced
        seconds, scores = timed(lambda s=scorer: s.score_sync(texts), repeat)
        row(f"scorer, {label}", seconds, _diff(scores, singles))
        started = time.perf_counter()
        passes, positions = padded_positions(scorer, texts)
        took = 1000 * (time.perf_counter() - started)
        print(f"{'':<34} {passes} passes, {positions} padded positions, plan {took:.1f} ms")


def _diff(scores: list[TokenScores], singles: list[TokenScores]) -> str:
    diff = max(
        abs((a.perplexity or 0.0) - (b.perplexity or 0.0))
        for a, b in zip(scores, singles, strict=True)
    )
    return f"{diff:.2e}"


if __name__ == "__main__":
    main()
