"""The prompt files shipped in ``citegraph/kalma/prompts/`` (read once per process)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def prompt_file(name: str) -> dict[str, Any]:
    """The parsed JSON of ``kalma/prompts/<name>`` (e.g. ``answer.json``, ``geval.json``)."""
    text = (resources.files("citegraph.kalma") / "prompts" / name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
