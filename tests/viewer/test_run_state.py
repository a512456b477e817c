"""The viewer's run list, a run's page and the HTML report show a copied finished run as
finished (file times are not read) and one whose samples.jsonl grew after metrics.json as in
progress: all three ask :func:`citegraph.runs.run_state`. A run that did every item its own
``--limit`` (and ``--shard``) asked for is finished within its limit in all three; one stopped
before its limit is in progress, then partial once reported."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
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


# Issue 36, defect 7: a run that did every item its own --limit (and --shard) asked for is
# finished within its limit everywhere, not "partial" or "in progress"; a run stopped before
# its limit is still in progress.


@pytest.fixture(scope="module")
def limited_runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """``runs/`` with mock ``kalma run``s over the real questions: ``limited`` (--limit 3) and
    ``shard`` (--limit 5 --shard 1/2: 2 of its share)."""
    root = tmp_path_factory.mktemp("limited") / "runs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEGRAPH_CACHE", str(root.parent / "cache"))
        run = ("kalma", "run", "--model", "mock", "--data-dir", data_dir)
        cli(*run, "--limit", "3", "--out", root / "limited")
        cli(*run, "--limit", "5", "--shard", "1/2", "--out", root / "shard")
    return root


def _runtime(run: Path) -> dict[str, Any]:
    runtime: dict[str, Any] = json.loads((run / "run.json").read_text(encoding="utf-8"))["runtime"]
    return runtime


def _client(root: Path) -> Any:
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    return TestClient(create_app([root], warm=False), base_url="http://127.0.0.1")


def test_a_limited_run_is_finished_within_its_limit(limited_runs: Path, tmp_path: Path) -> None:
    run = limited_runs / "limited"
    n_total = _runtime(run)["n_total"]
    assert n_total > 3
    finished = f"finished (limit 3 of {n_total})"
    client = _client(limited_runs)
    index = client.get("/").text
    row = index[index.index('value="0/limited"') :]
    row = row[: row.index("</tr>")]
    assert finished in row and "in progress" not in row and "partial" not in row
    assert '<td class="num">3/3</td>' in row  # samples of those its limit asked for
    page = client.get("/run", params={"run": "0/limited"}).text
    assert finished in page and "in progress" not in page and "partial:" not in page
    report = _report(run, tmp_path, "limited.html")
    assert finished in report and "unfinished" not in report and "partial:" not in report
    overview = Site([limited_runs]).overview("0/limited", run)
    assert overview.finished and not overview.partial and overview.progress == "3/3"


def test_a_shard_of_a_limited_run_is_judged_against_its_share(limited_runs: Path) -> None:
    """--limit 5 --shard 1/2 asks for positions 1 and 3 of the first 5: 2 items."""
    runtime = _runtime(limited_runs / "shard")
    assert runtime["n_items"] == 2
    finished = f"finished (limit 5, shard 1/2: 2 of {runtime['n_total']})"
    client = _client(limited_runs)
    assert finished in client.get("/").text
    page = client.get("/run", params={"run": "0/shard"}).text
    assert finished in page and "partial:" not in page and "in progress" not in page


def test_a_run_stopped_before_its_limit_is_in_progress(limited_runs: Path, tmp_path: Path) -> None:
    """A --limit 3 run killed after 2 records: no metrics.json, fewer records than its limit."""
    run = tmp_path / "runs" / "stopped"
    shutil.copytree(limited_runs / "limited", run)
    (run / "metrics.json").unlink()
    samples = run / "samples.jsonl"
    samples.write_text("".join(samples.read_text(encoding="utf-8").splitlines(True)[:2]))
    n_total = _runtime(run)["n_total"]
    client = _client(run.parent)
    index = client.get("/").text
    assert f"in progress 2/3 (limit 3 of {n_total})" in index
    assert "finished (limit" not in index
    page = client.get("/run", params={"run": "0/stopped"}).text
    assert f"in progress: 2/3 done (limit 3 of {n_total}), metrics not final" in page
    report = _report(run, tmp_path, "stopped.html")
    assert f"unfinished: 2/3 done (limit 3 of {n_total}), metrics not final" in report
    assert "finished (limit" not in report.replace("unfinished", "")
    # runs report then: its metrics cover 2 of the 3 its limit asked for, so partial
    cli("runs", "report", run)
    index = client.get("/").text
    assert f"partial 2/3 (limit 3 of {n_total})" in index and "finished (limit" not in index
    page = client.get("/run", params={"run": "0/stopped"}).text
    assert f"partial: 2/3 done (limit 3 of {n_total}); the metrics cover those only" in page
