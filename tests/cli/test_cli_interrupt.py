"""Ctrl-C on a real ``citegraph kalma run`` process, against a scripted OpenAI-compatible server.

The first two requests are answered at once; every later one is held by the server for 60 s, so
the requests in flight when SIGINT arrives can only end by being cancelled. Checked: the first
SIGINT exits 130 (long before a held reply could come) with the resume hint on stderr and the
finished records kept; the same command then resumes them; a second SIGINT exits at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.runs import Runtime
from citegraph.testing import FakeOpenAIServer, FakeReply

ANSWER = "Stephen Crane was born in Newark [Q206534, place of birth: Newark]."
HELD_S = 60.0


class Script:
    """Answers the first ``n_fast`` requests at once and, while ``hold``, holds the rest for
    :data:`HELD_S`."""

    def __init__(self, n_fast: int) -> None:
        self.n_fast = n_fast
        self.n = 0
        self.hold = True

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        self.n += 1
        held = self.hold and self.n > self.n_fast
        return FakeReply(text=ANSWER, delay=HELD_S if held else 0.0)


class Lines:
    """The lines a pipe gives, read by a thread as they come."""

    def __init__(self, pipe: Any) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: Any) -> None:
        for line in pipe:
            self.lines.append(line)

    def text(self) -> str:
        self._thread.join(timeout=HELD_S / 2)
        return "".join(self.lines)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _start(server: FakeOpenAIServer, out: Path, data_dir: Path, cache: Path) -> Any:
    command = [
        sys.executable, "-c", "from citegraph.cli import main; main()",
        "kalma", "run", "--model", "vllm/fake-model", "--base-url", server.base_url,
        "--limit", "8", "--concurrency", "2", "--data-dir", str(data_dir), "--out", str(out),
    ]  # fmt: skip
    env = os.environ | {"CITEGRAPH_CACHE": str(cache)}
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for_records(proc: Any, samples: Path, n: int, server: FakeOpenAIServer) -> None:
    deadline = time.monotonic() + 120
    # n records written, and the two next requests held by the server (in flight)
    while len(_lines(samples)) < n or len(server.requests) < n + 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.05)


def _stopped_by(
    signum: int, server: FakeOpenAIServer, out: Path, data_dir: Path, cache: Path
) -> tuple[int, str, str]:
    """Start the run, send ``signum`` once two records are written and two calls are held, and
    wait (under half the held time) for it to stop: its exit status, stdout and stderr."""
    proc = _start(server, out, data_dir, cache)
    try:
        _wait_for_records(proc, out / "samples.jsonl", 2, server)
        proc.send_signal(signum)
        # a held reply would take HELD_S: returning before means the calls were cancelled
        stdout, stderr = proc.communicate(timeout=HELD_S / 2)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, stdout, stderr


def test_first_sigint_keeps_records_prints_resume_hint_exits_130(
    data_dir: Path, tmp_path: Path
) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache"
    script = Script(n_fast=2)
    with FakeOpenAIServer(reply=script) as server:
        status, stdout, stderr = _stopped_by(signal.SIGINT, server, out, data_dir, cache)
        assert status == 130, stderr
        assert "interrupted (SIGINT): 2 item(s) finished in this call are kept in" in stderr
        assert "6 left; resume with: citegraph kalma run --model vllm/fake-model" in stderr
        assert "Aborted!" not in stderr + stdout
        assert not (out / "metrics.json").exists()
        kept = sorted(json.loads(line)["id"] for line in _lines(out / "samples.jsonl"))
        # the first two requests to reach the server were answered: two of the first four
        # questions (a served model's run prepares 2 x --concurrency questions ahead)
        assert len(set(kept)) == 2 and set(kept) <= {f"specific-{i}" for i in range(4)}

        script.hold = False
        config = KalmaRunConfig(model="vllm/fake-model", base_url=server.base_url)
        result = run_kalma(out, config, runtime=Runtime(limit=8), data_dir=data_dir)
    assert (result.n_resumed, result.n_done_now) == (2, 6)
    assert result.metrics["n_answers"] == 8


def test_second_sigint_exits_at_once_with_the_records_on_disk(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=Script(n_fast=2)) as server:
        proc = _start(server, out, data_dir, tmp_path / "cache")
        try:
            _wait_for_records(proc, out / "samples.jsonl", 2, server)
            err = Lines(proc.stderr)
            proc.send_signal(signal.SIGINT)
            while not any(line.startswith("stopping: no new items") for line in err.lines):
                assert proc.poll() is None, err.text()
                time.sleep(0.01)
            proc.send_signal(signal.SIGINT)  # within the grace: nothing is finished any more
            proc.wait(timeout=HELD_S / 2)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = err.text()
    assert proc.returncode == 130, stderr
    assert "interrupted again: exiting at once" in stderr
    assert len(_lines(out / "samples.jsonl")) == 2


@pytest.mark.parametrize("signum", [signal.SIGTERM])
def test_sigterm_stops_the_same_way_with_143(
    data_dir: Path, tmp_path: Path, signum: signal.Signals
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=Script(n_fast=2)) as server:
        status, _, stderr = _stopped_by(signum, server, out, data_dir, tmp_path / "cache")
    assert status == 143, stderr
    assert "interrupted (SIGTERM): 2 item(s) finished" in stderr
