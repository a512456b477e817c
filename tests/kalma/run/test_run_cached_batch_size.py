"""``kalma run`` answered from the response cache: the records say ``cached`` and carry no
``batch_size`` (a cached reply shared no ``generate`` call), while the first run's records
carry the size of the calls that produced them."""

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
from citegraph.models.chat import CachedChatModel, HFChat
from citegraph.runs import Runtime


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _generations(run: Path) -> list[dict]:
    lines = (run / "samples.jsonl").read_text().splitlines()
    return [json.loads(line)["generation"] for line in lines]


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
