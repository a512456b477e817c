"""SQLiteCache: JSON values, canonical SHA-256 keys, namespaces, expiry, threads and processes."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from citegraph.io import SQLiteCache, cache_key, canonical_json


def test_cache_key_is_sha256_of_canonical_json() -> None:
    request = {"query": "ASK {}", "endpoint": "https://e.org/sparql", "n": [1, 2.5, None]}
    # By hand: keys sorted, no whitespace, non-ASCII kept as UTF-8.
    text = '{"endpoint":"https://e.org/sparql","n":[1,2.5,null],"query":"ASK {}"}'
    assert canonical_json(request) == text
    assert cache_key(request) == hashlib.sha256(text.encode()).hexdigest()
    # Key order does not matter; any change in a value does.
    assert cache_key(dict(reversed(list(request.items())))) == cache_key(request)
    assert cache_key({**request, "query": "ASK { }"}) != cache_key(request)
    assert canonical_json({"é": "ü"}) == '{"é":"ü"}'
    with pytest.raises(ValueError):
        cache_key({"x": float("nan")})


def test_get_set_contains_len_clear_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"  # parent folders are created
    value = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": 'Stéphane "Q" \\ ☃'}]}}
    with SQLiteCache(path) as cache:
        assert cache.get("k1") is None and cache.get("k1", "absent") == "absent"
        assert "k1" not in cache and len(cache) == 0
        cache.set("k1", value)
        cache.set("k2", [1, 2, 3])
        cache.set("k2", None)  # replaced; a stored JSON null is a value, not a miss
        assert cache.get("k1") == value
        assert "k2" in cache and cache.get("k2", "absent") is None
        assert len(cache) == 2
    with SQLiteCache(path) as reopened:  # persisted on disk
        assert reopened.get("k1") == value
        reopened.delete("k2")
        assert len(reopened) == 1
        reopened.clear()
        assert len(reopened) == 0 and "k1" not in reopened


def test_values_are_json_text_never_pickle(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = SQLiteCache(path)
    with pytest.raises(TypeError):
        cache.set("k", object())
    with pytest.raises(TypeError):
        cache.set("k", {1, 2})
    cache.set("k", {"b": 1, "a": [True, 1.5]})
    cache.close()
    (stored,) = sqlite3.connect(path).execute("SELECT value FROM entries").fetchone()
    # the JSON text, after its seal: "#" and 16 hex digits of a digest
    assert stored[0] == "#" and int(stored[1:17], 16) >= 0
    assert stored[17:] == '{"a":[true,1.5],"b":1}'


def test_namespaces_are_isolated(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    sparql, models = SQLiteCache(path, namespace="sparql"), SQLiteCache(path, namespace="models")
    sparql.set("k", 1)
    models.set("k", 2)
    assert (sparql.get("k"), models.get("k")) == (1, 2)
    models.clear()
    assert sparql.get("k") == 1 and len(models) == 0


def test_max_age_expires_entries() -> None:
    now = [1000.0]
    cache = SQLiteCache(":memory:", max_age=60, clock=lambda: now[0])
    cache.set("k", "v")
    now[0] = 1060.0  # exactly 60 s old: still fresh
    assert cache.get("k") == "v" and len(cache) == 1
    now[0] = 1060.5
    assert cache.get("k") is None and "k" not in cache and len(cache) == 0
    with pytest.raises(ValueError):
        SQLiteCache(":memory:", max_age=0)


def test_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = SQLiteCache(path)
    cache.set("k", 1)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET value = 'not json {'")
    assert cache.get("k", "miss") == "miss"


def test_disabled_cache_stores_nothing() -> None:
    cache = SQLiteCache(None)
    assert not cache.enabled
    cache.set("k", {"a": 1})
    assert cache.get("k") is None and "k" not in cache and len(cache) == 0
    cache.clear()
    cache.close()
    with pytest.raises(TypeError):  # still refuses what JSON cannot hold
        cache.set("k", object())


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(50):
                cache.set(f"{t}-{i}", {"t": t, "i": i})
                assert cache.get(f"{t}-{i}") == {"t": t, "i": i}
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 8 * 50


def test_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    script = textwrap.dedent(
        """
        import sys
        from citegraph.io import SQLiteCache
        cache = SQLiteCache(sys.argv[1])
        for i in range(100):
            cache.set(f"{sys.argv[2]}-{i}", i)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(p)]) for p in range(3)]
    assert [proc.wait(timeout=30) for proc in procs] == [0, 0, 0]
    cache = SQLiteCache(path)
    assert len(cache) == 300
    assert cache.get("2-99") == 99
    (mode,) = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()
    assert mode == "wal"
