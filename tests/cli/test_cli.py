"""The citegraph command: demo, kalma score, data where; errors are one clear line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from citegraph.cli import main


def test_demo_prints_table_and_writes_files(tmp_path: Path, data_dir: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path), "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    assert "Correctness" in result.output and "90.9" in result.output
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert set(metrics) >= {
        "correctness",
        "precision",
        "recall",
        "f1",
        "alignment",
        "na_precision",
        "na_recall",
        "n_answers",
        "n_citations",
        "unmeasured",
        "config",
    }


def test_score_bad_answers_file_is_one_clear_error(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "specific-0"}\n')
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(answers), "--out", str(tmp_path / "o"), "--data-dir", str(data_dir)],
    )
    assert result.exit_code == 2
    assert "a.jsonl:1, field 'answer': missing field" in result.output
    assert "Traceback" not in result.output


def test_unknown_nli_spec_is_reported(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "specific-0", "answer": "x"}\n')
    result = CliRunner().invoke(
        main,
        [
            "kalma",
            "score",
            str(answers),
            "--out",
            str(tmp_path / "o"),
            "--nli",
            "bogus",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "bogus" in result.output
