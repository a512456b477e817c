"""One hostile model reply through every part of citegraph at once (issue 27).

The parts were hardened one by one (the run directory, the printers, the exports, the viewer,
the HTML report); this test sends one reply holding all the hostile text at once through the
real commands, in the order a user meets them: ``kalma run`` against a server whose answers hold
a lone surrogate, rich markup, terminal escape sequences, a formula start, mathtext and a
script tag; then the resume, ``runs report``, ``runs export`` (CSV and Parquet), ``citegraph
report`` and every viewer page of the run. Each must finish without a traceback, store the
reply unchanged, and show it as inert text.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from citegraph.cli import main
from citegraph.testing import FakeOpenAIServer, FakeReply

#: What the model answers: a formula start, a lone surrogate, markup, an OSC 8 hyperlink, a
#: cursor move, mathtext and a script tag, around a citation the parser reads.
REPLY = (
    '=HYPERLINK("http://evil") \ud800 [link=http://evil]x[/link] [/] '
    "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\ \x1b[2J $\\frac{$ <script>alert(1)</script> "
    "Stephen Crane was born in Newark [Q206534, place of birth: Newark]."
)
N = 3


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_inert(text: str) -> None:
    """No escape character, no lone surrogate, no live script in ``text``."""
    assert "\x1b" not in text and "\ud800" not in text
    assert "<script>alert(1)" not in text


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


@pytest.mark.needs("starlette", "jinja2", "matplotlib")
def test_one_hostile_reply_through_run_resume_report_export_and_viewer(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=lambda body: FakeReply(text=REPLY)) as server:
        args = ["kalma", "run", "--model", "vllm/fake-model", "--base-url", server.base_url]
        args += ["--limit", N, "--data-dir", data_dir, "--out", out, "--no-cache"]
        first = invoke(*args)
        calls = len(server.requests)
        again = invoke(*args)  # the resume: every item is done
        assert len(server.requests) == calls  # no model call paid twice
    assert first.exit_code == 0, first.output
    assert again.exit_code == 0, again.output
    assert_inert(first.output + again.output)

    # stored unchanged, once per id (the surrogate as JSON's escape)
    lines = (out / "samples.jsonl").read_bytes().decode("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == N == len({r["id"] for r in records})
    assert all(r["answer"] == REPLY for r in records)
    assert "\\ud800" in lines[0]
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["n_answers"] == N and metrics["n_citations"] == N

    report = invoke("runs", "report", out)
    assert report.exit_code == 0, report.output
    assert_inert(report.output)

    exported = invoke("runs", "export", out, "--format", "csv", "--out", tmp_path / "csv")
    assert exported.exit_code == 0, exported.output
    cells = [
        cell
        for path in (tmp_path / "csv").glob("*.csv")
        for row in csv.reader(path.open(encoding="utf-8", newline=""))
        for cell in row
    ]
    assert any("HYPERLINK" in cell for cell in cells)
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]
    assert not [c for c in cells if "\ud800" in c]
    pytest.importorskip("pyarrow", reason="the export extra is not installed")
    parquet = invoke("runs", "export", out, "--format", "parquet", "--out", tmp_path / "pq")
    assert parquet.exit_code == 0, parquet.output

    html = tmp_path / "report.html"
    written = invoke("report", out, "--out", html)
    assert written.exit_code == 0, written.output
    page = html.read_bytes().decode("utf-8")  # UTF-8 throughout
    assert_inert(page)
    assert "&lt;script&gt;alert(1)" in page

    pytest.importorskip("starlette", reason="the viewer extra is not installed")
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    viewer = TestClient(create_app([tmp_path], warm=False), base_url="http://127.0.0.1")
    pages = ["/", "/run?run=0/run"] + [f"/sample?run=0/run&id={r['id']}" for r in records]
    for url in pages:
        answer = viewer.get(url)
        assert answer.status_code == 200, (url, answer.text[:300])
        assert_inert(answer.text)
    assert "&lt;script&gt;alert(1)" in viewer.get(pages[-1]).text
