"""Where citegraph caches things: ``$CITEGRAPH_CACHE``, else ``$XDG_CACHE_HOME/citegraph``, else
``~/.cache/citegraph``."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "CITEGRAPH_CACHE"


def cache_root() -> Path:
    """The root of citegraph's caches (KG stores, model conversions, response caches)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "citegraph"
