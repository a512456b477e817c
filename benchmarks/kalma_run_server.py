"""``kalma run`` against a local OpenAI-compatible server that answers after a fixed delay.

Prints, per concurrency level, the wall time of the run against the ideal
(questions x delay / concurrency) and the overhead per question (prompt building, HTTP, parsing,
scoring, the run record). The server is citegraph's FakeOpenAIServer (real HTTP on 127.0.0.1);
the response cache is off so every question reaches the server.

    python benchmarks/kalma_run_server.py --questions 200 --delay 0.2 --concurrency 1,4,8,16
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from citegraph.kalma import RunConfig, RunRuntime, run_kalma
from citegraph.testing import FakeOpenAIServer

ANSWER = "{name} was born in a city [NA]. They are known for their work [Q1, occupation: writer]."


def reply(body: dict) -> str:
    """A plausible attributed answer (one [NA], one citation)."""
    return ANSWER.format(name="The person")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.2, help="Server delay per answer (s).")
    parser.add_argument("--concurrency", default="1,4,8,16")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    print(f"kalma run: {args.questions} questions, server delay {args.delay:.3f} s")
    print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'overhead/q ms':>14}")
    with (
        FakeOpenAIServer(reply=reply, delay=args.delay) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for level in levels:
            n = args.questions if level > 1 else min(args.questions, 25)
            config = RunConfig(model="vllm/bench", base_url=server.base_url)
            runtime = RunRuntime(limit=n, concurrency=level, cache=False)
            start = time.perf_counter()
            result = run_kalma(
                Path(tmp) / f"c{level}", config, runtime=runtime, data_dir=args.data_dir
            )
            wall = time.perf_counter() - start
            assert result.metrics["n_answers"] == n
            ideal = n * args.delay / level
            overhead_ms = 1000 * (wall - ideal) / n
            note = "" if n == args.questions else f"  ({n} questions)"
            print(
                f"{level:>11} {wall:>8.2f} {ideal:>8.2f} {wall / ideal:>6.2f} "
                f"{overhead_ms:>14.1f}{note}"
            )
    print("ratio = wall / ideal; overhead/q = (wall - ideal) / questions")


if __name__ == "__main__":
    main()
