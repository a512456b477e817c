"""What several CLI test modules share: a command runner and a response cache of their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from citegraph.cli import main

#: Every command that runs a chat model (each takes the server deadline and response options).
CHAT_COMMANDS = [
    ("ask",),
    ("kalma", "run"),
    ("kalma", "build"),
    ("caqa", "build"),
    ("caqa", "judge"),
    ("conner", "generate"),
    ("conner", "score"),
    ("conner", "select"),
]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets an empty ``$CITEGRAPH_CACHE`` and no OpenAI key from the environment
    (a module opts in by importing this fixture)."""
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def invoke(*args: object) -> Result:
    """``citegraph ARGS`` through click's runner."""
    return CliRunner().invoke(main, [str(a) for a in args])
