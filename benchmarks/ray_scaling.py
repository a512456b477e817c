"""Throughput of ``kalma score`` on a Ray actor pool (``--engine ray``) against the local engine.

Usage::

    .venv/bin/python benchmarks/ray_scaling.py [--items 1085] [--batch-size 8] [--delay 0.05]
                                               [--appends 20000]

The answers are the four demo answers (and their gold) replicated over the first ``--items``
question ids of BioKaLMA's specific split (answer ``i`` is demo answer ``i % 4``), so every run
is a real ``kalma score`` run (parse, citation scores, alignment, [NA]). The NLI model is the
lexical matcher behind a wrapper that first sleeps ``--delay`` seconds per call (a blocking
sleep that stands for one GPU forward pass: the process can do nothing else meanwhile); its
verdicts and its name are the matcher's, so the records are those of a plain lexical run.

In one process, one after the other: the local engine, Ray with 1 actor, Ray with 2 actors, each
into a fresh run directory through :func:`citegraph.runs.run_task`; then the same three with no
delay (what Ray itself costs per item). Ray is started once at the start
(``ray.init(num_cpus=2, include_dashboard=False)``) and its start-up is reported apart. Figures:

- wall time and items/s of each run, and items/s in steady state (from the first record
  written to the last: without the actor pool's start-up, which every Ray run pays once);
- the ratio 2 actors / 1 actor (target >= 1.7x for the delay-bound case on 2 cores);
- Ray's overhead per item in ms: (Ray 1-actor wall - local wall) / items, with and without the
  delay, and the same in steady state;
- the driver's append rate in records/s: ``RunDir.append`` of real records, alone and with the
  JSON decoding the Ray driver loop does per record (the ceiling of any number of actors);
- whether the Ray records are the local records (same ids, same values) and the metrics equal.

Prints figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from citegraph.kalma import KalmaScoreConfig
from citegraph.kalma.score._task import KalmaScoreTask
from citegraph.models import NLIPair, NLIVerdict
from citegraph.models.nli import LexicalNLI
from citegraph.runs import RunDir, Runtime, run_task_async


class SlowNLI:
    """The lexical matcher after a blocking ``delay`` seconds per call (stands for GPU time).

    Top-level and holding only a float, so the Ray executor can pickle the task that holds it.
    """

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._lexical = LexicalNLI()

    @property
    def name(self) -> str:
        """The matcher's name: the records and the run's identity are a lexical run's."""
        return self._lexical.name

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """Sleep ``delay`` (blocking, as a model's forward pass holds the process), then match."""
        time.sleep(self.delay)
        return await self._lexical.entails(pairs)


class CountingNLI(SlowNLI):
    """SlowNLI that counts its calls (local engine only: the count stays in this process)."""

    calls = 0

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """Count, then as SlowNLI."""
        type(self).calls += 1
        return await super().entails(pairs)


def build_inputs(folder: Path, n: int) -> tuple[Path, Path]:
    """answers.jsonl and gold.jsonl: demo answer/gold ``i % 4`` under id ``specific-<i>``."""
    demo = resources.files("citegraph.kalma") / "demo"
    answers = [json.loads(x) for x in (demo / "answers.jsonl").read_text().splitlines() if x]
    gold = [json.loads(x) for x in (demo / "gold.jsonl").read_text().splitlines() if x]
    gold_by_id = {g["id"]: g for g in gold}
    answers_path, gold_path = folder / "answers.jsonl", folder / "gold.jsonl"
    with answers_path.open("w") as fa, gold_path.open("w") as fg:
        for i in range(n):
            source = answers[i % len(answers)]
            fa.write(json.dumps(source | {"id": f"specific-{i}"}) + "\n")
            if source["id"] in gold_by_id:
                fg.write(json.dumps(gold_by_id[source["id"]] | {"id": f"specific-{i}"}) + "\n")
    return answers_path, gold_path


class Timed:
    """One run's wall time and the time of its first and last record (from progress calls)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.first: tuple[float, int] | None = None
        self.last: tuple[float, int] | None = None

    def progress(self, done: int, total: int) -> None:
        """The engine's progress callback: remember the first and the newest batch's time."""
        if done == 0:
            return
        now = (time.perf_counter(), done)
        if self.first is None:
            self.first = now
        self.last = now

    def to_first(self) -> float:
        """Seconds from the call to the first record written (for Ray: the pool's start-up)."""
        return float("nan") if self.first is None else self.first[0] - self.start

    def steady_rate(self) -> float:
        """Items/s from the first record to the last (the pool's start-up left out)."""
        if self.first is None or self.last is None or self.last[1] == self.first[1]:
            return float("nan")
        return (self.last[1] - self.first[1]) / (self.last[0] - self.first[0])


def run_one(
    config: KalmaScoreConfig,
    answers: Path,
    gold: Path,
    out: Path,
    nli: Any,
    runtime: Runtime,
) -> tuple[float, float, float, Any]:
    """One ``kalma score`` run: (wall s, s to the first record, steady items/s, outcome)."""
    timed = Timed()
    runtime = runtime.model_copy(update={"progress": timed.progress})
    task = KalmaScoreTask(config, answers, gold_path=gold, nli=nli)
    outcome = asyncio.run(run_task_async(task, out, runtime))
    wall = time.perf_counter() - timed.start
    return wall, timed.to_first(), timed.steady_rate(), outcome


def same_records(a: Any, b: Any) -> bool:
    """Same ids and the same record for each id (order aside)."""
    records_a, records_b = list(a.records()), list(b.records())
    by_id_a = {r["id"]: r for r in records_a}
    by_id_b = {r["id"]: r for r in records_b}
    return by_id_a == by_id_b and len(records_a) == len(records_b)


def append_rate(records: list[dict[str, Any]], n: int, folder: Path) -> tuple[float, float]:
    """Records/s of ``RunDir.append`` alone, and of the Ray driver's loop (decode + append)."""
    lines = [
        json.dumps(records[i % len(records)] | {"id": f"specific-{i}"}, ensure_ascii=False)
        for i in range(n)
    ]
    rates = []
    for name, decode in (("append", False), ("decode+append", True)):
        run = RunDir.open(folder / name, {"bench": name})
        decoded = [] if decode else [json.loads(line) for line in lines]
        start = time.perf_counter()
        if decode:
            for line in lines:
                run.append(json.loads(line))
        else:
            for record in decoded:
                run.append(record)
        run.close()
        rates.append(n / (time.perf_counter() - start))
    return rates[0], rates[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1085, help="Answers (at most 1085).")
    parser.add_argument("--batch-size", type=int, default=8, help="Answers per work call.")
    parser.add_argument("--delay", type=float, default=0.05, help="Seconds per NLI call.")
    parser.add_argument("--appends", type=int, default=20_000, help="Records for the append rate.")
    args = parser.parse_args()

    slow, counting = SlowNLI, CountingNLI  # sent to Ray workers by value (cloudpickle)
    import ray

    logging.getLogger("ray.data").setLevel(logging.WARNING)

    start = time.perf_counter()
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING
    )
    ray_start = time.perf_counter() - start

    config = KalmaScoreConfig()
    n, size = args.items, args.batch_size
    engines = [
        ("local", Runtime(batch_size=size)),
        ("ray, 1 actor", Runtime(batch_size=size, engine="ray", ray_actors=1)),
        ("ray, 2 actors", Runtime(batch_size=size, engine="ray", ray_actors=2)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        answers, gold = build_inputs(folder, n)
        print(f"kalma score: {n} answers, batches of {size}, lexical matcher")
        print(f"ray.init(num_cpus=2): {ray_start:.2f} s (once, not counted in the runs)")
        results: dict[tuple[str, float], tuple[float, float, float, Any]] = {}
        for delay in (args.delay, 0.0):
            label = f"delay {delay * 1e3:.0f} ms per NLI call"
            if delay:
                counting.calls = 0
            print(f"\n{label}")
            print(
                f"{'engine':<14} {'wall s':>7} {'items/s':>8} {'first record s':>15} "
                f"{'steady items/s':>15}"
            )
            for name, runtime in engines:
                nli = counting(delay) if name == "local" else slow(delay)
                out = folder / f"{name.replace(' ', '').replace(',', '-')}-{delay}"
                wall, first, steady, outcome = run_one(config, answers, gold, out, nli, runtime)
                results[(name, delay)] = (wall, first, steady, outcome)
                print(f"{name:<14} {wall:7.2f} {n / wall:8.1f} {first:15.2f} {steady:15.1f}")
            if delay:
                calls = counting.calls
                model_s = calls * delay
                local_wall = results[("local", delay)][0]
                print(
                    f"NLI calls: {calls} ({calls / (n / size):.1f} per batch): "
                    f"{model_s:.2f} s of model time, {model_s / local_wall:.0%} of the local wall"
                )
            one, two = results[("ray, 1 actor", delay)], results[("ray, 2 actors", delay)]
            local = results[("local", delay)]
            print(
                f"2 actors / 1 actor: {one[0] / two[0]:.2f}x wall, {two[2] / one[2]:.2f}x steady"
                + ("  (target >= 1.7x)" if delay else "")
            )
            print(
                f"Ray overhead per item (1 actor - local): {1e3 * (one[0] - local[0]) / n:.1f} ms "
                f"wall, {1e3 * (1 / one[2] - 1 / local[2]):.1f} ms steady; "
                f"pool start-up {one[1] - local[1]:.2f} s per run (first record, 1 actor - local)"
            )
        base = results[("local", args.delay)][3]
        same = all(
            same_records(base, outcome) and outcome.metrics == base.metrics
            for (_, _, _, outcome) in results.values()
        )
        print(f"\nRay records identical to local (ids and values) and metrics equal: {same}")
        ray.shutdown()  # its processes would compete with the driver for the 2 cores
        appended, looped = append_rate(list(base.records()), args.appends, folder / "append")
        print(
            f"driver append rate ({args.appends} records): {appended:,.0f} records/s "
            f"RunDir.append, {looped:,.0f} records/s with JSON decoding (the Ray driver loop)"
        )


if __name__ == "__main__":
    main()
