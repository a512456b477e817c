"""Plain text and numbers as CONNER's presenters show them (knowledge runs and score runs)."""

from __future__ import annotations

import math
from typing import Any

#: How long a sample's title may be.
TITLE_CHARS = 120


def shorten(text: str, limit: int = TITLE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def number(value: Any) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None
