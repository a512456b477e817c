"""Embedded KG speed: load time, store size and one-hop query latency (BioKaLMA and CoDEx-S).

Usage::

    .venv/bin/python benchmarks/kg_load_query.py [--data-dir DIR] [--cache-dir DIR] [--repeat N]

Loads each KG three ways: into memory, into an empty on-disk cache (a cold import) and from that
cache again (a hit). Then times, on the in-memory store and on the on-disk store, for every
entity of the 1,085 BioKaLMA questions (every CoDEx-S entity for CoDEx-S): exact name lookup,
case-insensitive lookup, the one-hop subgraph and the id-level edges both ways (``kg.ids``,
what CAQA reads). The first pass over a freshly opened on-disk
store is reported as "cold", later passes as "warm". Prints figures only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from citegraph.io import resolve_data_dir
from citegraph.kg import OxigraphKG, load_biokalma_kg, load_codex_kg

T = TypeVar("T")


def _ms(samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p50 = ordered[len(ordered) // 2]
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"mean {statistics.fmean(samples) * 1e3:7.3f}  p50 {p50 * 1e3:7.3f}  "
        f"p95 {p95 * 1e3:7.3f} ms  (n={len(samples)})"
    )


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _latencies(kg: OxigraphKG, targets: list[tuple[str, str]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {
        "find (exact)": [],
        "find (case-insens.)": [],
        "subgraph": [],
        "id edges (both ways)": [],
    }
    ids = kg.ids
    for qid, name in targets:
        t0 = time.perf_counter()
        kg.find_entities_sync(name)
        t1 = time.perf_counter()
        kg.find_entities_sync(name.lower(), case_sensitive=False)
        t2 = time.perf_counter()
        kg.subgraph_sync(qid)
        t3 = time.perf_counter()
        for outgoing in (True, False):
            for _ in ids.edges(qid, outgoing=outgoing):
                pass
        t4 = time.perf_counter()
        out["find (exact)"].append(t1 - t0)
        out["find (case-insens.)"].append(t2 - t1)
        out["subgraph"].append(t3 - t2)
        out["id edges (both ways)"].append(t4 - t3)
    return out


def _report(label: str, lat: dict[str, list[float]]) -> None:
    for op, samples in lat.items():
        print(f"    {label:<14} {op:<20} {_ms(samples)}")


def bench(
    name: str,
    load: Callable[..., OxigraphKG],
    targets: list[tuple[str, str]],
    cache_dir: Path,
    repeat: int,
) -> None:
    print(f"\n== {name}")
    t_mem, mem = _timed(lambda: load(use_cache=False))
    t_cold, _ = _timed(lambda: load(cache_dir=cache_dir))
    t_hit, disk = _timed(lambda: load(cache_dir=cache_dir))
    print(f"  load into memory          {t_mem * 1e3:9.1f} ms")
    print(f"  import into disk cache    {t_cold * 1e3:9.1f} ms  (hash, bulk load, rename, open)")
    print(f"  open from disk cache      {t_hit * 1e3:9.1f} ms  (imported={disk.imported})")
    print(
        f"  size: {len(mem):,} facts, {len(mem.store):,} quads in all; "
        f"cache entry {_dir_size(disk.path) / 1e6:.1f} MB; source hash {mem.source_hash[:16]}…"  # type: ignore[arg-type,index]
    )
    print(f"  query latency over {len(targets):,} entity mentions:")
    _report("disk, cold", _latencies(disk, targets))
    for i in range(repeat):
        _report(f"disk, warm #{i + 1}", _latencies(disk, targets))
    _report("memory", _latencies(mem, targets))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: a temporary dir")
    parser.add_argument("--repeat", type=int, default=1, help="warm passes over the disk store")
    args = parser.parse_args(argv)
    data_dir = resolve_data_dir(args.data_dir)

    questions = json.loads((data_dir / "biokalma" / "simple_question_graph.json").read_text())
    bio_targets = [(e["qid"], e["name"]) for _q, entities in questions for e in entities]
    names = (data_dir / "codex_s" / "entity2name.txt").read_text(encoding="utf-8").splitlines()
    codex_targets = [(q, n) for q, _, n in (line.partition("\t") for line in names if line)]
    print(f"data: {data_dir}  ({len(questions):,} BioKaLMA questions)")

    with tempfile.TemporaryDirectory(prefix="citegraph-kg-bench-") as tmp:
        cache = args.cache_dir or Path(tmp)
        bench(
            "BioKaLMA",
            lambda **kw: load_biokalma_kg(data_dir, **kw),
            bio_targets,
            cache / "biokalma",
            args.repeat,
        )
        bench(
            "CoDEx-S (train+valid+test)",
            lambda **kw: load_codex_kg(data_dir, **kw),
            codex_targets,
            cache / "codex",
            args.repeat,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
