"""CAQA build throughput, and ``caqa judge`` throughput against a local OpenAI-compatible server.

Part 1 prints samples built per second with the template textualiser (structure + text, no
model) on queries sampled from CoDEx-S and on a KGQA set, and with the LLM textualiser against a
server that answers at once (the cost of the prompt/HTTP/record path per sample).
Part 2 prints judge wall time against the ideal (samples x delay / concurrency) per concurrency
level. The server is citegraph's FakeOpenAIServer (real HTTP on 127.0.0.1); the response cache
is off so every call reaches it.

    python benchmarks/caqa_build_judge.py --sample 300 --judge 200 --delay 0.2 --concurrency 1,4,16
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from citegraph.caqa import CaqaBuildConfig, CaqaJudgeConfig, build_caqa, judge_caqa
from citegraph.runs import Runtime
from citegraph.testing import FakeOpenAIServer


def _build(
    out: Path, config: CaqaBuildConfig, data_dir: str | None, runtime: Runtime | None = None
) -> None:
    runtime = runtime or Runtime()
    start = time.perf_counter()
    result = build_caqa(
        out, config, data_dir=data_dir, runtime=runtime.model_copy(update={"cache": False})
    )
    wall = time.perf_counter() - start
    m = result.metrics
    print(
        f"{config.questions:>20} {config.text:>10} {m['records']['ok']:>9} {result.n_samples:>8} "
        f"{wall:>7.2f} {result.n_samples / wall:>10.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300, help="Queries sampled from CoDEx-S.")
    parser.add_argument("--judge", type=int, default=200, help="Samples judged per level.")
    parser.add_argument("--delay", type=float, default=0.2, help="Server delay per reply (s).")
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("caqa build")
        header = ("set", "text", "questions", "samples", "wall s", "samples/s")
        print(" ".join(f"{h:>{w}}" for h, w in zip(header, (20, 10, 9, 8, 7, 10), strict=True)))
        sampled = CaqaBuildConfig(questions="sample", kg="codex-s", sample=args.sample)
        _build(root / "b-sample", sampled, args.data_dir)
        _build(root / "b-sq", CaqaBuildConfig(questions="simplequestions-wd"), args.data_dir)
        _build(
            root / "b-pq",
            CaqaBuildConfig(questions="pathquestion-2h"),
            args.data_dir,
            Runtime(limit=300),
        )
        with FakeOpenAIServer(reply=lambda body: "A sentence about the facts.") as server:
            llm = CaqaBuildConfig(
                questions="simplequestions-wd", text="vllm/bench", base_url=server.base_url
            )
            _build(root / "b-llm", llm, args.data_dir, Runtime(concurrency=8))
        test = root / "b-sample" / "train.jsonl"
        print(f"\ncaqa judge: {args.judge} samples, server delay {args.delay:.3f} s")
        print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'samples/s':>10}")
        with FakeOpenAIServer(reply=lambda body: "Supportive", delay=args.delay) as server:
            for level in [int(c) for c in args.concurrency.split(",")]:
                n = args.judge if level > 1 else min(args.judge, 25)
                config = CaqaJudgeConfig(
                    data=str(test), evaluator="vllm/bench", base_url=server.base_url, bootstrap=0
                )
                start = time.perf_counter()
                result = judge_caqa(
                    root / f"j{level}",
                    config,
                    runtime=Runtime(limit=n, batch_size=1, concurrency=level, cache=False),
                )
                wall = time.perf_counter() - start
                assert result.n_samples == n, result.n_samples
                ideal = n * args.delay / level
                print(
                    f"{level:>11} {wall:>8.2f} {ideal:>8.2f} {wall / ideal:>6.2f} {n / wall:>10.1f}"
                )
    print("ratio = wall / ideal")


if __name__ == "__main__":
    main()
