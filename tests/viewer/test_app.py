"""The viewer over HTTP (a live uvicorn server): pages for every task, filters, read-only,
model text escaped, traversal refused."""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from tests.viewer.conftest import INJECTED


def get(url: str) -> tuple[int, str]:
    """Status and body of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def raw_get(base: str, target: str, method: str = "GET") -> int:
    """Status of a request whose target is sent byte for byte (no client normalisation)."""
    parsed = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.putrequest(method, target, skip_accept_encoding=True)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_run_list_shows_every_run_with_its_task(viewer_url: str) -> None:
    status, body = get(viewer_url + "/")
    assert status == 200
    for ref, task in (("0/scored", "kalma.score"), ("0/judged", "caqa.judge"),
                      ("0/built", "caqa.build")):  # fmt: skip
        assert f'href="/run?run={urllib.parse.quote(ref, safe="")}"' in body
        assert f"<td>{task}</td>" in body
    assert "Compare selected runs" in body


def test_a_run_page_has_its_metrics_and_samples(viewer_url: str) -> None:
    status, body = get(viewer_url + "/run?run=0/scored")
    assert status == 200
    assert "<td>citation correctness" in body and "<td>[NA] precision" in body
    assert "stand-in" in body  # alignment and [NA] decided by the lexical matcher
    assert "4 of 4 samples" in body
    assert body.count('class="sample-link"') == 4


def test_filters_narrow_the_sample_list(viewer_url: str) -> None:
    _, everything = get(viewer_url + "/run?run=0/scored")
    unmeasured = len(re.findall(r"<span class=\"tag\"|>unmeasured</a>", everything))
    _, body = get(viewer_url + "/run?run=0/scored&tag=unmeasured")
    n = body.count('class="sample-link"')
    assert 0 < n < 4 and f"{n} of 4 samples" in body and unmeasured >= n
    _, searched = get(viewer_url + "/run?run=0/scored&q=Hanfstaengl")
    assert "1 of 4 samples" in searched and "specific-1" in searched
    _, ranged = get(viewer_url + "/run?run=0/scored&metric=recall&min=0.7&max=1")
    rows = re.findall(r'class="sample-link" href="[^"]*">([^<]+)</a>', ranged)
    assert rows == ["specific-1"]  # recall 0.75; the others 0.6, 0 and 0.667


def test_the_list_pages(tmp_path: Path) -> None:
    from citegraph.runs import SampleSummary
    from citegraph.viewer._listing import SampleFilter, page_of

    rows = [SampleSummary(id=f"q{i}", title=f"t{i}", status="ok") for i in range(120)]
    page = page_of(rows, SampleFilter(), 3, per_page=50)
    assert (page.page, page.n_pages, [r.id for r in page.rows][:2]) == (3, 3, ["q100", "q101"])
    assert len(page.rows) == 20
    assert page_of(rows, SampleFilter(), 99).page == 3  # past the end: the last page


def test_model_text_is_escaped(viewer_url: str) -> None:
    status, body = get(viewer_url + "/sample?run=0/scored&id=specific-1")
    assert status == 200
    assert INJECTED not in body
    assert "&lt;script&gt;document.title=" in body


def test_a_sample_page_reads_one_sample(viewer_url: str) -> None:
    status, body = get(viewer_url + "/sample?run=0/scored&id=specific-0")
    assert status == 200 and "Stephen Crane" in body
    assert get(viewer_url + "/sample?run=0/scored&id=no-such-id")[0] == 404


@pytest.mark.parametrize(
    "target",
    [
        "/run?run=0/../../etc",
        "/run?run=0/..",
        "/run?run=/etc",
        "/run?run=0//etc",
        "/run?run=0/%2e%2e/%2e%2e",
        "/run?run=9/scored",
        "/run?run=x/scored",
        "/sample?run=0/../scored&id=specific-0",
        "/compare?run=0/scored&run=0/../..",
        "/static/../_app.py",
        "/static/%2e%2e/_app.py",
        "/static/..%2f_app.py",
        "/../../etc/passwd",
    ],
)
def test_paths_outside_the_run_directories_are_refused(viewer_url: str, target: str) -> None:
    assert raw_get(viewer_url, target) == 404


def test_a_symlink_out_of_a_root_is_refused(tmp_path: Path) -> None:
    from citegraph.viewer import Catalog

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "run.json").write_text("{}")
    root = tmp_path / "root"
    (root / "inside").mkdir(parents=True)
    (root / "inside" / "run.json").write_text("{}")
    (root / "link").symlink_to(outside)
    catalog = Catalog([root])
    assert catalog.resolve("0/inside") == (root / "inside").resolve()
    assert catalog.resolve("0/link") is None
    assert catalog.resolve("0/inside\x00") is None
    assert catalog.resolve(str(outside)) is None


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_writes(viewer_url: str, method: str) -> None:
    for target in ("/", "/run?run=0/scored", "/sample?run=0/scored&id=specific-0"):
        assert raw_get(viewer_url, target, method) == 405


def test_the_compare_page_shows_what_differs(viewer_url: str) -> None:
    status, body = get(viewer_url + "/compare?run=0/judged&run=0/scored")
    assert status == 200
    assert "settings that differ" in body and "<td>task</td>" in body


def test_a_run_being_written_shows_its_progress(viewer_url: str, runs_root: Path) -> None:
    run = runs_root / "growing"
    run.mkdir()
    info = {"task": "kalma.score", "config": {"task": "kalma.score"}, "created": "2026",
            "runtime": {"n_items": 10}}  # fmt: skip
    (run / "run.json").write_text(json.dumps(info))
    record = {"id": "a", "question": "q?", "scores": {"recall": 0.5}}
    (run / "samples.jsonl").write_text("".join(
        json.dumps(record | {"id": f"s{i}"}) + "\n" for i in range(3)
    ))  # fmt: skip
    body = get(viewer_url + "/")[1]
    assert "in progress 3/10" in body
    with (run / "samples.jsonl").open("a") as fh:
        fh.write(json.dumps(record | {"id": "s3"}) + "\n" + '{"id": "s4", "quest')
    body = get(viewer_url + "/")[1]
    assert "in progress 4/10" in body and "torn last line" in body
    assert "4 of 4 samples" in get(viewer_url + "/run?run=0/growing")[1]


def test_without_the_extra_view_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from click.testing import CliRunner

    from citegraph.cli import main

    monkeypatch.setitem(sys.modules, "starlette", None)
    monkeypatch.setitem(sys.modules, "starlette.applications", None)
    result = CliRunner().invoke(main, ["view", "--port", "1"])
    assert result.exit_code == 2
    assert "pip install 'citegraph[viewer]'" in result.output


def test_view_binds_this_machine_only_by_default() -> None:
    from citegraph.cli._view import view_command

    host = next(p for p in view_command.params if p.name == "host")
    assert host.default == "127.0.0.1"


def test_a_partial_run_says_so(viewer_url: str, runs_root: Path) -> None:
    run = runs_root / "partial"
    run.mkdir()
    info = {"task": "kalma.score", "config": {"task": "kalma.score"}, "created": "2026",
            "runtime": {"n_items": 2, "n_total": 30}}  # fmt: skip
    (run / "run.json").write_text(json.dumps(info))
    (run / "samples.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n')
    progress = {"n_done": 2, "n_failed": 0, "n_total": 30, "partial": True}
    (run / "metrics.json").write_text(json.dumps({"progress": progress}))
    assert "partial 2/30" in get(viewer_url + "/")[1]
    assert (
        "partial: 2/30 done; the metrics cover those only"
        in get(viewer_url + "/run?run=0/partial")[1]
    )
