"""A small persistent key-value cache in SQLite: JSON values, SHA-256 keys, safe to share.

Used for remote SPARQL results and, later, model responses. Design choices:

- **Keys** are SHA-256 hex digests of the canonical JSON of the full request
  (:func:`cache_key`: sorted keys, no whitespace, UTF-8), so equal requests hit and any change in
  endpoint, query, model or parameters misses.
- **Values** are JSON text, never pickle: a cache file from elsewhere cannot run code when read.
- **Concurrency**: one connection per cache object, guarded by a lock (usable from several
  threads); WAL journal and a busy timeout so that several processes can share one file.
  A cache object used after ``fork`` reopens its connection in the child.
- **Namespaces** let several users share one file without key collisions.
- ``SQLiteCache(None)`` is a disabled cache: every lookup misses and writes are dropped, so callers
  need no ``if cache is not None`` branches.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["SQLiteCache", "cache_key", "canonical_json"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID
"""

_MISSING = object()


def canonical_json(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no whitespace, non-ASCII kept, NaN/Infinity refused.

    Raises:
        TypeError: ``obj`` holds something JSON cannot represent.
        ValueError: ``obj`` holds NaN or an infinity.
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def cache_key(request: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of ``request`` (encoded as UTF-8).

    Pass the *full* request: endpoint URL, method, query or messages, every parameter.
    """
    text = canonical_json(dict(request))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SQLiteCache:
    """A JSON-valued key-value cache stored in one SQLite file.

    Args:
        path: The database file (created with its parent folders), ``":memory:"`` for a private
            in-memory cache, or ``None`` for a disabled cache that never stores anything.
        namespace: Entries of other namespaces in the same file are invisible to this object.
        max_age: Entries older than this many seconds count as missing (``None``: never expire).
        clock: Returns the current time in seconds (tests inject a fake clock).

    Example:
        >>> cache = SQLiteCache(":memory:")
        >>> key = cache_key({"endpoint": "https://example.org/sparql", "query": "ASK {}"})
        >>> cache.set(key, {"head": {}, "boolean": True})
        >>> cache.get(key)
        {'head': {}, 'boolean': True}
    """

    def __init__(
        self,
        path: str | Path | None,
        *,
        namespace: str = "default",
        max_age: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_age is not None and max_age <= 0:
            raise ValueError(f"max_age must be positive, got {max_age}")
        self.path: str | None = None if path is None else str(path)
        self.namespace = namespace
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        if self.path is not None:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            with self._lock:
                self._connection()

    @property
    def enabled(self) -> bool:
        """Whether this cache stores anything (``False`` for ``SQLiteCache(None)``)."""
        return self.path is not None

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opened in a new process. Call with the lock held."""
        assert self.path is not None
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        # After fork the parent's connection must not be used (nor closed) by the child.
        conn = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA busy_timeout = 30000")
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(_SCHEMA)
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _fresh_after(self) -> float:
        return -float("inf") if self.max_age is None else self._clock() - self.max_age

    def _lookup(self, key: str) -> Any:
        if self.path is None:
            return _MISSING
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT value FROM entries WHERE namespace = ? AND key = ? AND created >= ?",
                    (self.namespace, key, self._fresh_after()),
                )
                .fetchone()
            )
        if row is None:
            return _MISSING
        try:
            return json.loads(row[0])
        except json.JSONDecodeError:  # a damaged entry is a miss, it is overwritten next time
            return _MISSING

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default`` when missing or expired."""
        value = self._lookup(key)
        return default if value is _MISSING else value

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (anything JSON can represent) under ``key``, replacing any old value.

        Raises:
            TypeError: ``value`` is not JSON-serialisable.
            ValueError: ``value`` holds NaN or an infinity.
        """
        text = canonical_json(value)
        if self.path is None:
            return
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO entries (namespace, key, value, created) "
                "VALUES (?, ?, ?, ?)",
                (self.namespace, key, text, self._clock()),
            )

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        if self.path is None:
            return
        with self._lock:
            self._connection().execute(
                "DELETE FROM entries WHERE namespace = ? AND key = ?", (self.namespace, key)
            )

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lookup(key) is not _MISSING

    def __len__(self) -> int:
        """Number of live (unexpired) entries in this namespace."""
        if self.path is None:
            return 0
        with self._lock:
            (count,) = (
                self._connection()
                .execute(
                    "SELECT COUNT(*) FROM entries WHERE namespace = ? AND created >= ?",
                    (self.namespace, self._fresh_after()),
                )
                .fetchone()
            )
        return int(count)

    def clear(self) -> None:
        """Remove every entry of this namespace (other namespaces are kept)."""
        if self.path is None:
            return
        with self._lock:
            self._connection().execute("DELETE FROM entries WHERE namespace = ?", (self.namespace,))

    def close(self) -> None:
        """Close the connection; a later call reopens it."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> SQLiteCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteCache({self.path!r}, namespace={self.namespace!r})"
