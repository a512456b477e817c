"""Provenance recorded in every run: package versions, file hashes, canonical config hashes."""

from __future__ import annotations

import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from citegraph.io import json_text

_PACKAGES = ("citegraph", "pydantic", "pyoxigraph", "httpx2", "torch", "transformers")


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the form hashed for cache keys and config ids
    (a lone surrogate written as its ``\\uXXXX`` escape, so any text is UTF-8 encodable)."""
    return json_text(obj, sort_keys=True, separators=(",", ":"))


def sha256_json(obj: Any) -> str:
    """SHA-256 of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def package_versions() -> dict[str, str | None]:
    """Versions of Python and of the packages that can change a number (None if absent)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
