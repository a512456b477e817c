"""``kalma run`` against a local OpenAI-compatible server that answers after a fixed delay.

Prints, per concurrency level (best of ``--repeats`` runs, each into a fresh run directory),
the wall time of the run against the ideal ``ceil(questions / concurrency) x delay``, the
overhead per question (prompt building, HTTP, parsing, scoring, the run record) and the client's
CPU time per question. The server is citegraph's FakeOpenAIServer (real HTTP on 127.0.0.1), in
a child process by default; the response cache is off so every question reaches the server.

    python benchmarks/kalma_run_server.py --questions 400 --delay 0.2 --concurrency 8,16,32

``--timeline`` adds one more run per level, timed request by request, and prints where the time
over the ideal went: the run's start before its first request, its end after the last answer,
and how long each wave of requests took to go out.
"""

from __future__ import annotations

import argparse
import tempfile
from functools import partial
from pathlib import Path

from _server_levels import (
    HEADER,
    LEGEND,
    Timeline,
    add_level_arguments,
    fake_server,
    levels_of,
    report_level,
    timed,
)
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.runs import Runtime

ANSWER = (
    "The person was born in a city [NA]. They are known for their work [Q1, occupation: writer]."
)


def _run(out: Path, config: KalmaRunConfig, runtime: Runtime, data_dir: str | None) -> None:
    result = run_kalma(out, config, runtime=runtime, data_dir=data_dir)
    assert result.metrics["n_answers"] == runtime.limit, result.metrics["n_answers"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--timeline", action="store_true",
        help="one more run per level, timed request by request: where the time over the ideal goes",
    )  # fmt: skip
    add_level_arguments(parser, "8,16,32")
    args = parser.parse_args()
    print(
        f"kalma run: {args.questions} questions, server delay {args.delay:.3f} s "
        f"({args.server}), best of {args.repeats}"
    )
    print(HEADER)
    with (
        fake_server(ANSWER, args.delay, args.server) as base_url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        config = KalmaRunConfig(model="vllm/bench", base_url=base_url)
        for level in levels_of(args.concurrency):
            n = args.questions if level > 1 else min(args.questions, 25)
            runtime = Runtime(limit=n, concurrency=level, cache=False)
            timings = [
                timed(partial(_run, Path(tmp) / f"c{level}-{r}", config, runtime, args.data_dir))
                for r in range(args.repeats)
            ]
            print(report_level(level, n, args.delay, timings))
            if args.timeline:
                with Timeline() as timeline:
                    _run(Path(tmp) / f"c{level}-timeline", config, runtime, args.data_dir)
                print(timeline.report(level))
    print(LEGEND)


if __name__ == "__main__":
    main()
