"""What tells runs apart: the settings whose values differ between runs' configs.

``citegraph runs compare`` and the viewer's comparison page show only these, so two runs that
differ in one setting (``mode``, ``split``, ``model``...) show that one row, not the whole config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.io import json_text

#: Longest value shown before it is cut (with "..."), so one long setting cannot widen a table.
MAX_SETTING_CHARS = 60


def differing_settings(configs: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The config keys whose values differ between runs, with each run's value as short text.

    Keys are in first-seen order over the configs. Values are compared as canonical JSON (so
    ``1`` and ``1.0`` differ, dict key order does not); a key a run lacks (or holds ``None``)
    shows as ``"-"``; strings are shown bare, other values as JSON, cut to
    :data:`MAX_SETTING_CHARS` characters. With fewer than two configs nothing differs.

    Example:
        >>> differing_settings([{"mode": "paper", "seed": 0}, {"mode": "reference", "seed": 0}])
        {'mode': ['paper', 'reference']}
    """
    keys = list(dict.fromkeys(k for c in configs for k in c))
    out: dict[str, list[str]] = {}
    for key in keys:
        values = [json_text(c.get(key), sort_keys=True) for c in configs]
        if len(set(values)) > 1:
            out[key] = ["-" if c.get(key) is None else setting_text(c.get(key)) for c in configs]
    return out


def setting_text(value: Any) -> str:
    """A setting's value as short text: a string bare, anything else as JSON, cut to
    :data:`MAX_SETTING_CHARS` characters (ending in ``...``)."""
    text = value if isinstance(value, str) else json_text(value)
    return text if len(text) <= MAX_SETTING_CHARS else text[: MAX_SETTING_CHARS - 3] + "..."
