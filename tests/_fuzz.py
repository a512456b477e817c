"""Fuzz sizes: a CI-sized default, the full sizes on demand.

The fuzz and property tests (``tests/fuzz/``, the random-model grammar tests) draw their cases
from a seeded generator, so a smaller size runs the first cases of the same sequence. ``make
test`` runs the CI sizes; the full ones are one command away::

    make fuzz    # CITEGRAPH_FUZZ=full, pytest -m fuzz: tests/fuzz/ and the tests marked fuzz

``CITEGRAPH_FUZZ`` is ``ci`` (the default) or ``full``; anything else is an error, so a typo
never silently runs the small sizes.
"""

from __future__ import annotations

import os

import pytest

#: The environment variable that picks the sizes.
FUZZ_ENV = "CITEGRAPH_FUZZ"


def fuzz_level() -> str:
    """``"ci"`` or ``"full"``, from ``$CITEGRAPH_FUZZ``."""
    level = os.environ.get(FUZZ_ENV, "ci").strip().lower() or "ci"
    if level not in ("ci", "full"):
        raise pytest.UsageError(f"{FUZZ_ENV}={level!r}: use 'ci' (the default) or 'full'")
    return level


def fuzz_size(ci: int, full: int) -> int:
    """``ci`` cases by default, ``full`` under ``CITEGRAPH_FUZZ=full``."""
    return full if fuzz_level() == "full" else ci
