"""Fuzz the response cache with damaged files from a seeded generator (issue 27, item 4).

A real cache is filled through the chat cache (a mock model behind :class:`CachedChatModel`),
then damaged: random bytes, truncation at a random offset, random byte flips in random pages,
other schemas. Each damaged file is then used by a new chat cache for the same questions (and
new ones). Every case must end without an exception escaping: either the damage is noticed (one
:class:`~citegraph.io.CacheWarning` naming the file, the run goes on without the cache) or the
file still works; and in both, every answer is the model's own (a damaged value is a miss, never
a wrong answer). The generator is seeded; a failure names its case.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sqlite3
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from citegraph.io import CacheWarning
from citegraph.models.chat._cache import CachedChatModel
from citegraph.models.chat._factory import chat_model
from citegraph.models.chat._types import ChatRequest, GenerateConfig

SEED = 27
PAGE = 4096
CASES = {"random bytes": 40, "truncated": 60, "page flips": 100, "wrong schema": 20}
#: Questions cached before the damage, then asked again with new ones (a lone surrogate too).
OLD = [f"question {i}: " + "why " * (i * 7 % 90) for i in range(30)] + ["lone \ud800 surrogate"]
NEW = [f"new question {i}" for i in range(5)]


def ask(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], GenerateConfig(temperature=0))


def expected(text: str) -> str:
    return f"the answer to {text!r}"


def answer(request: ChatRequest) -> str:
    return expected(str(request.messages[-1].content))


def use(path: Path, questions: list[str]) -> tuple[list[str], list[str]]:
    """The answers through a chat cache at ``path``, and the CacheWarnings given."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = chat_model("mock", mock_outputs=answer, cache=path)
        assert isinstance(model, CachedChatModel)

        async def go() -> list[str]:
            texts = [(await model.generate(ask(q))).text for q in questions]
            await model.aclose()
            return texts

        texts = asyncio.run(go())
    return texts, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def random_bytes(data: bytes, rng: random.Random) -> bytes:
    size = rng.choice([0, 1, 100, PAGE, 3 * PAGE + 5])
    head = data[:100] if rng.random() < 0.5 else b""  # a valid SQLite header, or none
    return head + rng.randbytes(size)


def truncated(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))]


def page_flips(data: bytes, rng: random.Random) -> bytes:
    damaged = bytearray(data)
    for _ in range(rng.choice([1, 2, 8, 64])):
        page = rng.randrange(len(data) // PAGE)
        offset = page * PAGE + rng.randrange(PAGE)
        damaged[offset] ^= 1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)
    return bytes(damaged)


SCHEMAS = [
    "CREATE TABLE entries (k TEXT, v TEXT)",
    "CREATE TABLE entries (namespace TEXT, key TEXT, value BLOB, created REAL, extra INT)",
    "CREATE TABLE other (x)",
    "CREATE TABLE entries (namespace, key, created, value)",
    "CREATE VIEW entries AS SELECT 1 AS namespace",
]


def wrong_schema(path: Path, rng: random.Random) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(rng.choice(SCHEMAS))
    conn.close()


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("filled") / "responses.sqlite"
    texts, warned = use(path, OLD)
    assert texts == [expected(q) for q in OLD] and warned == []
    data = path.read_bytes()
    assert len(data) >= 4 * PAGE  # several pages of b-tree to damage
    return data


MUTATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "random bytes": random_bytes,
    "truncated": truncated,
    "page flips": page_flips,
}


def test_damaged_caches_never_raise_and_never_give_a_wrong_answer(
    tmp_path: Path, filled: bytes
) -> None:
    rng = random.Random(SEED)
    outcome: Counter[str] = Counter()
    tried: Counter[str] = Counter()
    questions = OLD + NEW
    right = [expected(q) for q in questions]
    for kind, count in CASES.items():
        for case in range(count):
            folder = tmp_path / f"{kind.replace(' ', '-')}-{case}"
            folder.mkdir()
            path = folder / "responses.sqlite"
            if kind == "wrong schema":
                wrong_schema(path, rng)
            else:
                path.write_bytes(MUTATORS[kind](filled, rng))
            tried[kind] += 1
            try:
                texts, warned = use(path, questions)
            except Exception as exc:
                outcome["traceback"] += 1
                pytest.fail(f"{kind} case {case}: {type(exc).__name__}: {exc}")
            if texts != right:
                outcome["wrong answer"] += 1
                pytest.fail(f"{kind} case {case}: a wrong answer from the damaged cache")
            if len(warned) > 1:
                outcome["more than one warning"] += 1
            elif warned:
                assert str(path) in warned[0], (kind, case, warned)
                outcome["warned, ran without the cache"] += 1
            else:
                outcome["worked (damage not met, or values missed)"] += 1
            shutil.rmtree(folder)
    assert dict(tried) == CASES and sum(tried.values()) == 220
    assert outcome["traceback"] == 0 and outcome["wrong answer"] == 0
    assert outcome["more than one warning"] == 0
    assert outcome["warned, ran without the cache"] > 0
    print(dict(tried), dict(outcome))  # the counts for the report (pytest -s)
