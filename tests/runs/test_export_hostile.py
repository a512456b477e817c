"""Hostile text in an exported run (issue 27, item 11 and the exports of item 1): a CSV text
cell that a spreadsheet would read as a formula gets a leading single quote (OWASP), numbers
stay numbers, Parquet keeps text as it is, and a lone surrogate crashes neither."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from test_export import ExportConfig, ExportTask  # tests/runs, on sys.path as pytest collects it

from citegraph.io import formula_safe
from citegraph.runs import export_run, run_sync, run_task_async

#: note (a text column) -> its CSV cell.
FORMULAS = {
    '=HYPERLINK("http://evil","x")': '\'=HYPERLINK("http://evil","x")',
    "+1+2": "'+1+2",
    "-2+3": "'-2+3",
    "@SUM(A1)": "'@SUM(A1)",
    "\tx": "'\tx",
    "\rx": "'\rx",
    "plain -x": "plain -x",
    "bad \ud800 text": "bad \ufffd text",
}


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    """A run of one ordinary item plus records whose text cells start with formula prefixes,
    hold a lone surrogate (JSON's escape), and a negative float in a number column."""
    out = tmp_path / "run"
    run_sync(run_task_async(ExportTask(ExportConfig(n=1), set()), out))
    with (out / "samples.jsonl").open("a", encoding="utf-8") as fh:
        for i, note in enumerate(FORMULAS):
            record = {"id": f"h-{i}", "question": note, "value": -0.5, "note": note}
            fh.write(json.dumps(record) + "\n")  # ASCII: a lone surrogate as its escape
    return out


def test_formula_safe_prefixes_only_formula_starts() -> None:
    for text, cell in FORMULAS.items():
        assert formula_safe(text) == cell
    assert formula_safe("") == ""


def test_csv_cells_are_not_formulas_and_numbers_stay_numbers(
    hostile_run: Path, tmp_path: Path
) -> None:
    written = export_run(hostile_run, tmp_path / "out", "csv")
    with written["samples"].open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    hostile = {row["id"]: row for row in rows if row["id"].startswith("h-")}
    assert len(hostile) == len(FORMULAS)
    for i, cell in enumerate(FORMULAS.values()):
        row = hostile[f"h-{i}"]
        assert row["note"] == cell and row["question"] == cell and row["title"] == cell
        assert row["value"] == "-0.5"  # a float column: the number, not '-0.5
    for row in rows:  # no text cell starts a formula
        assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for v in row.values())


def test_parquet_and_jsonl_keep_text_and_survive_a_lone_surrogate(
    hostile_run: Path, tmp_path: Path
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    written = export_run(hostile_run, tmp_path / "pq", "parquet")
    rows = {r["id"]: r for r in pq.read_table(written["samples"]).to_pylist()}
    for i, note in enumerate(FORMULAS):
        expected = note.replace("\ud800", "\ufffd")  # Parquet has no formulas: text as it is
        assert rows[f"h-{i}"]["note"] == expected and rows[f"h-{i}"]["value"] == -0.5
    lines = export_run(hostile_run, tmp_path / "jl", "jsonl")["samples"].read_text("utf-8")
    notes = [json.loads(line).get("note") for line in lines.splitlines()]
    assert "bad \ud800 text" in notes  # JSONL is lossless: the surrogate as its JSON escape
