"""Provenance recorded in every run: package versions, file hashes, canonical config hashes."""

from __future__ import annotations

import functools
import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from citegraph.io import canonical_json

_PACKAGES = ("citegraph", "pydantic", "pyoxigraph", "httpx2", "torch", "transformers")


def sha256_json(obj: Any) -> str:
    """SHA-256 of :func:`citegraph.io.canonical_json` (NaN and infinities allowed: a config
    that holds one still has an id)."""
    return hashlib.sha256(canonical_json(obj, allow_nan=True).encode("utf-8")).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def package_versions() -> dict[str, str | None]:
    """Versions of Python and of the packages that can change a number (None if absent)."""
    return dict(_versions())


@functools.cache
def _versions() -> dict[str, str | None]:
    """:func:`package_versions`, read once per process (each package's metadata is a file
    parsed as an e-mail header: ~10 ms for all of them, at every run's start)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
