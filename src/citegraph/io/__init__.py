"""Small I/O helpers every package uses.

Data: where the datasets live (``resolve_data_dir``). Files: atomic writes, JSON / JSONL / CSV
readers whose errors name the file, line and field (bytes that are not UTF-8: the line and byte
offset; a byte-order mark is accepted), Markdown tables (``markdown_table``).
Caches: the cache root (``$CITEGRAPH_CACHE``) and a thread-safe SQLite cache with JSON values
keyed by the SHA-256 of canonical JSON. HTTP: Retry-After parsing and backoff shared by the
chat client and the SPARQL client. Lifetimes: :class:`Closing` / :class:`AsyncClosing`, the
``with`` / ``async with`` methods of an object that only says how it closes.
"""

from citegraph.io._atomic import AtomicLines, atomic_write, atomic_write_lines
from citegraph.io._cache_dir import CACHE_ENV, cache_root
from citegraph.io._closing import AsyncClosing, Closing
from citegraph.io._csv_file import formula_safe, numbered_rows, read_csv_file
from citegraph.io._data_dir import (
    DATA_ENV,
    dataset_file,
    default_download_dir,
    resolve_data_dir,
)
from citegraph.io._deadlines import DEFAULT_TIMEOUT, Deadlines
from citegraph.io._http_retry import (
    SNIPPET_CHARS,
    RetryHold,
    ServerWaitWarning,
    backoff_wait,
    capped_wait_note,
    deadline_wait_note,
    parse_retry_after,
    retry_after_from_headers,
    retry_wait,
    snippet,
)
from citegraph.io._json_array import JsonArrayIndex
from citegraph.io._json_file import load_json
from citegraph.io._jsonl import (
    JsonlLine,
    TolerantScan,
    iter_jsonl,
    iter_jsonl_at,
    parse_jsonl_line,
    read_jsonl_tolerant,
)
from citegraph.io._jsonl_index import JsonlIndex, JsonlRules, iter_unique
from citegraph.io._markdown import markdown_table
from citegraph.io._sqlite_cache import CacheWarning, SQLiteCache, cache_key, canonical_json
from citegraph.io._text import (
    SurrogateTally,
    TextWarning,
    encodable,
    iter_lines,
    json_bytes,
    json_text,
    not_utf8_error,
    printable,
    read_text,
    regular_file,
    without_surrogates,
)
from citegraph.io._urls import (
    ServerURL,
    check_base_url,
    redact_args,
    redact_url,
    redact_urls_in,
    split_query,
    url_secrets,
)

__all__ = [
    "CACHE_ENV",
    "DATA_ENV",
    "DEFAULT_TIMEOUT",
    "SNIPPET_CHARS",
    "AsyncClosing",
    "AtomicLines",
    "CacheWarning",
    "Closing",
    "Deadlines",
    "JsonArrayIndex",
    "JsonlIndex",
    "JsonlLine",
    "JsonlRules",
    "RetryHold",
    "SQLiteCache",
    "ServerURL",
    "ServerWaitWarning",
    "SurrogateTally",
    "TextWarning",
    "TolerantScan",
    "atomic_write",
    "atomic_write_lines",
    "backoff_wait",
    "cache_key",
    "cache_root",
    "canonical_json",
    "capped_wait_note",
    "check_base_url",
    "dataset_file",
    "deadline_wait_note",
    "default_download_dir",
    "encodable",
    "formula_safe",
    "iter_jsonl",
    "iter_jsonl_at",
    "iter_lines",
    "iter_unique",
    "json_bytes",
    "json_text",
    "load_json",
    "markdown_table",
    "not_utf8_error",
    "numbered_rows",
    "parse_jsonl_line",
    "parse_retry_after",
    "printable",
    "read_csv_file",
    "read_jsonl_tolerant",
    "read_text",
    "redact_args",
    "redact_url",
    "redact_urls_in",
    "regular_file",
    "resolve_data_dir",
    "retry_after_from_headers",
    "retry_wait",
    "snippet",
    "split_query",
    "url_secrets",
    "without_surrogates",
]
