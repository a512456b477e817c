"""The run page and the HTML report show a run's token totals (one row per model role)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.viewer.conftest import cli


def test_the_report_shows_the_tokens_table(tmp_path: Path, data_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    cli("kalma", "run", "--model", "mock", "--limit", "2", "--data-dir", data_dir, "--out", run)
    cli("report", run, "--out", tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Tokens</h3>" in html
    table = html[html.index("Tokens</h3>") :]
    assert "prompt tokens" in table and "cached calls" in table
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", table)
    # answerer: 2 calls, the mock's 5-word answer twice: 10 completion tokens, nothing cached
    row = cells[cells.index("answerer") : cells.index("answerer") + 7]
    assert row[1] == "2" and row[3] == "10" and row[4:] == ["0", "0", "0"]
