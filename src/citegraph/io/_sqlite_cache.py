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
- **Damage is worked around, never raised**: a file that is not a usable cache (garbage, truncated
  or corrupted pages, another SQLite database, a directory, unreadable, locked by another process
  for longer than ``busy_timeout``) gives one :class:`CacheWarning` naming the file and what to
  do, and the object then behaves as a disabled cache (the file is left as it is). A full disk or
  a read-only file while storing gives one warning and stops the storing; lookups go on.
- **Sealed values**: each value is stored with a digest of its namespace, key and text, so a value
  whose bytes were damaged on disk is a miss, never a wrong answer. Values stored before the seal
  existed are still read.
- **Any text**: a lone surrogate in a request or a value is stored as its JSON escape
  (:func:`~citegraph.io.json_text`), and read back unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from citegraph.io._closing import Closing
from citegraph.io._text import json_text

__all__ = ["CacheWarning", "SQLiteCache", "cache_key", "canonical_json"]

T = TypeVar("T")


class CacheWarning(UserWarning):
    """A cache file could not be used (or written): the work goes on without it. The message
    names the file and what to do."""


class _Unusable(Exception):
    """The file is a SQLite database, but not a cache (another database's tables)."""


#: The columns of the ``entries`` table, in order.
_COLUMNS = ["namespace", "key", "value", "created"]
#: A sealed value: this mark, the digest's first hex digits, then the JSON text.
_SEAL = "#"
_DIGEST_CHARS = 16

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


def canonical_json(obj: Any, *, allow_nan: bool = False) -> str:
    """Canonical JSON text: sorted keys, no whitespace, non-ASCII kept, a lone surrogate written
    as its ``\\uXXXX`` escape (so the text is always UTF-8 encodable; text without one is
    unchanged). The one form hashed for cache keys, run ids and config ids.

    Args:
        obj: Anything :func:`json.dumps` takes.
        allow_nan: Write NaN and infinities as ``NaN`` / ``Infinity`` (not JSON, but a stable
            text: run ids and config ids hash them so) instead of refusing them (cache keys and
            cached values, which must be JSON).

    Raises:
        TypeError: ``obj`` holds something JSON cannot represent.
        ValueError: ``obj`` holds NaN or an infinity and ``allow_nan`` is False.
    """
    return json_text(obj, sort_keys=True, separators=(",", ":"), allow_nan=allow_nan)


def cache_key(request: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of ``request`` (encoded as UTF-8).

    Pass the *full* request: endpoint URL, method, query or messages, every parameter.
    """
    text = canonical_json(dict(request))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SQLiteCache(Closing):
    """A JSON-valued key-value cache stored in one SQLite file.

    Args:
        path: The database file (created with its parent folders), ``":memory:"`` for a private
            in-memory cache, or ``None`` for a disabled cache that never stores anything.
        namespace: Entries of other namespaces in the same file are invisible to this object.
        max_age: Entries older than this many seconds count as missing (``None``: never expire).
        clock: Returns the current time in seconds (tests inject a fake clock).
        busy_timeout: Seconds to wait for another process's lock on the file before giving the
            cache up (with a :class:`CacheWarning`).

    A file that cannot be used gives one :class:`CacheWarning` and the object works as a
    disabled cache (:attr:`broken` says why); see the module docstring.

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
        busy_timeout: float = 30.0,
    ) -> None:
        if max_age is not None and max_age <= 0:
            raise ValueError(f"max_age must be positive, got {max_age}")
        self.path: str | None = None if path is None else str(path)
        self.namespace = namespace
        self.max_age = max_age
        self.busy_timeout = busy_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        #: Why the file is not used (``None`` while it is): a damaged or foreign file.
        self.broken: str | None = None
        #: Why nothing more is stored (``None`` while values are stored): a full disk.
        self.not_storing: str | None = None
        if self.path is not None:
            self._guarded(lambda conn: None, None)

    @property
    def enabled(self) -> bool:
        """Whether this cache stores anything (``False`` for ``SQLiteCache(None)`` and for a
        file given up as unusable)."""
        return self.path is not None and self.broken is None

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opened in a new process. Call with the lock held.

        Raises:
            sqlite3.Error, OSError, _Unusable: the file cannot be used as a cache.
        """
        assert self.path is not None
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # After fork the parent's connection must not be used (nor closed) by the child.
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            _check_schema(conn)  # before anything is written to a file that may be another's
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _guarded(
        self, work: Callable[[sqlite3.Connection], T], default: T, *, storing: bool = False
    ) -> T:
        """``work(connection)`` under the lock; ``default`` when the cache is disabled or given
        up, or when ``work`` meets a damaged file (which gives the cache up, with a warning)."""
        if self.path is None or self.broken is not None:
            return default
        if storing and self.not_storing is not None:
            return default
        with self._lock:
            try:
                return work(self._connection())
            except (sqlite3.Error, OSError, _Unusable) as exc:
                self._give_up(exc, storing=storing)
                return default

    def _give_up(self, exc: BaseException, *, storing: bool) -> None:
        """Stop using the file (or, for a full disk or a read-only file, stop storing), with
        one warning naming the file and what to do. Call with the lock held."""
        reason = _reason(exc)
        if storing and _cannot_store(exc):
            self.not_storing = reason
            warnings.warn(
                CacheWarning(
                    f"cache {self.path}: cannot store more answers ({reason}); the run goes "
                    "on, and the answers stored so far are still used. Free disk space (or "
                    "make the file writable) to cache again."
                ),
                stacklevel=4,
            )
            return
        self.broken = reason
        conn, self._conn = self._conn, None
        if conn is not None and self._pid == os.getpid():
            _close_quietly(conn)
        advice = (
            "Move it away (it is not a cache)"
            if isinstance(exc, _Unusable)
            else "Delete or move the file away to start a fresh cache"
        )
        warnings.warn(
            CacheWarning(
                f"cache {self.path} cannot be used ({reason}); the run goes on without it. "
                f"{advice}, or run with --no-cache."
            ),
            stacklevel=4,
        )

    def _fresh_after(self) -> float:
        return -float("inf") if self.max_age is None else self._clock() - self.max_age

    def _lookup(self, key: str) -> Any:
        row = self._guarded(
            lambda conn: conn.execute(
                "SELECT value FROM entries WHERE namespace = ? AND key = ? AND created >= ?",
                (self.namespace, key, self._fresh_after()),
            ).fetchone(),
            None,
        )
        if row is None or not isinstance(row[0], str):
            return _MISSING
        return self._unseal(key, row[0])

    def _digest(self, key: str, text: str) -> str:
        material = json_text([self.namespace, key, text]).encode("utf-8")
        return hashlib.sha256(material).hexdigest()[:_DIGEST_CHARS]

    def _unseal(self, key: str, stored: str) -> Any:
        """The value of a stored text, or ``_MISSING`` when its bytes were damaged (a miss,
        overwritten next time)."""
        if stored.startswith(_SEAL):
            digest, text = stored[1 : 1 + _DIGEST_CHARS], stored[1 + _DIGEST_CHARS :]
            if digest != self._digest(key, text):
                return _MISSING
        else:
            text = stored  # stored before values were sealed
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError):
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
        stored = f"{_SEAL}{self._digest(key, text)}{text}"
        self._guarded(
            lambda conn: conn.execute(
                "INSERT OR REPLACE INTO entries (namespace, key, value, created) "
                "VALUES (?, ?, ?, ?)",
                (self.namespace, key, stored, self._clock()),
            ),
            None,
            storing=True,
        )

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        self._guarded(
            lambda conn: conn.execute(
                "DELETE FROM entries WHERE namespace = ? AND key = ?", (self.namespace, key)
            ),
            None,
            storing=True,
        )

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lookup(key) is not _MISSING

    def __len__(self) -> int:
        """Number of live (unexpired) entries in this namespace."""
        row = self._guarded(
            lambda conn: conn.execute(
                "SELECT COUNT(*) FROM entries WHERE namespace = ? AND created >= ?",
                (self.namespace, self._fresh_after()),
            ).fetchone(),
            (0,),
        )
        return int(row[0])

    def clear(self) -> None:
        """Remove every entry of this namespace (other namespaces are kept)."""
        self._guarded(
            lambda conn: conn.execute("DELETE FROM entries WHERE namespace = ?", (self.namespace,)),
            None,
            storing=True,
        )

    def close(self) -> None:
        """Close the connection; a later call reopens it."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                _close_quietly(self._conn)
            self._conn = None

    def __repr__(self) -> str:
        return f"SQLiteCache({self.path!r}, namespace={self.namespace!r})"


def _close_quietly(conn: sqlite3.Connection) -> None:
    """Close ``conn``; closing a damaged file may fail, and nothing is left to do then."""
    with contextlib.suppress(sqlite3.Error):
        conn.close()


def _check_schema(conn: sqlite3.Connection) -> None:
    """Refuse a database that is not a cache: tables but no ``entries``, or an ``entries``
    table with other columns.

    Raises:
        _Unusable: says which.
        sqlite3.DatabaseError: the file is not a (readable) SQLite database.
    """
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return
    if "entries" not in tables:
        raise _Unusable("it is another SQLite database: it has no 'entries' table")
    columns = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    if columns != _COLUMNS:
        raise _Unusable(f"its 'entries' table has the columns {columns}, not {_COLUMNS}")


def _reason(exc: BaseException) -> str:
    """What went wrong, in a few words."""
    if isinstance(exc, IsADirectoryError) or (
        isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc)
    ):
        return f"{exc}: a directory, a missing folder or no permission"
    return f"{type(exc).__name__}: {exc}" if not isinstance(exc, _Unusable) else str(exc)


def _cannot_store(exc: BaseException) -> bool:
    """Whether ``exc`` says the file cannot take more data (a full disk, a read-only file)
    rather than that it is damaged."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES)
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY)
    text = str(exc)
    return "disk is full" in text or "readonly database" in text
