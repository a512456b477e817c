"""``citegraph report``: one self-contained HTML file (nothing fetched from anywhere), model text
escaped, figures inline, bad input named."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from tests.viewer.conftest import INJECTED, cli

from citegraph.cli import main


def test_the_report_is_one_self_contained_file(runs_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    printed = cli("report", runs_root / "scored", runs_root / "judged", "--out", out)
    assert f"Wrote {out}" in printed
    html = out.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "fetches from elsewhere"
    assert "<link" not in html and "<script src" not in html
    assert "<style>" in html and "<svg" in html
    assert INJECTED not in html and "&lt;script&gt;document.title=" in html
    assert html.count('class="report-sample"') == 4 + 5  # 4 answers; the first 5 judged samples


def test_samples_per_run_can_be_chosen(runs_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    cli("report", runs_root / "judged", "--samples", "2", "--out", out)
    assert out.read_text(encoding="utf-8").count('class="report-sample"') == 2


def test_a_folder_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert f"{tmp_path.resolve()} is not a run directory" in result.output


def test_a_run_without_samples_still_reports(tmp_path: Path) -> None:
    run = tmp_path / "empty"
    run.mkdir()
    (run / "run.json").write_text('{"task": "kalma.score", "config": {}, "created": "x"}')
    out = tmp_path / "r.html"
    cli("report", run, "--out", out)
    html = out.read_text(encoding="utf-8")
    assert "0 of 0 samples" in html and "no metrics.json yet" in html


def test_the_report_says_where_each_model_ran(tmp_path: Path) -> None:
    run = tmp_path / "placed"
    run.mkdir()
    models = {
        "nli": {"name": "t5:<b>x</b>", "device": "cuda:0", "dtype": "bfloat16",
                "n_params": 770_000_000, "weight_bytes": 1_540_000_000},
    }  # fmt: skip
    info = {"task": "kalma.score", "config": {}, "created": "x", "models": models}
    (run / "run.json").write_text(json.dumps(info))
    out = tmp_path / "r.html"
    cli("report", run, "--out", out)
    html = out.read_text(encoding="utf-8")
    line = "nli: t5:&lt;b&gt;x&lt;/b&gt; on cuda:0, bfloat16, 770M parameters, 1.54 GB"
    assert f'models: <span class="kv">{line}</span>' in html  # escaped, as all run text
