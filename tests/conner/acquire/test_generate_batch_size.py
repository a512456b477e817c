"""``conner generate`` with a local chat model records each reply's ``generation`` as
``kalma run`` does: ``batch_size`` says how many prompts shared its ``generate`` call, and a reply
served from the response cache says ``cached`` and has no ``batch_size`` (it shared no call)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import LM_FAVOURITE, build_tiny_causal_lm
from citegraph.conner import ConnerGenerateConfig, generate_run
from citegraph.runs import Runtime


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_local_knowledge_records_batch_size_and_cached_replies_none(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    lm = build_tiny_causal_lm(tmp_path / "tiny_lm")
    config = ConnerGenerateConfig(model=f"hf/{lm}", max_tokens=3)
    runtime = Runtime(limit=6, concurrency=6, device="cpu")  # the response cache is on
    generate_run(tmp_path / "first", config, data_dir=data_dir, runtime=runtime)
    first = _records(tmp_path / "first")
    assert len(first) == 6 and all(r["text"] == " ".join([LM_FAVOURITE] * 3) for r in first)
    gens = [r["generation"] for r in first]
    sizes = [g["batch_size"] for g in gens]
    assert max(sizes) > 1  # items in flight shared a call
    assert sum(1 for s in sizes if s > 1) >= max(sizes)
    assert not any(g["cached"] for g in gens)
    assert all(r["finish_reason"] == r["generation"]["finish_reason"] == "length" for r in first)

    # the same command again, elsewhere: every reply comes from the response cache
    generate_run(tmp_path / "again", config, data_dir=data_dir, runtime=runtime)
    again = _records(tmp_path / "again")
    assert [r["raw"] for r in again] == [r["raw"] for r in first]
    assert all(r["generation"]["cached"] for r in again)
    assert not any("batch_size" in r["generation"] for r in again)
    assert [r["generation"]["usage"] for r in again] == [g["usage"] for g in gens]
