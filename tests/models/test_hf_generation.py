"""The generation hooks of HFChat: repetition penalty on the reply only, progress after every
token, torch threads for the call, and the embedded model's defaults reaching the request.

Runs on the tiny Llama of ``_tiny_models`` (logits 2.0 for "paris", 0 for the rest).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import build_tiny_causal_lm  # noqa: E402
from citegraph.models import GenerationProgress  # noqa: E402
from citegraph.models.chat import LOCAL_GENERATE_DEFAULTS, default_generate_config  # noqa: E402
from citegraph.models.chat._cache import chat_cache_key  # noqa: E402
from citegraph.models.chat._generation import (  # noqa: E402
    GenerationCancelled,
    ProgressReporter,
    ReplyRepetitionPenalty,
    RowLogits,
    RowStops,
    torch_threads,
)
from citegraph.models.chat._hf import HFChat  # noqa: E402
from citegraph.models.chat._local import LOCAL_STOP  # noqa: E402
from citegraph.models.chat._types import ChatRequest, GenerateConfig  # noqa: E402

HELLO = ({"role": "user", "content": "hello"},)


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> HFChat:
    torch.set_num_threads(1)
    return HFChat.load(build_tiny_causal_lm(tmp_path_factory.mktemp("lm") / "tiny_lm"))


def test_penalty_divides_positive_and_multiplies_negative_logits_of_reply_tokens_only() -> None:
    ids = torch.tensor([[0, 1, 2, 3]])  # prompt: tokens 0 and 1; reply: 2 and 3
    scores = torch.tensor([[4.0, 4.0, 4.0, -4.0, 4.0]])
    out = ReplyRepetitionPenalty(prompt_len=2, penalty=2.0)(ids, scores)
    assert out.tolist() == [[4.0, 4.0, 2.0, -8.0, 4.0]]
    assert ReplyRepetitionPenalty(prompt_len=4, penalty=2.0)(ids, scores).equal(scores)


def test_progress_reporter_counts_new_tokens_and_never_stops() -> None:
    seen: list[GenerationProgress] = []
    reporter = ProgressReporter(seen.append, prompt_len=3, max_tokens=10, torch=torch)
    for length in (4, 5, 6):
        assert not reporter(torch.zeros((1, length), dtype=torch.long), None).any()
    assert [p.tokens for p in seen] == [1, 2, 3]
    assert {(p.max_tokens, p.prompt_tokens) for p in seen} == {(10, 3)}
    assert seen[0].decode_tokens_per_s is None and seen[0].prefill_s == seen[-1].prefill_s


def test_torch_threads_sets_and_restores() -> None:
    before = torch.get_num_threads()
    with torch_threads(torch, 1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_progress_is_called_after_every_generated_token(chat: HFChat) -> None:
    seen: list[GenerationProgress] = []
    chat.progress = seen.append
    try:
        request = ChatRequest.of(HELLO, GenerateConfig(temperature=0, max_tokens=5))
        out = asyncio.run(chat.generate(request))
    finally:
        chat.progress = None
    assert (
        [p.tokens for p in seen]
        == [1, 2, 3, 4, 5]
        == list(range(1, (out.usage.completion_tokens or 0) + 1))
    )
    assert {p.max_tokens for p in seen} == {5}
    assert seen[0].prompt_tokens == out.usage.prompt_tokens


def test_penalty_stop_and_threads_reach_model_generate(
    chat: HFChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    real = chat._model.generate

    def spy(**kwargs: Any) -> Any:
        calls.append({**kwargs, "threads": torch.get_num_threads()})
        return real(**kwargs)

    monkeypatch.setattr(chat._model, "generate", spy)
    monkeypatch.setattr(chat, "threads", 1)
    config = GenerateConfig(temperature=0, max_tokens=4, repetition_penalty=1.3, stop=("x",))
    asyncio.run(chat.generate(ChatRequest.of(HELLO, config)))
    (call,) = calls
    (rows,) = call["logits_processor"]  # the row's penalty, applied to its row of the scores
    assert isinstance(rows, RowLogits)
    ((penalty,),) = [row.processors for row in rows._rows]
    assert isinstance(penalty, ReplyRepetitionPenalty) and penalty._penalty == 1.3
    # one criterion ends each row at EOS, its stop strings, its max_tokens or its cancel
    (stop,) = call["stopping_criteria"]
    assert isinstance(stop, RowStops) and [row.stop for row in stop._rows] == [("x",)]
    assert call["max_new_tokens"] == 4
    assert call["threads"] == 1
    calls.clear()
    asyncio.run(chat.generate(ChatRequest.of(HELLO, GenerateConfig(temperature=0, max_tokens=2))))
    assert "logits_processor" not in calls[0]


def test_local_defaults_and_overrides() -> None:
    local = default_generate_config("local")
    assert local.max_tokens == LOCAL_GENERATE_DEFAULTS["max_tokens"] == 128
    assert local.repetition_penalty == 1.3 and local.stop == LOCAL_STOP
    assert (
        default_generate_config("local", {"max_tokens": 40, "temperature": None}).max_tokens == 40
    )
    other = default_generate_config("mock", {"temperature": 0.0})
    assert (other.max_tokens, other.repetition_penalty, other.stop) == (512, None, ())


def test_cache_key_holds_the_penalty_only_when_set() -> None:
    # test_chat_cache pins the key of a request without the penalty to its old canonical form
    plain = ChatRequest.of(HELLO, GenerateConfig())
    penalised = ChatRequest.of(HELLO, GenerateConfig(repetition_penalty=1.3))
    assert chat_cache_key("e", "m", penalised) != chat_cache_key("e", "m", plain)


def test_cancelling_generate_stops_the_model_within_a_token(chat: HFChat) -> None:
    """The call is cancelled while token 3 is reported; the worker thread then stops at the
    next token (4) instead of running on to max_tokens (the tiny model never emits </s>)."""
    seen: list[int] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        request = ChatRequest.of(HELLO, GenerateConfig(temperature=0, max_tokens=50))
        call = asyncio.ensure_future(chat.generate(request))

        def report(p: GenerationProgress) -> None:
            seen.append(p.tokens)
            if p.tokens == 3:
                loop.call_soon_threadsafe(call.cancel)
                while not call.done():  # the cancel flag is set before the call is done
                    time.sleep(0.001)

        chat.progress = report
        with pytest.raises(asyncio.CancelledError):
            await call

    try:
        asyncio.run(scenario())  # returns once the worker thread has ended
    finally:
        chat.progress = None
    assert seen == [1, 2, 3, 4]
    after = asyncio.run(chat.generate(ChatRequest.of(HELLO, GenerateConfig(max_tokens=2))))
    assert after.usage.completion_tokens == 2  # the model is free for the next request


def test_a_cancelled_flag_before_the_lock_skips_generation(chat: HFChat) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(GenerationCancelled):
        chat.generate_sync(ChatRequest.of(HELLO, GenerateConfig(max_tokens=2)), cancel=cancel)
