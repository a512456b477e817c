"""The two scoring modes every KaLMA metric offers, and the NLI hypothesis style names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from citegraph.errors import ConfigError
from citegraph.kg import Triple

Mode = Literal["paper", "reference"]
"""``"paper"``: the paper's definitions; ``"reference"``: what the authors' scripts compute."""

HypothesisStyle = Literal["relation_value", "natural"] | Callable[[Triple], str]
"""How a fact becomes an NLI hypothesis: a style name or a callable."""


def check_mode(mode: str) -> None:
    """Raise :class:`ConfigError` unless ``mode`` is ``"paper"`` or ``"reference"``."""
    if mode not in ("paper", "reference"):
        raise ConfigError(f"mode must be 'paper' or 'reference', got {mode!r}")


def style_name(style: HypothesisStyle) -> str:
    """The recorded name of a hypothesis style (``callable:<qualname>`` for a callable)."""
    if callable(style):
        return f"callable:{getattr(style, '__qualname__', type(style).__name__)}"
    return style
