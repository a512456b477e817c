"""Train / dev / test splits with no question shared across splits, and Table 4 statistics.

Every sample built from one KGQA question carries that question's ``group`` (a hash of its
original logical query and answers, so PathQuestion's paraphrases of one path share a group too).
A group goes to one split, chosen by a seeded hash of the group: the assignment does not depend
on the order or number of the other questions, so extending a build never moves a question.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from citegraph.caqa._types import CATEGORIES, COMPLEXITIES, CaqaSample
from citegraph.errors import ConfigError

SPLITS = ("train", "dev", "test")


def parse_fractions(text: str) -> tuple[float, float, float]:
    """``"0.8,0.1,0.1"`` -> fractions of train, dev, test (must sum to 1).

    Raises:
        ConfigError: not three non-negative numbers summing to 1.
    """
    try:
        parts = tuple(float(p) for p in text.split(","))
    except ValueError as exc:
        raise ConfigError(f"--splits {text!r}: expected three numbers like 0.8,0.1,0.1") from exc
    if len(parts) != 3 or any(p < 0 for p in parts) or abs(sum(parts) - 1.0) > 1e-6:
        raise ConfigError(f"--splits {text!r}: expected three non-negative fractions summing to 1")
    return parts[0], parts[1], parts[2]


def split_of(group: str, fractions: tuple[float, float, float], seed: int) -> str:
    """The split of a group: a seeded SHA-256 of the group mapped to [0, 1) and cut at the
    cumulative fractions."""
    digest = hashlib.sha256(f"{seed}\x00{group}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    train, dev, _ = fractions
    if u < train:
        return "train"
    return "dev" if u < train + dev else "test"


def assign_splits(
    samples: Iterable[CaqaSample], fractions: tuple[float, float, float], seed: int
) -> dict[str, list[CaqaSample]]:
    """Samples by split (each sample gets its ``split`` field set)."""
    out: dict[str, list[CaqaSample]] = {s: [] for s in SPLITS}
    for sample in samples:
        split = split_of(sample.group or sample.id, fractions, seed)
        out[split].append(sample.model_copy(update={"split": split}))
    return out


def statistics(by_split: Mapping[str, Sequence[CaqaSample]]) -> dict[str, Any]:
    """Table 4: samples per split by category and by complexity, plus questions per split."""
    table: dict[str, Any] = {}
    for split in (*SPLITS, "total"):
        samples = (
            [s for part in by_split.values() for s in part]
            if split == "total"
            else by_split.get(split, [])
        )
        categories = Counter(s.label for s in samples)
        complexity = Counter(s.complexity for s in samples)
        table[split] = {
            "samples": len(samples),
            "questions": len({s.group for s in samples}),
            "categories": {c: categories.get(c, 0) for c in CATEGORIES},
            "complexity": {c: complexity.get(c, 0) for c in COMPLEXITIES},
        }
    return table


def render_statistics(table: dict[str, Any]) -> str:
    """Table 4 as Markdown."""
    columns = [*SPLITS, "total"]
    lines = ["| | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines.append("| samples | " + " | ".join(str(table[c]["samples"]) for c in columns) + " |")
    lines.append("| questions | " + " | ".join(str(table[c]["questions"]) for c in columns) + " |")
    for key, names in (("categories", CATEGORIES), ("complexity", COMPLEXITIES)):
        for name in names:
            cells = " | ".join(str(table[c][key][name]) for c in columns)
            lines.append(f"| {name} | {cells} |")
    return "\n".join(lines) + "\n"
