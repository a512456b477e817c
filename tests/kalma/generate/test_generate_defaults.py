"""An answer asked for without a sampling config uses the model's own defaults (as the CLI does)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from citegraph.io import SQLiteCache
from citegraph.kalma import generate_answer_async
from citegraph.models import GenerateConfig, MockChat
from citegraph.models.chat import CachedChatModel


def _local_like() -> MockChat:
    model = MockChat(["Paris [NA]."])
    model.default_config = GenerateConfig(max_tokens=128, repetition_penalty=1.3)  # type: ignore[attr-defined]
    return model


def test_no_config_means_the_models_defaults() -> None:
    model = _local_like()
    asyncio.run(generate_answer_async("Where?", [], model))
    # before, config=None became GenerateConfig(): 512 tokens and no penalty
    assert (model.requests[0].config.max_tokens, model.requests[0].config.repetition_penalty) == (
        128,
        1.3,
    )


def test_a_given_config_wins_and_a_plain_model_gets_generate_configs_defaults() -> None:
    model = _local_like()
    asyncio.run(generate_answer_async("Where?", [], model, config=GenerateConfig(max_tokens=9)))
    assert model.requests[0].config.max_tokens == 9
    plain = MockChat(["x"])
    asyncio.run(generate_answer_async("Where?", [], plain))
    assert plain.requests[0].config == GenerateConfig()


def test_a_cached_model_passes_its_models_defaults_on(tmp_path: Path) -> None:
    inner = _local_like()
    cached = CachedChatModel(inner, SQLiteCache(tmp_path / "c.sqlite", namespace="chat"))
    asyncio.run(generate_answer_async("Where?", [], cached))
    assert inner.requests[0].config.max_tokens == 128
