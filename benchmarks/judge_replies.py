"""Judge replies free vs constrained: the embedded model as CAQA judge and as text-quality judge.

On the same CAQA test samples (built from SimpleQuestions-WD over CoDEx-S, as ``citegraph demo``
does), the embedded SmolLM2-135M-Instruct (``local``) judges each sample with the ``alpaca``
prompt (8 tokens, as the demo) and rates the first ``--quality`` samples' answer statements on the
four G-Eval criteria (the citation's subgraph as the knowledge), once with free replies (the
papers' setting) and once constrained to a label word / a digit 1-5. Printed per judge and mode:
replies read (a label, a score), unparseable / unmeasured, the label or score distribution,
accuracy against the CAQA gold labels (paper scoring: an unparseable reply is wrong), the judge's
wall time and the grammar's share of it (the llguidance mask time the model reports per call).

    python benchmarks/judge_replies.py --data-dir ../shared/data --samples 32 --quality 8
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from citegraph.caqa import CaqaBuildConfig, LLMJudge, build_caqa
from citegraph.caqa.judge import read_samples
from citegraph.kalma.score import judge_text_quality_async
from citegraph.models import ChatModel, ChatRequest, Generation, chat_model
from citegraph.runs import Runtime


class _Timed:
    """A chat model that adds up the grammar seconds its replies report."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.grammar_mode = getattr(inner, "grammar_mode", None)
        self.grammar_s = 0.0

    async def generate(self, request: ChatRequest) -> Generation:
        generation = await self.inner.generate(request)
        self.grammar_s += float((generation.raw or {}).get("grammar_s") or 0.0)
        return generation

    async def aclose(self) -> None:
        return None


def _row(judge: str, mode: str, n: int, read: int, dist: Counter[Any], extra: str, wall: float,
         grammar_s: float) -> str:  # fmt: skip
    shown = ", ".join(f"{k}: {v}" for k, v in sorted(dist.items(), key=lambda kv: str(kv[0])))
    share = f"{100 * grammar_s / wall:.1f}%" if wall else "-"
    return (f"| {judge} | {mode} | {n} | {read} | {n - read} | {shown} | {extra} | {wall:.1f} | "
            f"{share} |")  # fmt: skip


async def _caqa(model: _Timed, samples: list[Any], replies: str) -> str:
    judge = LLMJudge(model, prompt="alpaca", max_tokens=8, replies=replies)  # type: ignore[arg-type]
    model.grammar_s = 0.0
    start = time.perf_counter()
    judgements = [await judge.judge_one(s) for s in samples]
    wall = time.perf_counter() - start
    labels = Counter(j.label or "unparseable" for j in judgements)
    read = sum(1 for j in judgements if j.label)
    right = sum(1 for j, s in zip(judgements, samples, strict=True) if j.label == s.label)
    accuracy = f"accuracy {right}/{len(samples)} = {right / len(samples):.3f}"
    return _row("CAQA label", replies, len(samples), read, labels, accuracy, wall, model.grammar_s)


async def _quality(model: _Timed, samples: list[Any], replies: str) -> str:
    model.grammar_s = 0.0
    scores: Counter[Any] = Counter()
    start = time.perf_counter()
    for sample in samples:
        result = await judge_text_quality_async(
            sample.question,
            sample.citation,
            sample.answer,
            model,  # type: ignore[arg-type]
            replies=replies,  # type: ignore[arg-type]
        )
        scores.update(
            v.score if v.score is not None else "unmeasured" for v in result.scores.values()
        )
    wall = time.perf_counter() - start
    n = 4 * len(samples)
    read = n - scores["unmeasured"]
    return _row("text quality", replies, n, read, scores, "-", wall, model.grammar_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--samples", type=int, default=32, help="CAQA samples judged.")
    parser.add_argument("--quality", type=int, default=8, help="Samples rated on 4 criteria.")
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "caqa"
        build_caqa(built, CaqaBuildConfig(questions="simplequestions-wd"),
                   data_dir=args.data_dir, runtime=Runtime(cache=False))  # fmt: skip
        samples, _ = read_samples(str(built / "test.jsonl"))
    samples = samples[: args.samples]
    model = _Timed(chat_model(args.model))
    print(f"model {args.model}; gold labels: {dict(Counter(s.label for s in samples))}\n")
    print("| judge | replies | replies asked | read | unparseable / unmeasured | distribution | "
          "agreement with gold | wall s | grammar share |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for replies in ("free", "constrained"):
        print(asyncio.run(_caqa(model, samples, replies)), flush=True)
    for replies in ("free", "constrained"):
        print(asyncio.run(_quality(model, samples[: args.quality], replies)), flush=True)
    asyncio.run(model.inner.aclose())


if __name__ == "__main__":
    main()
