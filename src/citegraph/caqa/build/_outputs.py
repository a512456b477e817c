"""What a build's records become: the train / dev / test files, Table 4 and the build metrics.

Everything here reads the question records of ``samples.jsonl`` alone (no KG, no model), so a
build split over machines (``--shard``) and merged (``citegraph runs merge``) is split by
question over all its questions and writes the same files as one unsharded build. The files list
questions in natural id order (``sqwd-codex-s:2`` before ``sqwd-codex-s:10``), each question's
samples in category order, whatever order the questions finished in.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple

from citegraph.caqa._samples_io import sample_line
from citegraph.caqa._types import CaqaSample, Complexity, Label
from citegraph.caqa.build._splits import (
    SPLITS,
    SampleFacts,
    render_split_report,
    render_statistics,
    split_of_groups,
    split_report,
    statistics,
)
from citegraph.caqa.build._table4 import render_table4_comparison
from citegraph.io import AtomicLines, atomic_write, json_text
from citegraph.runs import FAILED, Record, in_id_order

#: Counted by kind: the entity in a reason is kept in the question's record only.
_ENTITY_IN_REASON = re.compile(r"\b(answer|replacement) (?!entit)\S+")


class _Facts(NamedTuple):
    """What the split and Table 4 need of one sample (the sample itself stays on disk)."""

    id: str
    group: str
    label: Label
    complexity: Complexity | None


def samples_by_split(
    records: Sequence[Record], fractions: tuple[float, float, float], seed: int
) -> dict[str, list[SampleFacts]]:
    """The samples of the finished questions by split (each question's group goes to one), as
    the facts the metrics and Table 4 count: :func:`write_build_files` streams the samples."""
    facts = [
        _Facts(sample.id, sample.group, sample.label, sample.complexity)
        for sample in _built(records)
    ]
    split_of = split_of_groups([f.group or f.id for f in facts], fractions, seed)
    out: dict[str, list[SampleFacts]] = {s: [] for s in SPLITS}
    for fact in facts:
        out[split_of[fact.group or fact.id]].append(fact)
    return out


def _built(records: Sequence[Record]) -> Iterator[CaqaSample]:
    """The samples of the finished questions, questions in id order (one pass)."""
    for r in in_id_order(records):
        if r.get("status") == "ok":
            for sample in r.get("samples", []):
                yield CaqaSample.model_validate(sample)


def build_metrics(
    records: Sequence[Record],
    by_split: Mapping[str, Sequence[SampleFacts]],
    fractions: tuple[float, float, float],
) -> dict[str, Any]:
    """The build's metrics from its question records: what was built, skipped, failed and why,
    Table 4, and the split by question asked for and achieved (``splits``). One pass over the
    records."""
    status: Counter[Any] = Counter()
    unavailable: Counter[str] = Counter()
    skipped: Counter[Any] = Counter()
    failed: list[dict[str, Any]] = []
    extensions: Counter[Any] = Counter()
    drawn: Counter[Any] = Counter()
    for r in in_id_order(records):
        status[r.get("status")] += 1
        for category, reason in (r.get("unavailable") or {}).items():
            kind = _ENTITY_IN_REASON.sub(r"\1 <entity>", reason)
            unavailable[f"{category}: {kind}"] += 1
        if r.get("status") == "ok":
            extensions[r.get("extension")] += 1
            drawn[r.get("extension_drawn")] += 1
        elif r.get("status") == "skipped":
            skipped[r["reason"]] += 1
        elif r.get("status") == FAILED:
            failed.append({"id": r["id"], "error": r.get("error")})
    return {
        "n_samples": sum(len(part) for part in by_split.values()),
        "records": {
            "ok": status.get("ok", 0),
            "skipped": status.get("skipped", 0),
            "failed": status.get(FAILED, 0),
        },
        "skipped": dict(skipped),
        "failed": failed,
        "extensions": dict(extensions),
        "extensions_drawn": dict(drawn),
        "unavailable": dict(unavailable.most_common()),
        "statistics": statistics(by_split),
        "splits": split_report(by_split, fractions),
    }


def write_build_files(
    path: Path,
    records: Sequence[Record],
    by_split: Mapping[str, Sequence[SampleFacts]],
    *,
    source: str = "",
    fractions: tuple[float, float, float] | None = None,
) -> None:
    """``train.jsonl``, ``dev.jsonl``, ``test.jsonl`` (the samples of ``records``, streamed to
    the split ``by_split`` gives their group), ``stats.md`` and ``stats.json``.

    ``stats.md`` holds the build's Table 4 (samples per split, category and complexity), the
    split by question achieved beside the requested ``fractions`` (when given) and the same rows
    beside the paper's Table 4 (counts and shares); ``source`` names what was built.
    """
    split_of = {f.group or f.id: split for split, part in by_split.items() for f in part}
    with ExitStack() as stack:
        files = {
            split: stack.enter_context(AtomicLines(path / f"{split}.jsonl")) for split in by_split
        }
        for sample in _built(records):
            split = split_of[sample.group or sample.id]
            files[split].write(sample_line(sample.model_copy(update={"split": split})))
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
    atomic_write(path / "stats.json", json_text(table, indent=2) + "\n")
