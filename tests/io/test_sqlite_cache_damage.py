"""A damaged, foreign or unusable cache file: one CacheWarning naming the file, then the work
goes on without the cache (never a sqlite3 traceback); a full disk stops the storing only; any
text (a lone surrogate) is stored and read back unchanged."""

from __future__ import annotations

import asyncio
import sqlite3
import warnings
from pathlib import Path

import pytest

from citegraph.io import CacheWarning, SQLiteCache, cache_key
from citegraph.models.chat._cache import CachedChatModel, chat_cache_key
from citegraph.models.chat._factory import chat_model
from citegraph.models.chat._types import ChatRequest, GenerateConfig

QUESTIONS = [f"question {i} " + "x" * 300 for i in range(40)]


def ask(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], GenerateConfig(temperature=0))


def answer(request: ChatRequest) -> str:
    return "answer to " + str(request.messages[-1].content)


def answers_through_cache(path: Path, questions: list[str]) -> tuple[list[str], list[str]]:
    """The answers of a mock model behind the chat cache at ``path``, and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = chat_model("mock", mock_outputs=answer, cache=path)
        assert isinstance(model, CachedChatModel)

        async def go() -> list[str]:
            out = [(await model.generate(ask(q))).text for q in questions]
            await model.aclose()
            return out

        texts = asyncio.run(go())
    return texts, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def populated(path: Path) -> Path:
    texts, warned = answers_through_cache(path, QUESTIONS)
    assert warned == [] and texts == [f"answer to {q}" for q in QUESTIONS]
    return path


def garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\x00\xff" * 500)


def truncated(path: Path) -> None:
    populated(path)
    data = path.read_bytes()
    (path.parent / (path.name + "-wal")).unlink(missing_ok=True)
    path.write_bytes(data[: len(data) // 3 + 7])


def corrupted_pages(path: Path) -> None:
    populated(path)
    data = bytearray(path.read_bytes())
    for offset in range(4096, len(data), 97):  # every page after the first: b-tree pages
        data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


def other_database(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
        conn.execute("INSERT INTO people VALUES ('ada')")
    conn.close()


def wrong_schema(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE entries (k TEXT, v BLOB)")
    conn.close()


def directory(path: Path) -> None:
    path.mkdir()


DAMAGE = {
    "garbage": garbage,
    "truncated": truncated,
    "corrupted pages": corrupted_pages,
    "another database": other_database,
    "wrong schema": wrong_schema,
    "a directory": directory,
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_cache_warns_once_naming_the_file_and_answers_go_on(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "responses.sqlite"
    DAMAGE[kind](path)
    before = path.read_bytes() if path.is_file() else None
    texts, warned = answers_through_cache(path, QUESTIONS)
    assert texts == [f"answer to {q}" for q in QUESTIONS]
    assert len(warned) == 1, warned
    assert str(path) in warned[0] and "--no-cache" in warned[0]
    if before is not None and kind != "corrupted pages":
        assert path.read_bytes() == before  # the user's file is never changed nor deleted


def test_another_database_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "mine.sqlite"
    other_database(path)
    answers_through_cache(path, QUESTIONS[:2])
    with sqlite3.connect(path) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master")]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert tables == ["people"] and mode != "wal"


def test_a_damaged_value_is_a_miss_never_a_wrong_answer(tmp_path: Path) -> None:
    path = populated(tmp_path / "responses.sqlite")
    with sqlite3.connect(path) as conn:
        (value,) = conn.execute("SELECT value FROM entries LIMIT 1").fetchone()
        damaged = value.replace("answer to", "answer tO")
        conn.execute("UPDATE entries SET value = ? WHERE value = ?", (damaged, value))
    conn.close()
    texts, warned = answers_through_cache(path, QUESTIONS)
    assert texts == [f"answer to {q}" for q in QUESTIONS] and warned == []


def test_values_stored_before_the_seal_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    SQLiteCache(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO entries VALUES ('default', 'k', '{\"a\":1}', 1e12)")
    conn.close()
    assert SQLiteCache(path).get("k") == {"a": 1}


def test_a_full_disk_stops_the_storing_once_and_the_run_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    cache = SQLiteCache(path, namespace="chat")
    cache.set("small", "kept")
    with cache._lock:  # SQLite's own cap on the file's pages: a real SQLITE_FULL
        conn = cache._connection()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.warns(CacheWarning) as caught:
        for i in range(20):
            cache.set(f"big{i}", "y" * 20_000)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert str(path) in message and "database or disk is full" in message
    assert cache.get("small") == "kept" and cache.get("big3") is None
    assert cache.enabled and cache.not_storing is not None


def test_a_cache_locked_too_long_by_another_process_is_given_up(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    SQLiteCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.warns(CacheWarning, match="locked") as caught:
            cache = SQLiteCache(path, busy_timeout=0.2)
            cache.set("k", 1)
            assert cache.get("k") is None
    finally:
        holder.rollback()
        holder.close()
    assert len(caught) == 1 and str(path) in str(caught[0].message)


def test_a_read_only_cache_is_read_and_not_written(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    cache = SQLiteCache(path)
    cache.set("k", "kept")
    with cache._lock:  # SQLite refuses every write: a real SQLITE_READONLY, even for root
        cache._connection().execute("PRAGMA query_only = ON")
    with pytest.warns(CacheWarning) as caught:
        cache.set("k2", 2)
        cache.set("k3", 3)
        cache.delete("k")
    assert len(caught) == 1 and str(path) in str(caught[0].message)
    assert "cannot store" in str(caught[0].message)
    assert cache.get("k") == "kept" and cache.get("k2") is None


def test_a_lone_surrogate_in_a_prompt_and_a_reply_is_cached_and_read_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "responses.sqlite"
    question = "broken \ud800 text"
    texts, warned = answers_through_cache(path, [question])
    again, _ = answers_through_cache(path, [question])
    assert texts == again == ["answer to broken \ud800 text"] and warned == []
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM entries").fetchone()
    assert count == 1


def test_keys_of_surrogate_free_requests_are_unchanged() -> None:
    # the keys computed by the code before lone surrogates were escaped
    assert cache_key({"q": "café ✓"}) == (
        "0d8fc69419899580996bad30565690bfcc157325467c8e3f832c30cdcc7d52c9"
    )
    assert chat_cache_key("mock", "mock/mock", ask("Ünïcode ✓")) == (
        "97637290d873eb59dac0d226f5023f3c58d693a518669f1f72936d260c888cd7"
    )
