"""``caqa judge`` with a local chat model records each reply's ``generation`` as ``kalma run``
does: ``batch_size`` says how many prompts shared its ``generate`` call, and a reply served from
the response cache says ``cached`` and has no ``batch_size`` (it shared no call)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import build_byte_lm
from citegraph.caqa import CaqaJudgeConfig, CaqaSample, judge_caqa, write_samples
from citegraph.runs import Runtime


@pytest.fixture()
def byte_lm(tmp_path: Path) -> Path:
    """A random byte-level Llama (its tokenizer takes the label grammar), with the context
    of a judge prompt (about 1,900 bytes here)."""
    return build_byte_lm(tmp_path / "byte_lm", max_positions=4096)


@pytest.fixture()
def split(tmp_path: Path) -> Path:
    labels = ["supportive", "insufficient", "contradictory", "irrelevant"] * 2
    samples = [
        CaqaSample(
            id=f"s{i}",
            question=f"where is paris {i}?",
            answer="paris is the capital of france.",
            citation=f"paris city {i}.",
            label=label,  # type: ignore[arg-type]
            source="hand",
        )
        for i, label in enumerate(labels)
    ]
    path = tmp_path / "test.jsonl"
    write_samples(path, samples)
    return path


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_local_judge_records_batch_size_and_cached_replies_none(
    byte_lm: Path, split: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    # a local model's replies are constrained to one label word (judge_replies auto)
    config = CaqaJudgeConfig(data=str(split), evaluator=f"hf/{byte_lm}", bootstrap=0)
    runtime = Runtime(concurrency=4, device="cpu")  # the response cache is on (the default)
    judge_caqa(tmp_path / "first", config, runtime=runtime)
    first = _records(tmp_path / "first")
    assert len(first) == 8 and all(r["predicted"] is not None for r in first)
    gens = [r["generation"] for r in first]
    sizes = [g["batch_size"] for g in gens]
    assert max(sizes) > 1  # samples in flight shared a call
    assert sum(1 for s in sizes if s > 1) >= max(sizes)
    assert not any(g["cached"] for g in gens)

    # the same command again, elsewhere: every reply comes from the response cache
    judge_caqa(tmp_path / "again", config, runtime=runtime)
    again = _records(tmp_path / "again")
    assert [r["raw"] for r in again] == [r["raw"] for r in first]
    assert all(r["generation"]["cached"] for r in again)
    assert not any("batch_size" in r["generation"] for r in again)
    fresh_usage = [g["usage"] for g in gens]
    assert [r["generation"]["usage"] for r in again] == fresh_usage
