"""Viewer speed on a large run: time to first byte of the run list, a run's page and one
sample's page, on a generated 10,000-sample ``kalma score`` run.

Usage::

    .venv/bin/python benchmarks/viewer_10k.py [--samples N] [--run DIR] [--repeat N]

The run is made from a real ``kalma score`` run (the demo answers scored against their gold,
made first in a temporary folder): its records are replicated with new ids until there are N,
so each record has the size and shape of a real one. A live viewer (uvicorn, in this process,
one thread) serves it. Figures:

- start-up indexing: reading the whole ``samples.jsonl`` once and making every sample-list row
  (``citegraph view`` does this in a background thread as it starts);
- cold: the first request to a viewer started without that warm-up (the request builds the
  index: what a page costs while the background indexing has not reached its run yet);
- warm: the median of ``--repeat`` later requests (what every page view after the first costs;
  ``citegraph view`` builds the index in the background at start-up).

The target is < 200 ms for the run page and the sample page (warm). Prints figures only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path

from click.testing import CliRunner

from citegraph.cli import main


def _make_run(target: Path, n: int) -> None:
    demo = resources.files("citegraph.kalma") / "demo"
    seed_run = target.parent / "seed"
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(demo / "answers.jsonl"), "--gold", str(demo / "gold.jsonl"),
         "--out", str(seed_run)],
    )  # fmt: skip
    if result.exit_code != 0:
        sys.exit(f"kalma score failed: {result.output}")
    records = [json.loads(line) for line in (seed_run / "samples.jsonl").open(encoding="utf-8")]
    target.mkdir(parents=True)
    info = json.loads((seed_run / "run.json").read_text(encoding="utf-8"))
    info["runtime"] = info.get("runtime", {}) | {"n_items": n}
    (target / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (target / "metrics.json").write_text((seed_run / "metrics.json").read_text(), "utf-8")
    with (target / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            record = records[i % len(records)] | {"id": f"specific-{i}"}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    (target / "metrics.json").touch()


def _ttfb(port: int, target: str) -> tuple[float, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.perf_counter()
    conn.request("GET", target)
    response = conn.getresponse()
    first = time.perf_counter() - start
    response.read()
    conn.close()
    return first, response.status


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--run", type=Path, help="Keep the generated run here.")
    args = parser.parse_args()

    import uvicorn

    from citegraph.viewer import Site, create_app

    with tempfile.TemporaryDirectory() as tmp:
        root = (args.run or Path(tmp) / "runs").resolve()
        run = root / "big"
        if not (run / "run.json").exists():
            _make_run(run, args.samples)
        size = (run / "samples.jsonl").stat().st_size
        print(f"run: {args.samples} samples, samples.jsonl {size / 2**20:.1f} MiB")
        start = time.perf_counter()
        Site([root]).warm()
        print(
            f"start-up indexing (citegraph view does it in the background): "
            f"{time.perf_counter() - start:.2f} s"
        )
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        config = uvicorn.Config(create_app([root], warm=False), port=port, log_level="error")
        server = uvicorn.Server(config)
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.02)
        pages = {
            "sample page": f"/sample?run=0/big&id=specific-{args.samples // 2}",
            "run page": "/run?run=0/big",
            "run page, filtered, page 3": "/run?run=0/big&tag=unmeasured&page=3",
            "run list": "/",
        }
        print(f"{'page':28s} {'cold ms':>9s} {'warm ms (median)':>17s}  status")
        for name, target in pages.items():
            cold, status = _ttfb(port, target)
            warm = statistics.median(_ttfb(port, target)[0] for _ in range(args.repeat))
            print(f"{name:28s} {cold * 1e3:9.1f} {warm * 1e3:17.1f}  {status}")
        server.should_exit = True
    print("target: run page and sample page < 200 ms (warm)")


if __name__ == "__main__":
    main_()
