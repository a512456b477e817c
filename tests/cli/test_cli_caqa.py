"""``citegraph caqa build`` and ``caqa judge`` with the engine's options: ``--shard i/N`` runs
merged with :func:`citegraph.runs.merge_runs` equal the unsharded runs; ``--batch-size`` and
``--concurrency`` change no number."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from citegraph.cli import main
from citegraph.runs import finalize, merge_runs, task_type


def _cli(*args: str | Path) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_caqa_build_and_judge_shards(tmp_path: Path, data_dir: Path) -> None:
    build = ("caqa", "build", "--questions", "simplequestions-wd", "--limit", "16",
             "--splits", "0.3,0.2,0.5", "--data-dir", data_dir)  # fmt: skip
    _cli(*build, "--out", tmp_path / "b")
    for i in range(2):
        _cli(*build, "--shard", f"{i}/2", "--concurrency", "2", "--out", tmp_path / f"b{i}")
    finalize(
        task_type("caqa.build"), merge_runs([tmp_path / "b1", tmp_path / "b0"], tmp_path / "bm")
    )
    for name in ("train.jsonl", "dev.jsonl", "test.jsonl", "stats.md"):
        assert (tmp_path / "bm" / name).read_text() == (tmp_path / "b" / name).read_text()

    test = tmp_path / "b" / "test.jsonl"
    judge = ("caqa", "judge", test, "--evaluator", "nli/lexical", "--bootstrap", "50")
    out = _cli(*judge, "--out", tmp_path / "j")
    assert "micro-F1" in out
    for i in range(3):
        _cli(*judge, "--shard", f"{i}/3", "--batch-size", "3", "--out", tmp_path / f"j{i}")
    merged = merge_runs([tmp_path / f"j{i}" for i in (2, 0, 1)], tmp_path / "jm")
    metrics = finalize(task_type("caqa.judge"), merged)
    assert metrics == json.loads((tmp_path / "j" / "metrics.json").read_text())
    assert (tmp_path / "jm" / "report.md").read_text() == (tmp_path / "j" / "report.md").read_text()
    info = json.loads((tmp_path / "j0" / "run.json").read_text())
    assert info["task"] == "caqa.judge" and info["runtime"]["shard"] == "0/3"


def test_caqa_commands_take_the_engine_options() -> None:
    for command in ("build", "judge"):
        help_text = _cli("caqa", command, "--help")
        for option in ("--limit", "--shard", "--concurrency", "--batch-size", "--no-cache"):
            assert option in help_text, (command, option)


def test_runs_export_of_caqa_build_and_judge(tmp_path: Path, data_dir: Path) -> None:
    """``runs export`` of a real caqa build (it failed: its presenter's per-sample table was
    named ``samples``) and of the judge run on its test split, in CSV."""
    _cli("caqa", "build", "--questions", "simplequestions-wd", "--limit", "6",
         "--splits", "0.2,0.2,0.6", "--data-dir", data_dir, "--out", tmp_path / "b")  # fmt: skip
    printed = _cli("runs", "export", tmp_path / "b", "--format", "csv")
    for table in ("samples", "caqa_samples", "facts"):
        assert f"Wrote {tmp_path / 'b' / 'export' / table}.csv" in printed
    _cli("caqa", "judge", tmp_path / "b" / "test.jsonl", "--evaluator", "nli/lexical",
         "--bootstrap", "0", "--out", tmp_path / "j")  # fmt: skip
    printed = _cli("runs", "export", tmp_path / "j", "--format", "csv")
    header = (tmp_path / "j" / "export" / "samples.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("run_id,task,model,mode,nli_model,lm_model,dtype,seed,id,")
    assert "score_correct" in header and "gold_label" in header
