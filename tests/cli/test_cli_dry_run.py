"""``--dry-run`` (calls and prompt tokens, no model call, nothing written; a cost with
``--price-in/--price-out``) and the token line of a run's summary."""

from __future__ import annotations

import json
from pathlib import Path

from _cli_helpers import _cache, invoke  # noqa: F401 - the fixture is used by every test


def test_dry_run_of_an_api_model_run_calls_nothing_and_writes_nothing(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "run"
    # no OPENAI_API_KEY (the fixture removes it): building the real model would be refused
    result = invoke(
        "kalma", "run", "--model", "openai/gpt-4o-mini", "--limit", "3",
        "--data-dir", data_dir, "--out", out, "--dry-run",
        "--price-in", "0.15", "--price-out", "0.6",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert not out.exists()
    assert "dry run of kalma.run: 3 items" in result.output
    assert "answerer: 3 calls" in result.output
    assert "estimate: characters / 4" in result.output
    # 3 calls of at most 512 completion tokens at $0.6/M: $0.0009216
    assert "at most $0.0009 completion (at $0.6/M" in result.output


def test_dry_run_reaches_no_server_and_counts_the_judge(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    result = invoke(
        "kalma", "run", "--model", "vllm/some-model", "--base-url", "http://127.0.0.1:9",
        "--text-quality", "vllm/judge", "--limit", "2",
        "--data-dir", data_dir, "--out", out, "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # a real call to port 9 would fail (exit 3)
    assert not out.exists()
    assert "answerer: 2 calls" in result.output
    assert "judge: 8 calls" in result.output  # four G-Eval criteria per answer
    assert "estimated cost" not in result.output  # no prices given


def test_conner_generate_dry_run(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "gen"
    result = invoke(
        "conner", "generate", "--model", "openai/gpt-4o-mini", "--data-dir", data_dir,
        "--limit", "3", "--out", out, "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "model: 3 calls" in result.output and not out.exists()


def test_conner_select_dry_run_counts_every_candidates_generation(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "sel"
    result = invoke(
        "conner", "select", "--model", "openai/gpt-4o-mini", "--weights", "1,1,0,1",
        "--candidates", "3", "--data-dir", data_dir, "--limit", "2", "--out", out, "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "model: 6 calls" in result.output  # 3 candidates x 2 items, no scoring chat call
    assert not out.exists()


def test_run_summary_shows_tokens_and_cached_replies_apart(tmp_path: Path, data_dir: Path) -> None:
    base = ["kalma", "run", "--model", "mock", "--limit", "2", "--data-dir", data_dir]
    first = invoke(*base, "--out", tmp_path / "a")
    assert first.exit_code == 0, first.output
    tokens = json.loads((tmp_path / "a" / "metrics.json").read_text())["tokens"]["answerer"]
    assert tokens["calls"] == 2 and tokens["cached_calls"] == 0
    assert tokens["completion_tokens"] == 10  # the mock's answer, 5 words, twice
    assert "tokens: answerer: 2 calls" in first.output
    again = invoke(*base, "--out", tmp_path / "b")  # the same requests: from the cache
    cached = json.loads((tmp_path / "b" / "metrics.json").read_text())["tokens"]["answerer"]
    assert cached["calls"] == 0 and cached["cached_calls"] == 2
    assert cached["cached_completion_tokens"] == 10
    assert cached["cached_prompt_tokens"] == tokens["prompt_tokens"]
    assert "(2 cached:" in again.output
