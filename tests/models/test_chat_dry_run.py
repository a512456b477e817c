"""The dry-run chat model: a local model's prompt tokens by its own tokenizer (weights not
loaded), an API model's by the named estimate; no call, an empty reply."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import build_tiny_causal_lm
from citegraph.models import ChatRequest, UsageMeter, chat_model, dry_running, metering
from citegraph.models.chat import DRY_RUN_TOKENS, DryRunChat

HELLO = ChatRequest.of([{"role": "user", "content": "hello"}])


def test_a_local_model_is_counted_by_its_own_tokenizer(tmp_path: Path) -> None:
    folder = build_tiny_causal_lm(tmp_path / "tiny_lm")
    meter = UsageMeter()
    with dry_running(), metering(meter):
        model = chat_model(f"hf/{folder}")
        assert isinstance(model, DryRunChat)
        reply = asyncio.run(model.generate(HELLO))
    assert reply.text == "" and reply.finish_reason == "dry-run"
    # "[user] hello\n[assistant]" -> [ user ] hello [ assistant ]: 7 tokens
    assert reply.usage.prompt_tokens == 7
    assert meter.counted[f"hf/{folder}"].startswith("the tokenizer of hf/")


def test_an_api_model_is_estimated_and_never_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the real model would be refused
    with dry_running():
        model = chat_model("openai/gpt-4o-mini")
    reply = asyncio.run(model.generate(ChatRequest.of([{"role": "user", "content": "abcdefghi"}])))
    assert reply.usage.prompt_tokens == 3  # 9 characters / 4, rounded up
    assert model.counted == DRY_RUN_TOKENS


def test_an_unloadable_tokenizer_falls_back_to_the_estimate_and_says_why(tmp_path: Path) -> None:
    with dry_running():
        model = chat_model(f"hf/{tmp_path / 'missing'}")
    assert asyncio.run(model.generate(HELLO)).usage.prompt_tokens == 2  # 'hello': 5 chars
    assert model.counted.startswith(DRY_RUN_TOKENS + " (the model's tokenizer did not load")
