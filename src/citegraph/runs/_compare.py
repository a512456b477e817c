"""What tells runs apart: the settings whose values differ between runs' configs and inputs.

``citegraph runs compare`` and the viewer's comparison page show only these, so two runs that
differ in one setting (``mode``, ``split``, ``model``...) show that one row, not the whole config.
The input files a run read are settings too (:func:`run_settings`): two ``kalma score`` runs of
the same config on different answers files differ in ``answers (sha256)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.io import json_text

#: Longest value shown before it is cut (with "..."), so one long setting cannot widen a table.
MAX_SETTING_CHARS = 60
#: How many hex digits of an input file's SHA-256 a setting shows (48 bits: two different
#: files of a comparison show the same digits with a chance of about 1 in 10^14).
DIGEST_CHARS = 12
_SHA256 = re.compile(r"[0-9a-f]{64}")


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


def input_settings(data: Any) -> dict[str, str]:
    """The input files of ``run.json``'s ``data`` (name -> SHA-256) as settings: ``"<name>
    (sha256)"`` -> the digest's first :data:`DIGEST_CHARS` hex digits (``answers (sha256)``:
    ``1e0feb946b8d``); an entry that is no digest (a SPARQL KG's URL) as it is, under its
    name. Entries that are not text are left out.

    Example:
        >>> input_settings({"answers": "1e0feb946b8de175dc91f7776d1a7c64" * 2})
        {'answers (sha256)': '1e0feb946b8d'}
    """
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, str] = {}
    for name, value in data.items():
        if isinstance(value, str) and _SHA256.fullmatch(value):
            out[f"{name} (sha256)"] = value[:DIGEST_CHARS]
        elif isinstance(value, str) and value:  # a remote KG is named by its URL, not a digest
            out[str(name)] = setting_text(value)
    return out


def run_settings(info: Mapping[str, Any]) -> dict[str, Any]:
    """What a run was made with, as :func:`differing_settings` compares runs: ``run.json``'s
    ``config``, then its input files' digests (:func:`input_settings`)."""
    config = info.get("config")
    settings = dict(config) if isinstance(config, Mapping) else {}
    return settings | input_settings(info.get("data"))
