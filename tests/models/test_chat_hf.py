"""HFChat on a tiny Llama built by the test (see ``_tiny_models.build_tiny_causal_lm``).

The tiny model's logits are 2.0 for "paris" and 0 for the other 21 tokens whatever the input, so
greedy decoding gives "paris paris ...", sampling at temperature 1 picks "paris" with p = 0.26
and top_p = 0.2 keeps only "paris". Its chat template writes ``[role] content`` lines and ends
with ``[assistant]``; the WordLevel tokenizer splits words and punctuation runs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import build_tiny_causal_lm  # noqa: E402
from citegraph.errors import ConfigError, MissingDependency, ModelError, PromptTooLong  # noqa: E402
from citegraph.models.chat._hf import HFChat, cut_at_stop, format_plain  # noqa: E402
from citegraph.models.chat._types import (  # noqa: E402
    ChatMessage,
    ChatModel,
    ChatRequest,
    GenerateConfig,
)

HELLO = ({"role": "user", "content": "hello"},)
#: "[user] hello\n[assistant]" -> [ user ] hello [ assistant ]
HELLO_PROMPT_TOKENS = 7


def request(messages: Sequence[dict[str, str]] = HELLO, **config: Any) -> ChatRequest:
    return ChatRequest.of(messages, GenerateConfig(**config))


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "tiny_lm")


@pytest.fixture(scope="module")
def chat(tiny_lm_dir: Path) -> HFChat:
    return HFChat.load(tiny_lm_dir)


def test_load_names_model_by_folder_and_endpoint_by_path(chat: HFChat, tiny_lm_dir: Path) -> None:
    assert isinstance(chat, ChatModel)
    assert chat.name == "hf/tiny_lm"
    assert chat.endpoint == str(tiny_lm_dir.resolve())


def test_load_takes_a_custom_name(tiny_lm_dir: Path) -> None:
    named = HFChat.load(tiny_lm_dir, name="local/tiny", endpoint="pkg==1/tiny.gguf")
    assert (named.name, named.endpoint) == ("local/tiny", "pkg==1/tiny.gguf")
    assert named.generate_sync(request(temperature=0, max_tokens=1)).model == "tiny"


def test_chat_template_builds_the_prompt(chat: HFChat) -> None:
    messages = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="user", content="hello"),
    ]
    assert chat.uses_chat_template
    assert chat.format_prompt(messages) == "[system] be brief\n[user] hello\n[assistant]"


def test_plain_prompt_without_chat_template(tmp_path: Path) -> None:
    plain = HFChat.load(build_tiny_causal_lm(tmp_path / "plain_lm", chat_template=None))
    messages = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="user", content="hello"),
    ]
    assert not plain.uses_chat_template
    assert plain.format_prompt(messages) == "System: be brief\nUser: hello\nAssistant:"
    out = plain.generate_sync(
        request([m.model_dump() for m in messages], temperature=0, max_tokens=2)
    )
    # system : be brief user : hello assistant :
    assert out.usage.prompt_tokens == 9
    assert out.text == "paris paris"
    assert out.raw == {"prompt_format": "plain", "batch_size": 1}


def test_format_plain_keeps_assistant_turns() -> None:
    messages = [
        ChatMessage(role="user", content="Hi"),
        ChatMessage(role="assistant", content="Hello."),
        ChatMessage(role="user", content="Where is Paris?"),
    ]
    expected = "User: Hi\nAssistant: Hello.\nUser: Where is Paris?\nAssistant:"
    assert format_plain(messages) == expected


def test_greedy_repeats_the_favourite_until_max_tokens(chat: HFChat) -> None:
    first = chat.generate_sync(request(temperature=0, max_tokens=4))
    second = chat.generate_sync(request(temperature=0, max_tokens=4, seed=99))
    assert first.text == second.text == "paris paris paris paris"
    assert first.finish_reason == "length"
    assert first.usage.prompt_tokens == HELLO_PROMPT_TOKENS
    assert first.usage.completion_tokens == 4
    assert first.model == "tiny_lm"
    assert first.latency_s is not None and first.latency_s >= 0
    assert first.raw == {"prompt_format": "chat_template", "batch_size": 1}


def test_prompt_longer_than_the_context_is_refused(chat: HFChat) -> None:
    # The tiny model's context is 256 positions: 7 prompt tokens + 249 new ones fit, 250 do not.
    assert chat.generate_sync(request(temperature=0, max_tokens=249)).usage.completion_tokens
    with pytest.raises(
        PromptTooLong,
        match="7 tokens; with max_tokens 250 it exceeds the model's context of 256 tokens",
    ):
        chat.generate_sync(request(temperature=0, max_tokens=250))
    long = ({"role": "user", "content": "hello " * 300},)
    with pytest.raises(PromptTooLong, match="the prompt has 306 tokens"):
        chat.generate_sync(request(long, temperature=0, max_tokens=1))
    assert issubclass(PromptTooLong, ModelError)


def test_same_seed_same_sample_and_other_seed_other_sample(chat: HFChat) -> None:
    a = chat.generate_sync(request(temperature=1.0, max_tokens=12, seed=7))
    b = chat.generate_sync(request(temperature=1.0, max_tokens=12, seed=7))
    c = chat.generate_sync(request(temperature=1.0, max_tokens=12, seed=8))
    assert a.text == b.text
    assert a.text != c.text
    # p("paris") = 0.26 per token: twelve in a row (the greedy text) has p = 1e-7
    assert a.text != " ".join(["paris"] * 12)


def test_top_p_below_the_favourites_mass_keeps_only_it(chat: HFChat) -> None:
    out = chat.generate_sync(request(temperature=1.0, top_p=0.2, max_tokens=3, seed=3))
    assert out.text == "paris paris paris"


def test_seeded_generation_leaves_the_global_rng_alone(chat: HFChat) -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    chat.generate_sync(request(temperature=1.0, max_tokens=3, seed=5))
    assert torch.equal(torch.rand(3), expected)


def test_stop_string_ends_generation_and_is_cut(chat: HFChat) -> None:
    out = chat.generate_sync(request(temperature=0, max_tokens=10, stop=(" paris",)))
    assert out.text == "paris"  # "paris paris" contains " paris" after the second token
    assert out.finish_reason == "stop"
    assert out.usage.completion_tokens == 2
    inside = chat.generate_sync(request(temperature=0, max_tokens=10, stop=("ris",)))
    assert (inside.text, inside.usage.completion_tokens) == ("pa", 1)


def test_cut_at_stop_uses_the_earliest_stop() -> None:
    assert cut_at_stop("a.b;c", [";", "."]) == ("a", True)
    assert cut_at_stop("abc", ["x", ""]) == ("abc", False)
    assert cut_at_stop("abc", []) == ("abc", False)


def test_concurrent_generate_calls_all_complete(chat: HFChat) -> None:
    async def run() -> list[str]:
        calls = [chat.generate(request(temperature=0, max_tokens=n)) for n in range(1, 6)]
        return [g.text for g in await asyncio.gather(*calls)]

    texts = asyncio.run(run())
    assert texts == [" ".join(["paris"] * n) for n in range(1, 6)]


def test_closed_model_refuses_to_generate(tiny_lm_dir: Path) -> None:
    closing = HFChat.load(tiny_lm_dir)
    asyncio.run(closing.aclose())
    with pytest.raises(ModelError, match="closed"):
        asyncio.run(closing.generate(request(temperature=0, max_tokens=1)))


def test_missing_local_path_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        HFChat.load(tmp_path / "absent")


def test_unknown_dtype_is_a_config_error(tiny_lm_dir: Path) -> None:
    with pytest.raises(ConfigError, match="dtype"):
        HFChat.load(tiny_lm_dir, dtype="float33")


def test_dtype_by_name(tiny_lm_dir: Path) -> None:
    half = HFChat.load(tiny_lm_dir, dtype="bfloat16")
    out = half.generate_sync(request(temperature=0, max_tokens=2))
    assert out.text == "paris paris"


def test_missing_transformers_names_the_local_extra(
    tiny_lm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import now raises ImportError
    with pytest.raises(MissingDependency) as info:
        HFChat.load(tiny_lm_dir)
    assert info.value.extra == "local" and "citegraph[local]" in str(info.value)
