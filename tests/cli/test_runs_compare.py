"""runs compare at 80 columns and in every format (issue 17, item 10)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from citegraph.cli import main


@pytest.fixture(scope="module")
def mode_runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> list[str]:
    """Two KaLMA runs on the same questions that differ only in --mode."""
    root = tmp_path_factory.mktemp("compare")
    base = ["kalma", "run", "--model", "mock", "--limit", "2", "--data-dir", str(data_dir)]
    base += ["--gold", "question-match"]
    dirs = []
    for mode in ("paper", "reference"):
        out = root / "runs" / mode
        result = CliRunner().invoke(
            main, [*base, "--mode", mode, "--out", str(out)], env={"CITEGRAPH_CACHE": str(root)}
        )
        assert result.exit_code == 0, result.output
        dirs.append(str(out))
    return dirs


def _compare(*args: str) -> str:
    result = CliRunner().invoke(main, ["runs", "compare", *args], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output


def test_table_at_80_columns_shows_mode_without_truncation(mode_runs: list[str]) -> None:
    from citegraph.cli._runs import _comparison, _print_comparison

    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=False)
    _print_comparison(_comparison([Path(d) for d in mode_runs], "micro"), console, "auto")
    text = buffer.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    mode_row = next(line for line in text.splitlines() if line.startswith("│ mode "))
    assert "paper" in mode_row and "reference" in mode_row
    for name in ("correctness", "precision", "recall", "na_recall"):
        assert name in text
    # settings both runs share are not shown
    assert "temperature" not in text and "split" not in text
    # the same through the command (CliRunner's output is 80 columns wide)
    output = _compare(*mode_runs)
    assert "…" not in output and "reference" in output
    assert f"reference = {mode_runs[1]}" in output


def test_forced_runs_as_rows_folds_instead_of_ellipsis(mode_runs: list[str]) -> None:
    output = _compare(*mode_runs, "--layout", "runs-as-rows")
    assert "…" not in output
    assert max(len(line) for line in output.splitlines()) <= 80


def test_json_keeps_the_old_rows_and_adds_settings(mode_runs: list[str]) -> None:
    rows = json.loads(_compare(*mode_runs, "--json"))
    assert rows == json.loads(_compare(*mode_runs, "--format", "json"))
    assert [r["settings"] for r in rows] == [{"mode": "paper"}, {"mode": "reference"}]
    assert [r["setting"] for r in rows] == ["specific mock/mock"] * 2
    spec = json.loads((Path(mode_runs[1]) / "metrics.json").read_text())
    assert rows[1]["recall"] == spec["recall"]["micro"]
    assert rows[0]["run"] == mode_runs[0] and rows[0]["task"] == "kalma.run"


def test_csv_and_markdown(mode_runs: list[str]) -> None:
    table = list(csv.DictReader(io.StringIO(_compare(*mode_runs, "--format", "csv"))))
    assert [r["mode"] for r in table] == ["paper", "reference"]
    assert [r["run"] for r in table] == mode_runs
    assert set(table[0]) >= {"task", "correctness", "f1", "na_precision"}
    markdown = _compare(*mode_runs, "--format", "markdown", "--kind", "macro")
    lines = markdown.splitlines()
    assert lines[0].startswith("kalma.run: macro metrics")
    assert lines[2].startswith("| run | task | mode | alignment |") and lines[3].startswith("|---|")
    assert lines[5].startswith(f"| {mode_runs[1]} | kalma.run | reference |")


def test_json_flag_conflicts_with_another_format(mode_runs: list[str]) -> None:
    result = CliRunner().invoke(main, ["runs", "compare", *mode_runs, "--json", "--format", "csv"])
    assert result.exit_code == 2 and "--json is --format json" in result.output


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own-kg"


@pytest.fixture(scope="module")
def answers_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[str]]:
    """Two kalma score runs of the README's own-KG example with the same options that differ
    only in their answers file (one answer's birthplace changed), and each file's SHA-256."""
    root = tmp_path_factory.mktemp("answers")
    first = EXAMPLE / "answers.jsonl"
    second = root / "answers-b.jsonl"
    second.write_text(first.read_text(encoding="utf-8").replace("Lyon", "Paris"), "utf-8")
    dirs, digests = [], []
    for answers in (first, second):
        out = root / answers.stem
        args = ["kalma", "score", str(answers), "--kg", str(EXAMPLE / "people.ttl")]
        args += ["--gold", str(EXAMPLE / "gold.jsonl"), "--out", str(out)]
        result = CliRunner().invoke(main, args, env={"CITEGRAPH_CACHE": str(root / "cache")})
        assert result.exit_code == 0, result.output
        dirs.append(str(out))
        digests.append(hashlib.sha256(answers.read_bytes()).hexdigest())
    return dirs, digests


@pytest.mark.needs("spacy")  # the example's answers are retrieved by NER
def test_runs_differing_only_in_their_answers_file_show_it(
    answers_runs: tuple[list[str], list[str]],
) -> None:
    # Issue 36 (8): the answers file is a setting, shown by the first 12 hex digits of its
    # SHA-256 (run.json data); the config, gold and KG are the same and are not shown.
    dirs, digests = answers_runs
    short = [d[:12] for d in digests]
    assert short[0] != short[1]
    rows = json.loads(_compare(*dirs, "--format", "json"))
    assert [r["settings"] for r in rows] == [{"answers (sha256)": s} for s in short]
    table = list(csv.DictReader(io.StringIO(_compare(*dirs, "--format", "csv"))))
    assert [r["answers (sha256)"] for r in table] == short
    text = _compare(*dirs)
    assert "answers (sha256)" in text and all(s in text for s in short)
    assert "the same in every run" not in text
