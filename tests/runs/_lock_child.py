"""A child process for the one-writer tests: ``python _lock_child.py hold OUT`` opens the run
directory ``OUT`` (taking its lock), prints ``locked`` and waits for a line on stdin;
``python _lock_child.py kalma OUT DATA GATE`` runs ``kalma run --limit 3`` into ``OUT`` with a
mock model whose first answer waits until the file ``GATE`` exists."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import RunDir, Runtime


def _hold(out: Path) -> None:
    with RunDir.open(out, {"child": True}):
        print("locked", flush=True)
        sys.stdin.readline()


def _kalma(out: Path, data_dir: Path, gate: Path) -> None:
    def answer(request: ChatRequest) -> str:
        while not gate.exists():  # hold the run (and its lock) until the test says
            time.sleep(0.02)
        return "I cannot say [NA]."

    runtime = Runtime(limit=3, concurrency=1)
    run_kalma(
        out,
        KalmaRunConfig(model="mock"),
        runtime=runtime,
        data_dir=data_dir,
        model=MockChat(answer),
    )


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        _hold(Path(sys.argv[2]))
    else:
        _kalma(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
