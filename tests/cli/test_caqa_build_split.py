"""``caqa build`` reports the split by question it achieved (issue 17, item 12)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from citegraph.caqa.build import split_counts
from citegraph.cli import main


def test_build_reports_largest_remainder_split(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "b"
    args = ["caqa", "build", "--questions", "sample", "--kg", "codex-s", "--sample", "20"]
    args += ["--splits", "0.8,0.1,0.1", "--data-dir", str(data_dir), "--out", str(out)]
    result = CliRunner().invoke(main, args, env={"CITEGRAPH_CACHE": str(tmp_path / "cache")})
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    n = sum(metrics["splits"]["questions"].values())
    assert n == metrics["statistics"]["total"]["questions"] > 0
    assert metrics["splits"]["questions"] == split_counts(n, (0.8, 0.1, 0.1))
    assert metrics["splits"]["requested"] == {"train": 0.8, "dev": 0.1, "test": 0.1}
    line = "Split by question: train "
    assert line in result.output and "requested 0.8/0.1/0.1" in " ".join(result.output.split())
    assert line in (out / "stats.md").read_text()
    if n == 20:  # every sampled query built: the hand-checked 16/2/2
        assert metrics["splits"]["questions"] == {"train": 16, "dev": 2, "test": 2}
