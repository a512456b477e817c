"""Issue 37, items 1 and 12 (first bullet): a viewer no web page can stall or kill, each
reproduced first.

- ``/compare`` took the same run ref any number of times and read the whole run once per copy
  (200 copies of a 10,000-sample run grew the viewer to 24 GB);
- it drew its page on the event loop, so ``/`` waited as long as the compare page took;
- any web page could send it (a cross-site ``<img>``);
- nothing bounded what one page loads (every record of every run, a run.json of any size);
- ``view --port 99999`` raised ``OverflowError``; ``view --port 0`` printed ``:0`` and then
  refused every request (400: the Host named port 0's real port).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import ConfigError
from citegraph.runs import Presenter
from citegraph.viewer import SampleIndex, create_app, open_port

pytest.importorskip("starlette", reason="the viewer extra is not installed")

INFO = {"task": "kalma.score", "created": "2026-01-01", "config": {"mode": "paper"}}


def make_run(root: Path, name: str, n: int = 3, info: Any = None) -> Path:
    """A run directory ``root/name`` holding ``n`` small records (written in one go)."""
    run = root / name
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps(INFO if info is None else info), encoding="utf-8")
    record = {"status": "ok", "question": "Who?", "answer": "A.", "scores": {"f1": 0.5}}
    lines = "".join(json.dumps({"id": f"s{i}", **record}) + "\n" for i in range(n))
    (run / "samples.jsonl").write_text(lines, encoding="utf-8")
    return run


def client(root: Path, **options: Any) -> Any:
    from starlette.testclient import TestClient

    return TestClient(create_app([root], warm=False, **options), base_url="http://127.0.0.1")


class CountedRecords:
    """Counts :meth:`SampleIndex.records` calls (each reads every record of a run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = SampleIndex.records

        def counted(index: SampleIndex) -> list[dict[str, Any]]:
            self.calls += 1
            return real(index)

        monkeypatch.setattr(SampleIndex, "records", counted)


def test_compare_reads_a_repeated_run_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(tmp_path, "big", n=200)
    loads = CountedRecords(monkeypatch)
    answer = client(tmp_path).get("/compare", params={"run": ["0/big"] * 200})
    assert answer.status_code == 200
    assert "Figures of 0/big" in answer.text  # one run, not "200 runs side by side"
    assert loads.calls == 1


def test_compare_refuses_more_runs_than_a_page_shows(tmp_path: Path) -> None:
    from citegraph.viewer import MAX_COMPARE_RUNS

    refs = [f"0/r{i}" for i in range(MAX_COMPARE_RUNS + 1)]
    for ref in refs:
        make_run(tmp_path, ref[2:])
    viewer = client(tmp_path)
    answer = viewer.get("/compare", params={"run": refs})
    assert answer.status_code == 400
    assert f"at most {MAX_COMPARE_RUNS} runs" in answer.text
    assert f"{MAX_COMPARE_RUNS + 1} were asked for" in answer.text
    assert viewer.get("/compare", params={"run": refs[:-1]}).status_code == 200


def test_compare_leaves_out_figures_of_runs_larger_than_a_page_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run(tmp_path, "big", n=10_000)
    size = (run / "samples.jsonl").stat().st_size
    loads = CountedRecords(monkeypatch)
    small = client(tmp_path, max_figure_bytes=size // 2)
    answer = small.get("/compare", params={"run": "0/big"})
    assert answer.status_code == 200
    assert loads.calls == 0  # no record was read for figures
    assert "Figures left out" in answer.text and "citegraph report" in answer.text
    assert "--max-figure-mb" in answer.text
    assert client(tmp_path, max_figure_bytes=size).get("/compare?run=0/big").status_code == 200
    assert loads.calls == 1  # within the bound, the figures are drawn from the records


def test_the_default_figure_bound_is_documented() -> None:
    from citegraph.cli._view import MAX_FIGURE_MB
    from citegraph.viewer import MAX_FIGURE_BYTES

    assert 16 * 2**20 <= MAX_FIGURE_BYTES <= 512 * 2**20
    assert MAX_FIGURE_MB * 2**20 == MAX_FIGURE_BYTES
    result = CliRunner().invoke(main, ["view", "--help"])
    assert "--max-figure-mb" in result.output
    assert f"{MAX_FIGURE_BYTES // 2**20}" in result.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Blocking:
    """A stand-in for the compare page's work that waits until released, counting how many
    run at once."""

    def __init__(self) -> None:
        self.started = threading.Semaphore(0)
        self.release = threading.Event()
        self.running = 0
        self.most = 0
        self._lock = threading.Lock()

    def __call__(self, runs: Any, site: Any, **kwargs: Any) -> dict[str, Any]:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.started.release()
        self.release.wait(timeout=60)
        with self._lock:
            self.running -= 1
        return {"runs": runs, "tasks": ["kalma.score"], "differ": {}, "table": {}, "charts": []}


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A live viewer (uvicorn in a thread) over one run, its compare page's work blocking."""
    import uvicorn

    import citegraph.viewer._app as app_module

    make_run(tmp_path, "run")
    blocking = Blocking()
    monkeypatch.setattr(app_module, "compare_context", blocking)
    gates: list[Any] = []

    if hasattr(app_module, "HeavyRenders"):  # absent before issue 37

        class Recorded(app_module.HeavyRenders):
            def __init__(self) -> None:
                super().__init__()
                gates.append(self)

        monkeypatch.setattr(app_module, "HeavyRenders", Recorded)
    port = _free_port()
    app = create_app([tmp_path], warm=False)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", blocking, gates[0] if gates else None
    blocking.release.set()
    server.should_exit = True
    thread.join(timeout=10)


def _until(admitted: int, gate: Any) -> None:
    """Wait until ``admitted`` heavy pages are being drawn or waiting (fails after 20 s)."""
    deadline = time.monotonic() + 20
    while gate.admitted < admitted:
        assert time.monotonic() < deadline, f"{gate.admitted} of {admitted} pages admitted"
        time.sleep(0.02)


def _get_in_thread(url: str, answers: list[int]) -> threading.Thread:
    def get() -> None:
        try:
            answers.append(httpx.get(url, timeout=60).status_code)
        except httpx.HTTPError:
            answers.append(-1)

    thread = threading.Thread(target=get, daemon=True)
    thread.start()
    return thread


def test_the_run_list_answers_while_a_compare_page_is_drawn(live: Any) -> None:
    base, blocking, gate = live
    answers: list[int] = []
    heavy = [_get_in_thread(f"{base}/compare?run=0/run", answers) for _ in range(3)]
    assert blocking.started.acquire(timeout=20), "the compare page never started"
    # the event loop is free: the run list and a run's page answer while it is being drawn
    assert httpx.get(f"{base}/", timeout=10).status_code == 200
    assert httpx.get(f"{base}/run?run=0/run", timeout=10).status_code == 200
    _until(3, gate)
    assert blocking.running == 1  # heavy pages are drawn one at a time
    blocking.release.set()
    for thread in heavy:
        thread.join(timeout=30)
    assert answers == [200, 200, 200]
    assert blocking.most == 1


def test_heavy_pages_waiting_beyond_the_queue_are_told_to_retry(live: Any) -> None:
    from citegraph.viewer import HEAVY_WAITING

    base, blocking, gate = live
    answers: list[int] = []
    first = _get_in_thread(f"{base}/compare?run=0/run", answers)
    assert blocking.started.acquire(timeout=20)
    waiting = [_get_in_thread(f"{base}/compare?run=0/run", answers) for _ in range(HEAVY_WAITING)]
    _until(HEAVY_WAITING + 1, gate)
    busy = httpx.get(f"{base}/compare?run=0/run", timeout=10)
    assert busy.status_code == 503 and busy.headers["retry-after"]
    assert "being drawn" in busy.text
    blocking.release.set()
    for thread in [first, *waiting]:
        thread.join(timeout=30)
    assert answers == [200] * (HEAVY_WAITING + 1)


CROSS_SITE = [
    {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"},
    {"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"},
    {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"},
    {"origin": "https://evil.example"},
    {"referer": "https://evil.example/page.html"},
    {"origin": "null"},
]


@pytest.mark.parametrize("headers", CROSS_SITE)
def test_another_web_site_cannot_ask_for_a_compare_page(tmp_path: Path, headers: dict) -> None:
    make_run(tmp_path, "run")
    answer = client(tmp_path).get("/compare?run=0/run", headers=headers)
    assert answer.status_code == 403
    assert "another web site" in answer.text


def test_cross_site_images_and_frames_are_refused_but_links_are_followed(tmp_path: Path) -> None:
    make_run(tmp_path, "run")
    viewer = client(tmp_path)
    image = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"}
    frame = {
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "iframe",
    }
    link = {
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "document",
    }
    for page in ("/", "/run?run=0/run", "/sample?run=0/run&id=s0"):
        assert viewer.get(page, headers=image).status_code == 403, page
        assert viewer.get(page, headers=frame).status_code == 403, page
        assert viewer.get(page, headers=link).status_code == 200, page  # a link from elsewhere
    own = {
        "sec-fetch-site": "same-origin",
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "document",
    }
    typed = {"sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"}
    for headers in (own, typed, {"referer": "http://127.0.0.1/"}, {}):
        assert viewer.get("/compare?run=0/run", headers=headers).status_code == 200, headers
    script = {
        "sec-fetch-site": "same-origin",
        "sec-fetch-mode": "no-cors",
        "sec-fetch-dest": "script",
    }
    assert viewer.get("/static/viewer.js", headers=script).status_code == 200


def test_a_run_json_larger_than_the_viewer_reads_is_named_not_loaded(tmp_path: Path) -> None:
    from citegraph.viewer import MAX_JSON_BYTES

    run = make_run(tmp_path, "huge", info=INFO | {"pad": "x" * (MAX_JSON_BYTES + 1)})
    make_run(tmp_path, "good")
    viewer = client(tmp_path)
    index = viewer.get("/")
    assert index.status_code == 200
    row = index.text[index.text.index('href="/run?run=0%2Fhuge"') :].split("</tr>")[0]
    assert "unreadable: " in row and "larger than the viewer and report read" in row
    answer = viewer.get("/run?run=0/huge")
    assert answer.status_code == 422 and str(run / "run.json") in answer.text


def test_a_samples_file_is_indexed_in_bounded_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citegraph.viewer._samples as samples

    run = make_run(tmp_path, "run", n=500)
    with (run / "samples.jsonl").open("ab") as fh:
        fh.write(b"not json\n" + b'{"id": "torn", "sta')
    whole = SampleIndex(run, Presenter)
    expected = (whole.ids, [str(e) for e in whole.damage], whole.torn)
    sizes: list[int] = []
    real = samples._read_block

    def recorded(fh: Any, size: int) -> bytes:
        sizes.append(size)
        return real(fh, size)

    monkeypatch.setattr(samples, "READ_BLOCK", 1000)
    monkeypatch.setattr(samples, "_read_block", recorded)
    chunked = SampleIndex(run, Presenter)
    assert (chunked.ids, [str(e) for e in chunked.damage], chunked.torn) == expected
    assert len(sizes) > 10 and max(sizes) <= 1000


def test_view_refuses_a_port_out_of_range() -> None:
    result = CliRunner().invoke(main, ["view", "--port", "99999"])
    assert result.exit_code == 2
    assert "99999 is not in the range 0<=x<=65535" in result.output
    assert not isinstance(result.exception, OverflowError)
    with pytest.raises(ConfigError, match=r"port 99999 .* 0 to 65535"):
        open_port("127.0.0.1", 99999)


def test_view_on_port_0_prints_and_serves_the_port_it_was_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import citegraph.viewer as viewer

    served: dict[str, Any] = {}

    def serve(roots: Any, **kw: Any) -> None:
        served.update(kw, bound=kw["sock"].getsockname()[1])
        kw["sock"].close()

    monkeypatch.setattr(viewer, "serve", serve)
    result = CliRunner().invoke(main, ["view", "--port", "0"])
    assert result.exit_code == 0, result.output
    printed = re.search(r"http://127\.0\.0\.1:(\d+)/", result.output)
    assert printed is not None and printed.group(1) != "0"
    assert int(printed.group(1)) == served["port"] == served["bound"]
