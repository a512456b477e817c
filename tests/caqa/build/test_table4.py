"""``stats.md``: the build's Table 4 beside the paper's (CAQA, arXiv 2401.14640v1, Table 4)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from citegraph.caqa import CATEGORIES, CaqaBuildConfig, build_caqa, load_caqa_split
from citegraph.caqa.build._table4 import (
    PAPER_TABLE4,
    TABLE4_COMPLEXITY_ORDER,
    render_table4_comparison,
)


def _row(markdown: str, name: str) -> list[str]:
    """The cells of the comparison row named ``name`` (the first cell)."""
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == name and len(cells) == 10:
            return cells[1:]
    raise AssertionError(f"no comparison row {name!r}")


def test_paper_table4_is_transcribed_consistently() -> None:
    """Table 4: "CAQA statistics across different attribution categories and different
    attribution complexity levels" -- Train 137,211 + Test 23,963 = Total 161,174, and each
    column's categories (and complexity levels) add up to its sample count."""
    for row in PAPER_TABLE4["total"]:
        assert PAPER_TABLE4["train"][row] + PAPER_TABLE4["test"][row] == PAPER_TABLE4["total"][row]
    for column in PAPER_TABLE4.values():
        assert sum(column[c] for c in CATEGORIES) == column["samples"]
        assert sum(column[c] for c in TABLE4_COMPLEXITY_ORDER) == column["samples"]
    assert PAPER_TABLE4["total"]["supportive"] == 46_157  # Table 4, Sup., Total
    assert PAPER_TABLE4["test"]["union"] == 886  # Table 4, U., Test


def test_comparison_rows_on_a_hand_made_table() -> None:
    table = {
        split: {
            "samples": n,
            "questions": 0,
            "categories": {"supportive": n, "insufficient": 0, "contradictory": 0, "irrelevant": 0},
            "complexity": {"single": n, "union": 0, "intersection": 0, "concatenation": 0},
        }
        for split, n in (("train", 3), ("dev", 0), ("test", 1), ("total", 4))
    }
    md = render_table4_comparison(table, source="a test")
    assert "citegraph: a test." in md
    # ours: 4 of 4 supportive = 100.0%; paper: 46,157 / 161,174 = 28.64% -> 28.6%
    assert _row(md, "supportive (Sup.)") == [
        "3", "0", "1", "4", "100.0%", "39,489", "6,668", "46,157", "28.6%"
    ]  # fmt: skip
    # paper: 6,233 / 161,174 = 3.87% -> 3.9%
    assert _row(md, "union (U.)") == ["0", "0", "0", "0", "0.0%", "5,347", "886", "6,233", "3.9%"]
    empty = {s: {**table[s], "samples": 0} for s in table}
    assert _row(render_table4_comparison(empty), "samples")[4] == "-"


def test_build_writes_stats_md_beside_the_paper(tmp_path: Path, data_dir: Path) -> None:
    """A 4-query CoDEx-S build: its stats.md has the paper's Table 4 cells and the build's own
    counts, which are also recounted here from the split files."""
    out = tmp_path / "tiny"
    config = CaqaBuildConfig(questions="sample", kg="codex-s", sample=4, union_partners="same-type")
    build_caqa(out, config, data_dir=data_dir)
    md = (out / "stats.md").read_text(encoding="utf-8")
    assert "questions sample (4 queries) over codex-s, seed 0" in md
    samples = {split: load_caqa_split(out / f"{split}.jsonl") for split in ("train", "dev", "test")}
    # checked by hand on this build: 4 questions x 4 categories; train has a two-hop path and a
    # tree (intersection, 8 samples) and a union (4), dev a concatenation (4), test nothing
    by_split = {s: Counter(x.complexity for x in part) for s, part in samples.items()}
    assert by_split == {
        "train": Counter(intersection=8, union=4),
        "dev": Counter(concatenation=4),
        "test": Counter(),
    }
    assert _row(md, "samples") == [
        "12", "4", "0", "16", "100.0%", "137,211", "23,963", "161,174", "100.0%"
    ]  # fmt: skip
    assert _row(md, "contradictory (Con.)") == [
        "3", "1", "0", "4", "25.0%", "36,620", "6,423", "43,043", "26.7%"
    ]  # fmt: skip
    assert _row(md, "intersection (I.)") == [
        "8", "0", "0", "8", "50.0%", "31,286", "5,579", "36,865", "22.9%"
    ]  # fmt: skip
    assert _row(md, "single (S.)")[:5] == ["0", "0", "0", "0", "0.0%"]
    # every row agrees with a recount of the split files
    for row in (*CATEGORIES, *TABLE4_COMPLEXITY_ORDER):
        counts = [
            sum(x.label == row or x.complexity == row for x in samples[split])
            for split in ("train", "dev", "test")
        ]
        name = next(n for n in _names(md) if n.startswith(f"{row} ("))
        assert _row(md, name)[:4] == [*map(str, counts), str(sum(counts))]


def _names(markdown: str) -> list[str]:
    return [line.split("|")[1].strip() for line in markdown.splitlines() if line.startswith("| ")]
