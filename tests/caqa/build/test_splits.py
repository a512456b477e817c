"""Train / dev / test by question: largest-remainder counts (issue 17, item 12)."""

from __future__ import annotations

import random

import pytest

from citegraph.caqa import CaqaSample
from citegraph.caqa.build import assign_splits, render_split_report, split_counts, split_report


def _samples(n_questions: int, per_question: int = 3) -> list[CaqaSample]:
    return [
        CaqaSample(
            id=f"q{q}:{k}",
            question=f"question {q}?",
            answer="An answer.",
            citation="A citation.",
            label="supportive",
            source="test",
            group=f"g{q}",
        )
        for q in range(n_questions)
        for k in range(per_question)
    ]


@pytest.mark.parametrize(
    ("n", "fractions", "expected"),
    [
        # hand-checked: quotas 16, 2, 2 exactly (0.1 * 20 is not 2.0000000000000004 here)
        (20, (0.8, 0.1, 0.1), (16, 2, 2)),
        # quotas 8, 1, 1
        (10, (0.8, 0.1, 0.1), (8, 1, 1)),
        # quotas 5.6, 0.7, 0.7: floors 5/0/0, two left; dev and test tie at .7 -> both get one
        (7, (0.8, 0.1, 0.1), (5, 1, 1)),
        # quotas 2.5, 2.5, 5: floors 2/2/5, one left; train and dev tie at .5 -> train (earlier)
        (10, (0.25, 0.25, 0.5), (3, 2, 5)),
        # quotas 1/3 each: floors 0/0/0, one left, three-way tie -> train
        (1, (1 / 3, 1 / 3, 1 / 3), (1, 0, 0)),
        # quotas 2/3 each: floors 0/0/0, two left, three-way tie -> train, dev
        (2, (1 / 3, 1 / 3, 1 / 3), (1, 1, 0)),
        (0, (0.8, 0.1, 0.1), (0, 0, 0)),
        (3, (1.0, 0.0, 0.0), (3, 0, 0)),
    ],
)
def test_split_counts_largest_remainder(
    n: int, fractions: tuple[float, float, float], expected: tuple[int, int, int]
) -> None:
    assert tuple(split_counts(n, fractions).values()) == expected


def test_split_counts_always_sum_to_n() -> None:
    rng = random.Random(0)
    for _ in range(500):
        cuts = sorted(rng.randint(0, 1000) for _ in range(2))
        fractions = (cuts[0] / 1000, (cuts[1] - cuts[0]) / 1000, (1000 - cuts[1]) / 1000)
        n = rng.randint(0, 300)
        counts = split_counts(n, fractions)
        assert sum(counts.values()) == n
        for split, f in zip(("train", "dev", "test"), fractions, strict=True):
            assert abs(counts[split] - f * n) < 1  # within one of its quota


def test_twenty_questions_split_16_2_2_by_question_and_reported() -> None:
    by_split = assign_splits(_samples(20), (0.8, 0.1, 0.1), seed=0)
    groups = {split: {s.group for s in part} for split, part in by_split.items()}
    assert {split: len(g) for split, g in groups.items()} == {"train": 16, "dev": 2, "test": 2}
    assert not (groups["train"] & groups["dev"] or groups["train"] & groups["test"])
    assert all(s.split == split for split, part in by_split.items() for s in part)
    assert sum(len(part) for part in by_split.values()) == 60  # every sample kept
    report = split_report(by_split, (0.8, 0.1, 0.1))
    assert report["questions"] == {"train": 16, "dev": 2, "test": 2}
    assert report["achieved"] == {"train": 0.8, "dev": 0.1, "test": 0.1}
    assert render_split_report(report) == (
        "Split by question: train 16 (0.80), dev 2 (0.10), test 2 (0.10) of 20; "
        "requested 0.8/0.1/0.1 (largest remainder, ties to the earlier split)."
    )


def test_assignment_ignores_input_order_and_depends_on_the_seed() -> None:
    samples = _samples(20)
    shuffled = samples[:]
    random.Random(1).shuffle(shuffled)

    def test_groups(items: list[CaqaSample], seed: int) -> set[str | None]:
        return {s.group for s in assign_splits(items, (0.8, 0.1, 0.1), seed)["test"]}

    assert test_groups(samples, 0) == test_groups(shuffled, 0)
    assert any(test_groups(samples, seed) != test_groups(samples, 0) for seed in range(1, 5))
