"""What a build's records become: the train / dev / test files, Table 4 and the build metrics.

Everything here reads the question records of ``samples.jsonl`` alone (no KG, no model), so a
build split over machines (``--shard``) and merged (``citegraph runs merge``) is split by
question over all its questions and writes the same files as one unsharded build. The files list
questions in natural id order (``sqwd-codex-s:2`` before ``sqwd-codex-s:10``), each question's
samples in category order, whatever order the questions finished in.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citegraph.caqa._samples_io import write_samples
from citegraph.caqa._types import CaqaSample
from citegraph.caqa.build._splits import (
    assign_splits,
    render_split_report,
    render_statistics,
    split_report,
    statistics,
)
from citegraph.caqa.build._table4 import render_table4_comparison
from citegraph.io import atomic_write
from citegraph.runs import FAILED, Record, in_id_order

#: Counted by kind: the entity in a reason is kept in the question's record only.
_ENTITY_IN_REASON = re.compile(r"\b(answer|replacement) (?!entit)\S+")


def samples_by_split(
    records: Sequence[Record], fractions: tuple[float, float, float], seed: int
) -> dict[str, list[CaqaSample]]:
    """The samples of the finished questions, by split (each question's group goes to one)."""
    samples = [
        CaqaSample.model_validate(s)
        for r in in_id_order(records)
        if r.get("status") == "ok"
        for s in r.get("samples", [])
    ]
    return assign_splits(samples, fractions, seed)


def build_metrics(
    records: Sequence[Record],
    by_split: dict[str, list[CaqaSample]],
    fractions: tuple[float, float, float],
) -> dict[str, Any]:
    """The build's metrics from its question records: what was built, skipped, failed and why,
    Table 4, and the split by question asked for and achieved (``splits``)."""
    records = in_id_order(records)
    status = Counter(r.get("status") for r in records)
    unavailable: Counter[str] = Counter()
    for r in records:
        for category, reason in (r.get("unavailable") or {}).items():
            kind = _ENTITY_IN_REASON.sub(r"\1 <entity>", reason)
            unavailable[f"{category}: {kind}"] += 1
    ok = [r for r in records if r.get("status") == "ok"]
    return {
        "n_samples": sum(len(part) for part in by_split.values()),
        "records": {
            "ok": status.get("ok", 0),
            "skipped": status.get("skipped", 0),
            "failed": status.get(FAILED, 0),
        },
        "skipped": dict(Counter(r["reason"] for r in records if r.get("status") == "skipped")),
        "failed": [
            {"id": r["id"], "error": r.get("error")} for r in records if r.get("status") == FAILED
        ],
        "extensions": dict(Counter(r.get("extension") for r in ok)),
        "extensions_drawn": dict(Counter(r.get("extension_drawn") for r in ok)),
        "unavailable": dict(unavailable.most_common()),
        "statistics": statistics(by_split),
        "splits": split_report(by_split, fractions),
    }


def write_build_files(
    path: Path,
    by_split: dict[str, list[CaqaSample]],
    *,
    source: str = "",
    fractions: tuple[float, float, float] | None = None,
) -> None:
    """``train.jsonl``, ``dev.jsonl``, ``test.jsonl``, ``stats.md`` and ``stats.json``.

    ``stats.md`` holds the build's Table 4 (samples per split, category and complexity), the
    split by question achieved beside the requested ``fractions`` (when given) and the same rows
    beside the paper's Table 4 (counts and shares); ``source`` names what was built.
    """
    for split, part in by_split.items():
        write_samples(path / f"{split}.jsonl", part)
    table = statistics(by_split)
    markdown = (
        "# CAQA build statistics (Table 4)\n\n"
        + render_statistics(table)
        + "\n"
        + ("" if fractions is None else render_split_report(split_report(by_split, fractions)))
        + ("" if fractions is None else "\n\n")
        + render_table4_comparison(table, source=source)
    )
    atomic_write(path / "stats.md", markdown)
    atomic_write(path / "stats.json", json.dumps(table, indent=2) + "\n")
