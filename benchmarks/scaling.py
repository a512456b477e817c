"""Cost curve of ``kalma score`` and ``caqa build``: time and peak memory per item as runs grow.

``kalma score`` runs on 100, 1,000, 10,000 synthetic attributed answers (the answers of
``kalma_score.py``, built from BioKaLMA's specific questions with a graph, replicated with new ids
in a dataset directory of that size); ``caqa build`` (templates) on 100, 1,000, 5,000 queries
sampled from CoDEx-S. Each size runs in a fresh subprocess, so its peak RSS is its own; the
inputs are written beforehand by another subprocess (``ru_maxrss`` carries over fork and exec,
so this process stays small and imports nothing heavy). Per size it prints the items, wall
seconds of the stage call, ms per item, peak RSS, RSS above the child's interpreter+imports
baseline per item, and the growth exponents of time and of that memory between consecutive
sizes (log(t2/t1) / log(n2/n1)): ~1 for time is linear, ~0 for memory is flat (memory that does not
grow with n). Prints figures only.

    flock /tmp/citegraph-bench.lock .venv/bin/python benchmarks/scaling.py \\
        --score-sizes 100,1000,10000 --build-sizes 100,1000,5000
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPLIT_FILES = ("simple_question_graph.json", "complex_question_graph.json")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child_score(folder: Path) -> dict[str, Any]:
    from citegraph.kalma import KalmaScoreConfig, score_answers

    baseline = _peak_mb()
    start = time.perf_counter()
    result = score_answers(
        folder / "answers.jsonl",
        folder / "run",
        KalmaScoreConfig(dataset=str(folder / "dataset")),
        gold_path=folder / "gold.jsonl",
    )
    seconds = time.perf_counter() - start
    items = result.metrics["progress"]["n_done"]
    return {"items": items, "seconds": seconds, "baseline": baseline, "peak": _peak_mb()}


def _child_build(folder: Path, n: int, data_dir: str | None) -> dict[str, Any]:
    from citegraph.caqa import CaqaBuildConfig, build_caqa
    from citegraph.runs import Runtime

    baseline = _peak_mb()
    config = CaqaBuildConfig(questions="sample", kg="codex-s", sample=n)
    start = time.perf_counter()
    result = build_caqa(folder / "run", config, data_dir=data_dir, runtime=Runtime(cache=False))
    seconds = time.perf_counter() - start
    return {
        "items": result.n_questions,
        "samples": result.n_samples,
        "seconds": seconds,
        "baseline": baseline,
        "peak": _peak_mb(),
    }


def _score_inputs(folder: Path, n: int, data_dir: str | None) -> None:
    """A dataset directory of ``n`` specific questions (BioKaLMA's with a graph, cycled: new
    ids ``specific-<i>``) and its synthetic answers and gold."""
    from citegraph.datasets import biokalma_path, load_kalma_dataset
    from kalma_score import write_answers

    entries = json.loads(biokalma_path("specific", data_dir).read_text(encoding="utf-8"))
    with_graph = [e for e in entries if e[1]]
    dataset = folder / "dataset"
    dataset.mkdir(parents=True)
    text = json.dumps(list(itertools.islice(itertools.cycle(with_graph), n)))
    for name in SPLIT_FILES:
        (dataset / name).write_text(text, encoding="utf-8")
    samples = load_kalma_dataset(str(dataset), "specific")
    write_answers(samples, folder / "answers.jsonl", folder / "gold.jsonl")


def _run_child(args: list[str], timeout: float) -> dict[str, Any] | str:
    """The child's figures, or why there are none."""
    command = [sys.executable, __file__, "--child", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout:.0f} s"
    if done.returncode != 0:
        return f"failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}"
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def _exponent(a: float, b: float, n1: int, n2: int) -> str:
    if a <= 0 or b <= 0 or n1 == n2:
        return "-"
    return f"{math.log(b / a) / math.log(n2 / n1):.2f}"


def _table(title: str, rows: list[tuple[int, dict[str, Any] | str]]) -> None:
    print(f"\n{title}")
    header = ("n", "items", "s", "ms/item", "peak MB", "base MB", "KB/item", "t exp", "mem exp")
    widths = (6, 6, 8, 8, 8, 8, 8, 6, 7)
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, widths, strict=True)))
    previous: tuple[int, float, float] | None = None
    for n, figures in rows:
        if isinstance(figures, str):
            print(f"{n:>6} {figures}")
            previous = None
            continue
        items, seconds = figures["items"], figures["seconds"]
        above = max(figures["peak"] - figures["baseline"], 0.0)
        t_exp = mem_exp = "-"
        if previous is not None:
            t_exp = _exponent(previous[1], seconds, previous[0], items)
            mem_exp = _exponent(previous[2], above, previous[0], items)
        extra = f"  ({figures['samples']} samples)" if "samples" in figures else ""
        print(
            f"{n:>6} {items:>6} {seconds:>8.2f} {1000 * seconds / items:>8.3f} "
            f"{figures['peak']:>8.1f} {figures['baseline']:>8.1f} {1024 * above / items:>8.2f} "
            f"{t_exp:>6} {mem_exp:>7}{extra}"
        )
        previous = (items, seconds, above)


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--score-sizes", default="100,1000,10000")
    parser.add_argument("--build-sizes", default="100,1000,5000")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--timeout", type=float, default=900, help="Seconds per size.")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        stage, folder, *rest = args.child
        if stage == "inputs":
            _score_inputs(Path(folder), int(rest[0]), rest[1] if len(rest) > 1 else None)
            return
        if stage == "score":
            figures = _child_score(Path(folder))
        else:
            figures = _child_build(Path(folder), int(rest[0]), rest[1] if len(rest) > 1 else None)
        print(json.dumps(figures))
        return
    data = [args.data_dir] if args.data_dir else []
    with tempfile.TemporaryDirectory() as tmp:
        rows: list[tuple[int, dict[str, Any] | str]] = []
        for n in _sizes(args.score_sizes):
            folder = Path(tmp) / f"score-{n}"
            prepared = _run_child(["inputs", str(folder), str(n), *data], args.timeout)
            if isinstance(prepared, str):
                raise SystemExit(f"writing the inputs of {n} answers {prepared}")
            rows.append((n, _run_child(["score", str(folder)], args.timeout)))
        if rows:
            _table("kalma score (lexical, paper mode), answers", rows)
        rows = []
        for n in _sizes(args.build_sizes):
            folder = Path(tmp) / f"build-{n}"
            rows.append((n, _run_child(["build", str(folder), str(n), *data], args.timeout)))
        if rows:
            _table("caqa build (templates, CoDEx-S sampled queries), questions", rows)
    print(
        "\nKB/item = (peak RSS - interpreter+imports baseline) / items; exponents between "
        "consecutive sizes: time ~1 linear, memory ~0 flat"
    )


if __name__ == "__main__":
    main()
