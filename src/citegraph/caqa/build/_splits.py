"""Train / dev / test splits with no question shared across splits, and Table 4 statistics.

Every sample built from one KGQA question carries that question's ``group`` (a hash of its
original logical query and answers, so PathQuestion's paraphrases of one path share a group too).
A group goes to one split. How many groups each split gets is the fractions' largest-remainder
rounding of the number of groups (:func:`split_counts`: 20 questions at 0.8/0.1/0.1 are 16/2/2,
not what cutting each question's hash at 0.8 and 0.9 happens to give). Which groups they are is
set by a seeded hash of each group: groups in hash order fill train, then dev, then test. So
the assignment does not depend on the order the questions were read or finished in; extending a
build moves at most the few questions at the boundaries between splits.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol

from citegraph.caqa._types import CATEGORIES, COMPLEXITIES, CaqaSample, Complexity, Label
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


def split_counts(n: int, fractions: Sequence[float]) -> dict[str, int]:
    """How many of ``n`` questions go to train, dev and test: largest-remainder rounding.

    Each split first gets the floor of its quota ``fraction * n`` (computed exactly from the
    fractions as written, so ``0.1 * 20`` is 2, not 2.0000000000000004); the questions left over
    go one each to the splits with the largest remainders. Ties are broken in split order (train
    before dev before test), so the result is deterministic: 10 questions at 0.25/0.25/0.5
    (quotas 2.5, 2.5, 5) are 3/2/5.

    Example:
        >>> split_counts(20, (0.8, 0.1, 0.1))
        {'train': 16, 'dev': 2, 'test': 2}
    """
    exact = [Fraction(str(f)) for f in fractions]
    quotas = [f / sum(exact) * n for f in exact]  # parse_fractions allows a sum 1e-6 off 1
    counts = [int(q) for q in quotas]  # floor: quotas are non-negative
    by_remainder = sorted(range(len(SPLITS)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in by_remainder[: n - sum(counts)]:
        counts[i] += 1
    return dict(zip(SPLITS, counts, strict=True))


def group_rank(group: str, seed: int) -> float:
    """A group's place in the split order: a seeded SHA-256 of the group mapped to [0, 1)."""
    digest = hashlib.sha256(f"{seed}\x00{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class SampleFacts(Protocol):
    """What the split and Table 4 read of a sample (a :class:`CaqaSample` has them)."""

    @property
    def id(self) -> str: ...

    @property
    def group(self) -> str: ...

    @property
    def label(self) -> Label: ...

    @property
    def complexity(self) -> Complexity | None: ...


def assign_splits(
    samples: Iterable[CaqaSample], fractions: tuple[float, float, float], seed: int
) -> dict[str, list[CaqaSample]]:
    """Samples by split (each sample gets its ``split`` field set), all samples of a group in
    one split: the groups in :func:`group_rank` order fill train, dev and test to
    :func:`split_counts` of the number of groups (:func:`split_of_groups`)."""
    samples = list(samples)
    split_of_group = split_of_groups([s.group or s.id for s in samples], fractions, seed)
    out: dict[str, list[CaqaSample]] = {s: [] for s in SPLITS}
    for sample in samples:
        split = split_of_group[sample.group or sample.id]
        out[split].append(sample.model_copy(update={"split": split}))
    return out


def split_of_groups(
    groups: Iterable[str], fractions: tuple[float, float, float], seed: int
) -> dict[str, str]:
    """The split of each group: the distinct groups in :func:`group_rank` order fill train, dev
    and test to :func:`split_counts` of their number."""
    ranked = list(dict.fromkeys(groups))
    ranked.sort(key=lambda g: (group_rank(g, seed), g))
    counts = split_counts(len(ranked), fractions)
    split_of_group: dict[str, str] = {}
    start = 0
    for split in SPLITS:
        for group in ranked[start : start + counts[split]]:
            split_of_group[group] = split
        start += counts[split]
    return split_of_group


def split_report(
    by_split: Mapping[str, Sequence[SampleFacts]], fractions: Sequence[float]
) -> dict[str, Any]:
    """The split asked for and the split achieved, in questions (groups): ``requested`` and
    ``achieved`` fractions and ``questions`` per split, ``rounding`` how counts were made."""
    questions = {s: len({x.group or x.id for x in by_split.get(s, [])}) for s in SPLITS}
    total = sum(questions.values())
    return {
        "requested": dict(zip(SPLITS, (float(f) for f in fractions), strict=True)),
        "achieved": {s: round(q / total, 4) if total else None for s, q in questions.items()},
        "questions": questions,
        "rounding": "largest remainder, ties to the earlier split",
    }


def render_split_report(report: Mapping[str, Any]) -> str:
    """One line: ``Split by question: train 16 (0.80), dev 2 (0.10), test 2 (0.10) of 20;
    requested 0.8/0.1/0.1 (largest remainder, ties to the earlier split).``"""
    questions, achieved = report["questions"], report["achieved"]
    parts = [
        f"{s} {questions[s]}" + ("" if achieved[s] is None else f" ({achieved[s]:.2f})")
        for s in SPLITS
    ]
    requested = "/".join(f"{report['requested'][s]:g}" for s in SPLITS)
    return (
        f"Split by question: {', '.join(parts)} of {sum(questions.values())}; "
        f"requested {requested} ({report['rounding']})."
    )


def statistics(by_split: Mapping[str, Sequence[SampleFacts]]) -> dict[str, Any]:
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
