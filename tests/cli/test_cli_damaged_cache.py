"""A command whose response cache file is damaged or not a cache: one ``warning:`` line naming
the file, exit 0, the same records as without the cache (never a sqlite3 traceback)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xffnot a database" * 300)


def _other_db(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    conn.close()


def _directory(path: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize("damage", [_garbage, _other_db, _directory], ids=lambda f: f.__name__)
def test_kalma_run_with_a_damaged_cache_warns_and_finishes(
    tmp_path: Path, data_dir: Path, damage: object
) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    responses = cache_dir / "responses.sqlite"
    assert callable(damage)
    damage(responses)
    out = tmp_path / "run"
    command = ["kalma", "run", "--model", "mock", "--limit", "3", "--data-dir", str(data_dir)]
    result = CliRunner().invoke(
        main,
        [*command, "--out", str(out)],
        env={"CITEGRAPH_CACHE": str(cache_dir), "COLUMNS": "400"},
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("warning: cache")]
    assert len(lines) == 1, result.output
    assert str(responses) in lines[0] and "--no-cache" in lines[0]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r.get("status") != "failed" for r in records)
