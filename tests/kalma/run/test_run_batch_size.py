"""``kalma run`` with a local model records how many prompts shared each ``generate`` call
(``generation.batch_size``); a served model's records carry no such field, and neither do
answers from the response cache (``cached``: they shared no call)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import build_tiny_causal_lm
from citegraph.io import SQLiteCache
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import MockChat
from citegraph.models.chat import CachedChatModel, HFChat
from citegraph.runs import Runtime


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _generations(run: Path) -> list[dict]:
    lines = (run / "samples.jsonl").read_text().splitlines()
    return [json.loads(line)["generation"] for line in lines]


def test_local_answers_record_their_batch_size(data_dir: Path, tmp_path: Path) -> None:
    chat = HFChat.load(build_tiny_causal_lm(tmp_path / "lm"), device="cpu")
    chat._model.config.max_position_embeddings = 2048  # KaLMA prompts are ~700 tokens here
    config = KalmaRunConfig(model="hf/tiny_lm", temperature=0, max_tokens=4)
    runtime = Runtime(limit=4, concurrency=4)
    run_kalma(tmp_path / "run", config, runtime=runtime, data_dir=data_dir, model=chat)
    sizes = [g["batch_size"] for g in _generations(tmp_path / "run")]
    assert len(sizes) == 4 and max(sizes) > 1  # questions in flight shared a call
    assert sum(1 for s in sizes if s > 1) >= max(sizes)


def test_served_answers_record_no_batch_size(data_dir: Path, tmp_path: Path) -> None:
    config = KalmaRunConfig(model="mock")
    run_kalma(
        tmp_path / "run", config, runtime=Runtime(limit=2), data_dir=data_dir, model=MockChat("x")
    )
    assert all("batch_size" not in g for g in _generations(tmp_path / "run"))


def test_cached_answers_record_no_batch_size(data_dir: Path, tmp_path: Path) -> None:
    chat = HFChat.load(build_tiny_causal_lm(tmp_path / "lm"), device="cpu")
    chat._model.config.max_position_embeddings = 2048  # KaLMA prompts are ~700 tokens here
    model = CachedChatModel(chat, SQLiteCache(tmp_path / "chat.sqlite"))
    config = KalmaRunConfig(model="hf/tiny_lm", temperature=0, max_tokens=4)
    runtime = Runtime(limit=4, concurrency=4)
    for out in ("first", "again"):
        run_kalma(tmp_path / out, config, runtime=runtime, data_dir=data_dir, model=model)
    first, again = _generations(tmp_path / "first"), _generations(tmp_path / "again")
    assert not any(g["cached"] for g in first) and max(g["batch_size"] for g in first) > 1
    assert all(g["cached"] and "batch_size" not in g for g in again)
    assert [g["usage"] for g in again] == [g["usage"] for g in first]
