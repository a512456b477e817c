"""Batched local generation: requests in flight share one ``generate`` call and get the text
they would get alone.

The random tiny Llama of ``_tiny_models.build_random_causal_lm`` has logits that depend on every
input token and position, so a padding or attention-mask leak changes its greedy text; the
byte-level random Llama below generates under the citation grammar.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from _kg_helpers import subgraph  # noqa: E402
from _tiny_models import LM_WORDS, build_byte_lm, build_random_causal_lm  # noqa: E402
from citegraph.errors import ConfigError, PromptTooLong  # noqa: E402
from citegraph.models import ChatRequest, GenerateConfig, Generation  # noqa: E402
from citegraph.models.chat._batching import (  # noqa: E402
    BatchScheduler,
    batch_key,
    default_max_batch,
)
from citegraph.models.chat._generation import GenerationCancelled  # noqa: E402
from citegraph.models.chat._hf import HFChat  # noqa: E402


def ask(text: str, **config: Any) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], GenerateConfig(**config))


#: Eight prompts of different lengths (5 to 19 words): the batch is left-padded.
PROMPTS = [
    " ".join(LM_WORDS[(5 * k + 3 * j) % len(LM_WORDS)] for j in range(5 + 2 * k)) for k in range(8)
]


@pytest.fixture(scope="module")
def random_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return build_random_causal_lm(tmp_path_factory.mktemp("lm") / "random_lm")


@pytest.fixture(scope="module")
def alone(random_lm: Path) -> HFChat:
    """The same model, one request at a time (the reference)."""
    return HFChat.load(random_lm, device="cpu", max_batch=1)


@pytest.fixture(scope="module")
def batched(random_lm: Path) -> HFChat:
    return HFChat.load(random_lm, device="cpu")


def together(chat: HFChat, requests: list[ChatRequest]) -> list[Generation]:
    async def run() -> list[Generation]:
        return list(await asyncio.gather(*(chat.generate(r) for r in requests)))

    return asyncio.run(run())


def assert_same(want: list[Generation], got: list[Generation]) -> None:
    for w, g in zip(want, got, strict=True):
        assert (g.text, g.finish_reason, g.usage) == (w.text, w.finish_reason, w.usage)


def test_default_batch_sizes_and_keys() -> None:
    assert (default_max_batch("cpu"), default_max_batch("cuda:1"), default_max_batch("mps")) == (
        8,
        32,
        8,
    )
    configs = [
        GenerateConfig(temperature=0, seed=0, stop=("x",)),
        GenerateConfig(temperature=0.7, seed=3),  # each row samples with its own seed
        GenerateConfig(temperature=0.7, seed=None, top_p=0.5, max_tokens=3),
    ]
    assert {batch_key(c) for c in configs} == {("rows",)}


def test_max_batch_is_checked(random_lm: Path) -> None:
    with pytest.raises(ConfigError, match="max_batch"):
        HFChat.load(random_lm, device="cpu", max_batch=0)
    assert HFChat.load(random_lm, device="cpu").max_batch == 8


def test_concurrent_greedy_requests_share_a_call_and_match_one_at_a_time(
    alone: HFChat, batched: HFChat
) -> None:
    # different prompt lengths and max_tokens; the random model ends some replies with </s>
    requests = [ask(p, temperature=0, max_tokens=6 + 3 * k) for k, p in enumerate(PROMPTS)]
    want = [alone.generate_sync(r) for r in requests]
    got = together(batched, requests)
    assert_same(want, got)
    assert {g.raw["batch_size"] for g in got if g.raw} == {8}
    assert {w.raw["batch_size"] for w in want if w.raw} == {1}
    assert len({w.text for w in want}) == 8  # not vacuous: eight different replies
    assert {w.finish_reason for w in want} == {"stop", "length"}
    assert len({w.usage.prompt_tokens for w in want}) == 8  # usage without the padding


def test_rows_stop_at_their_own_stop_strings(alone: HFChat, batched: HFChat) -> None:
    plain = [alone.generate_sync(ask(p, temperature=0, max_tokens=24)) for p in PROMPTS]
    # each row stops at a word from the middle of its own free reply (the first row: none)
    stops = [()] + [(w.text.split()[len(w.text.split()) // 2],) for w in plain[1:]]
    requests = [
        ask(p, temperature=0, max_tokens=24, stop=s) for p, s in zip(PROMPTS, stops, strict=True)
    ]
    want = [alone.generate_sync(r) for r in requests]
    got = together(batched, requests)
    assert_same(want, got)
    cut = [w for w, p in zip(want[1:], plain[1:], strict=True) if len(w.text) < len(p.text)]
    assert len(cut) >= 4  # not vacuous: the stops did cut replies short
    assert got[0].text == plain[0].text


def test_rows_keep_their_repetition_penalty(alone: HFChat, batched: HFChat) -> None:
    requests = [
        ask(p, temperature=0, max_tokens=20, repetition_penalty=None if k % 2 else 3.0)
        for k, p in enumerate(PROMPTS)
    ]
    want = [alone.generate_sync(r) for r in requests]
    assert_same(want, together(batched, requests))
    free = alone.generate_sync(ask(PROMPTS[0], temperature=0, max_tokens=20))
    assert free.text != want[0].text  # not vacuous: the penalty changes the reply


def test_at_most_max_batch_rows_per_call(random_lm: Path, alone: HFChat) -> None:
    small = HFChat.load(random_lm, device="cpu", max_batch=3)
    requests = [ask(p, temperature=0, max_tokens=5) for p in PROMPTS[:7]]
    got = together(small, requests)
    assert_same([alone.generate_sync(r) for r in requests], got)
    sizes = [g.raw["batch_size"] for g in got if g.raw]
    assert sizes == [3, 3, 3, 3, 3, 3, 1]


def test_seeded_sampled_requests_share_a_call_and_match_alone(
    alone: HFChat, batched: HFChat
) -> None:
    seeded = [ask(p, temperature=1.0, max_tokens=8, seed=k) for k, p in enumerate(PROMPTS[:4])]
    got = together(batched, seeded)
    assert_same([alone.generate_sync(r) for r in seeded], got)  # the same text as alone
    assert {g.raw["batch_size"] for g in got if g.raw} == {4}
    again = together(batched, list(reversed(seeded)))  # a row's seed, not its place, decides
    assert [g.text for g in reversed(again)] == [g.text for g in got]
    other = together(batched, [ask(PROMPTS[0], temperature=1.0, max_tokens=8, seed=99)])
    assert other[0].text != got[0].text  # another seed, another sample
    unseeded = [ask(p, temperature=1.0, max_tokens=8, seed=None) for p in PROMPTS[:4]]
    mixed = together(batched, [*unseeded, ask(PROMPTS[4], temperature=0, max_tokens=4)])
    assert [g.raw["batch_size"] for g in mixed if g.raw] == [5, 5, 5, 5, 5]


def test_mixed_greedy_and_sampled_requests_share_a_call(alone: HFChat, batched: HFChat) -> None:
    requests = [
        ask(p, temperature=0, max_tokens=6) if k % 2 else ask(p, temperature=0.8, max_tokens=6)
        for k, p in enumerate(PROMPTS[:6])
    ]
    got = together(batched, requests)
    assert_same([alone.generate_sync(r) for r in requests], got)
    assert [g.raw["batch_size"] for g in got if g.raw] == [6, 6, 6, 6, 6, 6]


def test_a_prompt_too_long_fails_alone(batched: HFChat, alone: HFChat) -> None:
    long = " ".join(LM_WORDS * 20)  # far past the 256 positions
    requests = [ask(PROMPTS[0], temperature=0, max_tokens=5), ask(long, temperature=0)]

    async def run() -> list[Any]:
        return list(
            await asyncio.gather(*(batched.generate(r) for r in requests), return_exceptions=True)
        )

    ok, failed = asyncio.run(run())
    assert isinstance(failed, PromptTooLong)
    assert isinstance(ok, Generation) and ok.text == alone.generate_sync(requests[0]).text


def test_rows_that_do_not_fit_the_context_together_run_one_at_a_time(
    batched: HFChat, alone: HFChat
) -> None:
    # each fits the 256 positions alone; padded to the longest prompt with the largest
    # max_tokens they would not
    requests = [
        ask(" ".join(LM_WORDS * 5), temperature=0, max_tokens=4),
        ask(PROMPTS[0], temperature=0, max_tokens=200),
    ]
    got = together(batched, requests)
    assert_same([alone.generate_sync(r) for r in requests], got)
    assert [g.raw["batch_size"] for g in got if g.raw] == [1, 1]


def test_cancelling_one_request_leaves_the_others(batched: HFChat, alone: HFChat) -> None:
    """One request of four is cancelled while the batch runs (at its third token): the others
    get their whole replies, and the batch goes on without the cancelled row."""
    requests = [ask(p, temperature=0, max_tokens=12) for p in PROMPTS[:4]]
    want = [alone.generate_sync(r) for r in requests]

    async def scenario() -> list[Any]:
        loop = asyncio.get_running_loop()
        calls = [asyncio.ensure_future(batched.generate(r)) for r in requests]

        def report(p: Any) -> None:
            if p.tokens == 3 and not calls[1].done():
                loop.call_soon_threadsafe(calls[1].cancel)
                while not calls[1].done():
                    time.sleep(0.001)

        batched.progress = report
        return list(await asyncio.gather(*calls, return_exceptions=True))

    try:
        results = asyncio.run(scenario())
    finally:
        batched.progress = None
    assert isinstance(results[1], asyncio.CancelledError)
    kept = [results[i] for i in (0, 2, 3)]
    assert_same([want[i] for i in (0, 2, 3)], kept)
    assert {g.raw["batch_size"] for g in kept} == {4}


def test_a_cancelled_row_is_dropped_from_the_batch_result(batched: HFChat) -> None:
    events = [threading.Event(), threading.Event()]
    events[1].set()
    requests = [ask(p, temperature=0, max_tokens=4) for p in PROMPTS[:2]]
    first, second = batched.generate_batch_sync(requests, events)
    assert isinstance(first, Generation) and first.usage.completion_tokens
    assert isinstance(second, GenerationCancelled)


def test_a_request_cancelled_while_waiting_never_runs() -> None:
    ran: list[list[str]] = []
    started = threading.Event()
    release = threading.Event()

    def run(requests: Any, cancels: Any) -> list[Any]:
        ran.append([r.messages[0].content for r in requests])
        started.set()
        release.wait(5)
        return [Generation(text=r.messages[0].content, model="m") for r in requests]

    scheduler = BatchScheduler(run, max_batch=2, window_s=0)

    async def scenario() -> list[Any]:
        first = asyncio.ensure_future(scheduler.submit(ask("a", temperature=0)))
        await asyncio.to_thread(started.wait, 5)  # "a" runs; "b", "c" and "d" queue up
        waiting = [asyncio.ensure_future(scheduler.submit(ask(t, temperature=0))) for t in "bcd"]
        await asyncio.sleep(0)
        waiting[0].cancel()
        release.set()
        return list(await asyncio.gather(first, *waiting, return_exceptions=True))

    results = asyncio.run(scenario())
    assert ran == [["a"], ["c", "d"]]
    assert isinstance(results[1], asyncio.CancelledError)
    assert [r.text for r in (results[0], results[2], results[3])] == ["a", "c", "d"]


def test_a_failing_batch_fails_its_rows_only() -> None:
    def run(requests: Any, cancels: Any) -> list[Any]:
        if any(r.messages[0].content == "boom" for r in requests):
            raise RuntimeError("boom")
        return [Generation(text="ok", model="m") for _ in requests]

    scheduler = BatchScheduler(run, max_batch=1, window_s=0)

    async def scenario() -> list[Any]:
        calls = [scheduler.submit(ask(t, temperature=0)) for t in ("boom", "fine")]
        return list(await asyncio.gather(*calls, return_exceptions=True))

    boom, fine = asyncio.run(scenario())
    assert isinstance(boom, RuntimeError) and isinstance(fine, Generation)


# --- under a grammar -----------------------------------------------------------------------


def test_rows_under_their_own_grammars_match_one_at_a_time(
    tmp_path: Path,
) -> None:
    pytest.importorskip("llguidance")
    from citegraph.kalma.constrain import CitationChoices, citation_grammar
    from citegraph.kalma.parse import parse_answer

    torch.set_num_threads(1)
    path = build_byte_lm(tmp_path / "byte-lm")
    one = HFChat.load(path, device="cpu", max_batch=1)
    many = HFChat.load(path, device="cpu")
    facts = [
        [subgraph("Q1", "Ada", ("place of birth", "Rome"), ("occupation", "painter"))],
        [subgraph("Q2", "Bob", ("occupation", "engineer"), ("employer", "Acme"))],
    ]
    questions = ["Who was Ada?", "Where was Ada born?", "Who is Bob?", "What does Bob do?"]
    requests = []
    for k, question in enumerate(questions):
        request = ask(question, temperature=0, max_tokens=40 + 10 * k)
        if k != 3:  # one row runs free among the constrained ones
            grammar = citation_grammar(CitationChoices(facts[k // 2]))
            request = request.model_copy(update={"grammar": grammar})
        requests.append(request)
    want = [one.generate_sync(r) for r in requests]
    got = together(many, requests)
    assert_same(want, got)
    for w, g in zip(want, got, strict=True):
        assert g.raw is not None and w.raw is not None
        assert {k: v for k, v in g.raw.items() if k not in {"grammar_s", "batch_size"}} == {
            k: v for k, v in w.raw.items() if k not in {"grammar_s", "batch_size"}
        }
        assert g.raw["batch_size"] == 4
    cited = [len(parse_answer(w.text, facts[k // 2]).kg_citations) for k, w in enumerate(want)]
    assert sum(cited[:3]) >= 1  # not vacuous: the constrained rows cite
    assert "grammar" in (got[0].raw or {}) and "grammar" not in (got[3].raw or {})


def test_a_grammar_that_cannot_be_applied_fails_its_request_alone(
    batched: HFChat, alone: HFChat
) -> None:
    """The random LM's word-level tokenizer is no tokenizer llguidance takes: the grammar's
    request fails with that error, the request beside it is answered."""
    pytest.importorskip("llguidance")
    from citegraph.models.grammar import Grammar

    grammar = Grammar(name="yes-no-v1", lark='start: "yes" | "no"', gbnf='root ::= "yes" | "no"')
    requests = [
        ask(PROMPTS[0], temperature=0, max_tokens=5),
        ask(PROMPTS[1], temperature=0, max_tokens=5).model_copy(update={"grammar": grammar}),
    ]

    async def run() -> list[Any]:
        calls = (batched.generate(r) for r in requests)
        return list(await asyncio.gather(*calls, return_exceptions=True))

    ok, failed = asyncio.run(run())
    assert isinstance(failed, ConfigError) and "fast (Rust) tokenizer" in str(failed)
    assert isinstance(ok, Generation) and ok.text == alone.generate_sync(requests[0]).text
