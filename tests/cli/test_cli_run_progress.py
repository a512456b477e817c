"""What the CLI says about how much of a run its metrics cover (``runs report``, the end of a
``--limit`` run) and why a KaLMA metric left answers out (issue 17, items 4, 5 and 9)."""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from citegraph.cli import _kalma as kalma_cli
from citegraph.cli import main

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def _score(tmp_path: Path, data_dir: Path, *more: str) -> list[str]:
    args = ["kalma", "score", str(DEMO / "answers.jsonl"), "--gold", str(DEMO / "gold.jsonl")]
    return [*args, "--data-dir", str(data_dir), "--out", str(tmp_path / "run"), *more]


def test_a_limited_rerun_keeps_metrics_over_every_answer(tmp_path: Path, data_dir: Path) -> None:
    """Item 4: a 4-answer run re-run with --limit 1 still has metrics over 4 answers."""
    assert CliRunner().invoke(main, _score(tmp_path, data_dir)).exit_code == 0
    again = CliRunner().invoke(main, _score(tmp_path, data_dir, "--limit", "1"))
    assert again.exit_code == 0, again.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["n_answers"] == 4
    assert metrics["progress"]["partial"] is False
    assert "partial run" not in again.output


def test_runs_report_on_an_unfinished_run_says_partial_and_torn(
    tmp_path: Path, data_dir: Path
) -> None:
    """Item 5: a --limit 3 run killed while it wrote its third answer (2 of the 3 done, a torn
    line): the report says both."""
    first = CliRunner().invoke(main, _score(tmp_path, data_dir, "--limit", "3"))
    assert first.exit_code == 0, first.output
    assert "finished (limit 3 of 4): the metrics cover those 3 items" in first.output
    samples = tmp_path / "run" / "samples.jsonl"
    kept = samples.read_text().splitlines()[:2]
    samples.write_text("".join(line + "\n" for line in kept) + '{"id": "specific-2", "answ')
    report = CliRunner().invoke(main, ["runs", "report", str(tmp_path / "run")])
    assert report.exit_code == 0, report.output
    assert (
        "partial run: 2/3 items done (limit 3 of 4); the metrics cover those 2 only"
        in report.output
    )
    assert "1 torn last line of samples.jsonl dropped" in report.output
    assert "finished (limit" not in report.output
    progress = json.loads((tmp_path / "run" / "metrics.json").read_text())["progress"]
    assert progress == {
        "n_done": 2,
        "n_failed": 0,
        "n_asked": 3,
        "n_total": 4,
        "limit": 3,
        "shard": None,
        "partial": True,
        "torn_lines_dropped": 1,
    }


def test_a_limited_kalma_run_is_finished_within_its_limit(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36, defect 7: a mock ``kalma run --limit 3`` over the real BioKaLMA questions did
    every item it asked for: the end of the run and ``runs report`` say finished (limit 3 of
    N), not partial."""
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    args = ["kalma", "run", "--model", "mock", "--limit", "3", "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    n_total = json.loads((out / "run.json").read_text())["runtime"]["n_total"]
    assert n_total > 3
    finished = f"finished (limit 3 of {n_total}): the metrics cover those 3 items"
    assert finished in result.output and "partial run" not in result.output
    report = CliRunner().invoke(main, ["runs", "report", str(out)])
    assert report.exit_code == 0, report.output
    assert finished in report.output and "partial run" not in report.output
    assert "warning" not in report.output
    progress = json.loads((out / "metrics.json").read_text())["progress"]
    assert (progress["n_asked"], progress["limit"], progress["partial"]) == (3, 3, False)


def test_runs_report_of_an_old_run_says_the_total_is_unknown(
    tmp_path: Path, data_dir: Path
) -> None:
    assert CliRunner().invoke(main, _score(tmp_path, data_dir, "--limit", "2")).exit_code == 0
    run_file = tmp_path / "run" / "run.json"
    info = json.loads(run_file.read_text())
    info["runtime"].pop("n_total")
    run_file.write_text(json.dumps(info))
    report = CliRunner().invoke(main, ["runs", "report", str(tmp_path / "run")])
    assert report.exit_code == 0, report.output
    assert "2 items done of an unknown total" in report.output


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """print_metrics' console, wide enough that no cell wraps."""
    out = io.StringIO()
    monkeypatch.setattr(kalma_cli, "console", Console(file=out, width=400))
    return out


def _row(output: str, label: str) -> list[str]:
    line = next(x for x in output.splitlines() if x.startswith(f"│ {label} "))
    return [cell.strip() for cell in line.strip("│").split("│")]


def test_every_unmeasured_count_carries_its_reason(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch, wide: io.StringIO
) -> None:
    """Item 9: mock answers cite nothing, and one question-match gold set is empty: F1 was
    'unmeasured' with 'answers counted 3/3' and no reason, recall 2/3 with no reason."""
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    args = ["kalma", "run", "--model", "mock", "--limit", "3", "--gold", "question-match"]
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    kalma_cli.print_metrics(metrics)
    output = wide.getvalue()
    recall = _row(output, "Recall")
    assert recall[3] == "2/3"
    assert recall[4] == "1: empty gold minimum knowledge set (left out of the macro average)"
    f1 = _row(output, "F1")
    assert f1[1:4] == ["unmeasured", "unmeasured", "P 0/3, R 2/3"]
    assert f1[4] == "needs both P and R; precision: no sample with a non-zero denominator"
    for label in ("Correctness", "Precision", "Alignment", "[NA] precision", "[NA] recall"):
        row = _row(output, label)
        n_counted = int(row[3].split("/")[0])
        n_reasons = sum(int(part.split(":")[0]) for part in row[4].split("; ") if part)
        assert n_counted + n_reasons == 3, row
