"""The viewer's run list, a run's page and the HTML report show a copied finished run as
finished (file times are not read) and one whose samples.jsonl grew after metrics.json as in
progress: all three ask :func:`citegraph.runs.run_state`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.viewer.conftest import cli

from citegraph.viewer._site import Site


def _copy(runs_root: Path, tmp_path: Path) -> Path:
    """``cp -r`` of the kalma score run, samples.jsonl then touched newer than metrics.json."""
    copy = tmp_path / "runs" / "scored"
    shutil.copytree(runs_root / "scored", copy)
    os.utime(copy / "metrics.json", ns=(1_000_000_000, 1_000_000_000))
    os.utime(copy / "samples.jsonl", ns=(2_000_000_000, 2_000_000_000))
    return copy


def _report(run: Path, tmp_path: Path, name: str) -> str:
    out = tmp_path / name
    cli("report", run, "--out", out)
    return out.read_text(encoding="utf-8")


def test_a_copied_run_is_finished_everywhere(runs_root: Path, tmp_path: Path) -> None:
    copy = _copy(runs_root, tmp_path)
    site = Site([copy.parent])
    overview = site.overview("0/scored", copy)
    assert overview.finished and overview.progress == "4/4"
    assert site.run_page("0/scored", copy, {})["run"].finished
    assert "unfinished" not in _report(copy, tmp_path, "before.html")


def test_records_appended_after_the_metrics_make_it_in_progress(
    runs_root: Path, tmp_path: Path
) -> None:
    copy = _copy(runs_root, tmp_path)
    lines = (copy / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    again = json.loads(lines[0]) | {"id": "specific-9"}
    with (copy / "samples.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(again) + "\n")
    site = Site([copy.parent])
    assert not site.overview("0/scored", copy).finished
    assert not site.run_page("0/scored", copy, {})["run"].finished
    assert "unfinished: 5/4 done, metrics not final" in _report(copy, tmp_path, "after.html")
