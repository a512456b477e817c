"""ServerLMScorer against FakeOpenAIServer's /v1/completions (real HTTP on 127.0.0.1).

The fake server's tokens are whitespace + word runs, and every token but the first has the
log-probability -len(token)/10 (citegraph.testing._fake_scores), so the numbers below are worked
out by hand: "Paris is big" -> "Paris", " is" (-0.3), " big" (-0.4).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ClientError, ConfigError, ResponseFormatError
from citegraph.io import SQLiteCache
from citegraph.models import LMScorer, causal_lm_scorer
from citegraph.models.lm import ServerLMScorer
from citegraph.models.lm._inputs import FIRST_TOKEN
from citegraph.testing import FakeOpenAIServer, FakeReply


def scorer(server: FakeOpenAIServer, **kw: Any) -> ServerLMScorer:
    kw.setdefault("api_key_env", "CITEGRAPH_TEST_LM_KEY")
    lm = causal_lm_scorer("vllm/fake-lm", base_url=server.base_url, **kw)
    assert isinstance(lm, ServerLMScorer)
    return lm


def test_request_body_as_sent_and_name() -> None:
    with FakeOpenAIServer() as server:
        lm = scorer(server, batch_size=2)
        asyncio.run(lm.score(["Paris is big", "a b", "c"]))
        # the two batches go out concurrently: they may arrive in either order
        assert sorted(server.requests, key=lambda body: body["prompt"][0]) == [
            {
                "model": "fake-lm",
                "prompt": ["Paris is big", "a b"],
                "max_tokens": 1,
                "temperature": 0.0,
                "echo": True,
                "logprobs": 1,
                "add_special_tokens": False,
            },
            {
                "model": "fake-lm",
                "prompt": ["c"],
                "max_tokens": 1,
                "temperature": 0.0,
                "echo": True,
                "logprobs": 1,
                "add_special_tokens": False,
            },
        ]
        assert {r.path for r in server.received} == {"/v1/completions"}
        url = server.base_url
    assert lm.name == "vllm/fake-lm" and isinstance(lm, LMScorer)
    assert lm.settings == {
        "name": "vllm/fake-lm",
        "endpoint": url,
        "max_length": None,
        "prepend_bos": False,
    }


def test_openai_spec_sends_no_vllm_field() -> None:
    with FakeOpenAIServer() as server:
        lm = causal_lm_scorer("openai/fake-lm", base_url=server.base_url)
        asyncio.run(lm.score(["a b"]))
        assert "add_special_tokens" not in server.requests[0]
    assert lm.name == "openai/fake-lm"


def test_texts_first_token_unscored_and_generated_token_dropped() -> None:
    with FakeOpenAIServer() as server:
        big, one, empty = asyncio.run(
            scorer(server).score(["Paris is big", "Paris", ""], token_logprobs=True)
        )
    # " is" -0.3, " big" -0.4; the generated " x" (-1.0) is not part of the prompt
    assert big.n_tokens == 2 and big.token_logprobs == (-0.3, -0.4)
    assert big.sum_nll == pytest.approx(0.7)
    assert big.perplexity == pytest.approx(2.718281828**0.35)
    assert (one.n_tokens, one.reason, one.token_logprobs) == (0, FIRST_TOKEN, ())
    assert (empty.n_tokens, empty.reason) == (0, "empty text")


def test_continuations_start_after_the_prefix() -> None:
    pairs = [
        ("Paris is", " big"),  # tokens "Paris", " is" | " big"
        ("Wikipedia: ", "Paris"),  # "Wikipedia:" | " Paris" merges the boundary space
        ("", "Paris is"),  # no prefix: like score()
        ("Paris", ""),
        ("ab", "cd"),  # one token "abcd" across the boundary: the first token, no prediction
    ]
    with FakeOpenAIServer() as server:
        out = asyncio.run(scorer(server).score_continuations(pairs, token_logprobs=True))
        prompts = [p for body in server.requests for p in body["prompt"]]
    assert prompts == ["Paris is big", "Wikipedia: Paris", "Paris is", "abcd"]
    assert out[0].token_logprobs == (-0.4,) and out[0].sum_nll == pytest.approx(0.4)
    assert out[1].token_logprobs == (-0.6,)  # " Paris": 6 characters
    assert out[2].token_logprobs == (-0.3,)
    assert (out[3].n_tokens, out[3].reason) == (0, "empty continuation")
    assert (out[4].n_tokens, out[4].reason) == (0, FIRST_TOKEN)


def test_prefix_plus_continuation_equals_the_whole_text() -> None:
    with FakeOpenAIServer() as server:
        lm = scorer(server)
        (whole,) = asyncio.run(lm.score(["a bb ccc dddd"]))
        (head,) = asyncio.run(lm.score(["a bb"]))
        (tail,) = asyncio.run(lm.score_continuations([("a bb", " ccc dddd")]))
    assert whole.sum_nll == pytest.approx(head.sum_nll + tail.sum_nll)  # 1.4 = 0.3 + 1.1


def test_max_length_cuts_texts_and_refuses_long_pairs() -> None:
    with FakeOpenAIServer() as server:
        lm = scorer(server, max_length=2)
        (text,) = asyncio.run(lm.score(["Paris is big"], token_logprobs=True))
        (pair,) = asyncio.run(lm.score_continuations([("Paris is", " big")]))
    assert text.token_logprobs == (-0.3,) and text.n_truncated == 1
    assert pair.n_tokens == 0 and "max_length=2" in (pair.reason or "")


def test_a_refused_input_is_unmeasured_and_the_rest_measured() -> None:
    def script(body: dict[str, Any]) -> str | FakeReply:
        if any("long" in p for p in body["prompt"]):
            return FakeReply(status=400, text="prompt is too long for the model")
        return "scores"

    with FakeOpenAIServer(script) as server:
        ok, refused = asyncio.run(scorer(server).score(["a b", "a long text"]))
        # the batch was refused, then each input sent alone
        prompts = [b["prompt"] for b in server.requests]
    assert prompts[0] == ["a b", "a long text"]
    assert sorted(prompts[1:]) == [["a b"], ["a long text"]]
    assert ok.sum_nll == pytest.approx(0.2)
    assert refused.n_tokens == 0 and "too long" in (refused.reason or "")
    assert refused.perplexity is None


def test_retries_429_and_503_with_retry_after() -> None:
    replies = [
        FakeReply(status=429, headers={"Retry-After": "0.2"}),
        FakeReply(status=503, headers={"Retry-After": "0"}),
    ]

    def script(_body: dict[str, Any]) -> str | FakeReply:
        return replies.pop(0) if replies else "scores"

    with FakeOpenAIServer(script) as server:
        (scores,) = asyncio.run(scorer(server, max_retries=3).score(["a b"]))
        times = server.times
    assert scores.sum_nll == pytest.approx(0.2)
    assert len(times) == 3 and times[1] - times[0] >= 0.19


def test_cache_hits_send_no_request(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "responses.sqlite")
    with FakeOpenAIServer() as server:
        first = asyncio.run(scorer(server, cache=cache).score(["a b", "c d"]))
        again = asyncio.run(scorer(server, cache=cache, batch_size=1).score(["c d", "a b", "e f"]))
        assert [b["prompt"] for b in server.requests] == [["a b", "c d"], ["e f"]]
    assert [s.sum_nll for s in again[:2]] == [first[1].sum_nll, first[0].sum_nll]


def test_concurrency_bound_is_respected() -> None:
    with FakeOpenAIServer(delay=0.05) as server:
        texts = [f"t{i} u" for i in range(12)]
        asyncio.run(scorer(server, batch_size=1, concurrency=3).score(texts))
        assert len(server.requests) == 12 and server.max_in_flight <= 3


def test_missing_route_names_server_and_model() -> None:
    missing = r"/v1/completions \(vllm/fake-lm\).*404.*vllm serve"
    with (
        FakeOpenAIServer(lambda _b: FakeReply(status=404, text="Not Found")) as server,
        pytest.raises(ClientError, match=missing),
    ):
        asyncio.run(scorer(server).score(["a b"]))


def test_no_prompt_logprobs_is_a_clear_error() -> None:
    body = {"choices": [{"index": 0, "text": "a b x", "logprobs": None}]}
    with (
        FakeOpenAIServer(lambda _b: FakeReply(body=body)) as server,
        pytest.raises(ResponseFormatError, match=r"vllm/fake-lm.*no prompt log-prob"),
    ):
        asyncio.run(scorer(server).score(["a b"]))


def test_bad_specs_and_options() -> None:
    with pytest.raises(ConfigError, match="no model name"):
        causal_lm_scorer("vllm/")
    with pytest.raises(ConfigError, match="prepend_bos"):
        causal_lm_scorer("vllm/m", prepend_bos=True)
