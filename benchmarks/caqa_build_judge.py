"""CAQA build throughput, and ``caqa judge`` throughput against a local OpenAI-compatible server.

Part 1 prints samples built per second with the template textualiser (structure + text, no
model) on queries sampled from CoDEx-S and on a KGQA set, and with the LLM textualiser against a
server that answers at once (the cost of the prompt/HTTP/record path per sample).
Part 2 prints, per concurrency level (best of ``--repeats`` runs, each into a fresh run
directory), judge wall time against the ideal ``ceil(samples / concurrency) x delay``, the
overhead and the client's CPU time per sample. The server is citegraph's FakeOpenAIServer (real
HTTP on 127.0.0.1), in a child process by default for part 2; the response cache is off so every
call reaches it.

    python benchmarks/caqa_build_judge.py --judge 400 --delay 0.2 --concurrency 1,4,16
    python benchmarks/caqa_build_judge.py --judge-only --concurrency 16
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial
from pathlib import Path

from _server_levels import (
    HEADER,
    LEGEND,
    add_level_arguments,
    fake_server,
    levels_of,
    report_level,
    timed,
)
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


def _judge(out: Path, config: CaqaJudgeConfig, runtime: Runtime) -> None:
    result = judge_caqa(out, config, runtime=runtime)
    assert result.n_samples == runtime.limit, result.n_samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=600, help="Queries sampled from CoDEx-S.")
    parser.add_argument("--judge", type=int, default=400, help="Samples judged per level.")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--judge-only", action="store_true", help="Skip the build figures (part 1)."
    )
    add_level_arguments(parser, "1,4,16")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sampled = CaqaBuildConfig(questions="sample", kg="codex-s", sample=args.sample)
        if args.judge_only:
            build_caqa(root / "b-sample", sampled, data_dir=args.data_dir)
        else:
            _build_figures(root, sampled, args.data_dir)
        test = root / "b-sample" / "train.jsonl"
        print(
            f"\ncaqa judge: {args.judge} samples, server delay {args.delay:.3f} s "
            f"({args.server}), best of {args.repeats}"
        )
        print(HEADER)
        with fake_server("Supportive", args.delay, args.server) as base_url:
            config = CaqaJudgeConfig(
                data=str(test), evaluator="vllm/bench", base_url=base_url, bootstrap=0
            )
            for level in levels_of(args.concurrency):
                n = args.judge if level > 1 else min(args.judge, 25)
                runtime = Runtime(limit=n, batch_size=1, concurrency=level, cache=False)
                timings = [
                    timed(partial(_judge, root / f"j{level}-{r}", config, runtime))
                    for r in range(args.repeats)
                ]
                print(report_level(level, n, args.delay, timings))
    print(LEGEND)


def _build_figures(root: Path, sampled: CaqaBuildConfig, data_dir: str | None) -> None:
    print("caqa build")
    header = ("set", "text", "questions", "samples", "wall s", "samples/s")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (20, 10, 9, 8, 7, 10), strict=True)))
    _build(root / "b-sample", sampled, data_dir)
    _build(root / "b-sq", CaqaBuildConfig(questions="simplequestions-wd"), data_dir)
    _build(
        root / "b-pq", CaqaBuildConfig(questions="pathquestion-2h"), data_dir, Runtime(limit=300)
    )
    with FakeOpenAIServer(reply=lambda body: "A sentence about the facts.") as server:
        llm = CaqaBuildConfig(
            questions="simplequestions-wd", text="vllm/bench", base_url=server.base_url
        )
        _build(root / "b-llm", llm, data_dir, Runtime(concurrency=8))


if __name__ == "__main__":
    main()
