"""``--citations`` on the command line: ``ask`` constrains by default, ``kalma run`` on request,
and both say how the citations were made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main


@pytest.mark.needs("llguidance")
def test_kalma_run_constrained_prints_and_records_how(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    args = [
        "kalma",
        "run",
        "--model",
        "mock",
        "--limit",
        "2",
        "--no-cache",
        "--data-dir",
        str(data_dir),
    ]
    result = CliRunner().invoke(main, [*args, "--citations", "constrained", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Citation validity: 2 brackets, 0 (0.0%) malformed" in text
    assert "Citations constrained (kalma-citations-v2, logits)" in text
    records = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    # the mock's "This is a mock answer." may not end without a citation: it gets [NA]
    assert [r["answer"] for r in records] == ["This is a mock answer [NA]."] * 2
    assert all(r["constraint"]["grammar"] == "kalma-citations-v2" for r in records)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["setup"]["citations"] == "constrained"
    assert metrics["constraint"]["n_answers"] == 2
    assert json.loads((out / "run.json").read_text())["config"]["citations"] == "constrained"
    # free: the answer as the model wrote it, and nothing about a constraint
    free = tmp_path / "free"
    result = CliRunner().invoke(main, [*args, "--out", str(free)])
    assert result.exit_code == 0, result.output
    assert "Citations constrained" not in result.output
    [first, _] = [json.loads(x) for x in (free / "samples.jsonl").read_text().splitlines()]
    assert first["answer"] == "This is a mock answer." and "constraint" not in first
    assert "constraint" not in json.loads((free / "metrics.json").read_text())


@pytest.mark.needs("llguidance", "spacy")
def test_ask_constrains_by_default(data_dir: Path) -> None:
    question = ["ask", "Who was Stephen Crane?", "--model", "mock", "--data-dir", str(data_dir)]
    result = CliRunner().invoke(main, question)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "citations constrained (kalma-citations-v2, logits)" in text
    assert "1 [NA]" in text
    free = CliRunner().invoke(main, [*question, "--citations", "free"])
    assert free.exit_code == 0, free.output
    assert "citations free." in " ".join(free.output.split())
