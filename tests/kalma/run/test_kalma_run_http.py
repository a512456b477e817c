"""``kalma run`` against a real OpenAI-compatible HTTP server started by the test.

The server is scripted: the answering model cites Stephen Crane's facts when his graph is in the
prompt, the judge answers "4"; the first request gets a 429 with Retry-After. Checked: what the
server received, the concurrency limit, the retry, the cache on a re-run, and a run killed with
SIGKILL half-way then resumed (every question exactly once).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.runs import Runtime
from citegraph.testing import FakeOpenAIServer, FakeReply

ANSWER = (
    "Stephen Crane was born in Newark [Q206534, place of birth: Newark]. "
    "He died of tuberculosis [Q206534, cause of death: Tuberculosis]."
)


def scripted(body: dict[str, Any]) -> str | FakeReply:
    if body["model"] == "judge":
        return "4"
    user = body["messages"][-1]["content"]
    return ANSWER if "{name: Stephen Crane," in user else "I do not know [NA]."


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_run_over_http(data_dir: Path, tmp_path: Path) -> None:
    calls = {"n": 0}

    def reply(body: dict[str, Any]) -> str | FakeReply:
        calls["n"] += 1
        if calls["n"] == 1:
            return FakeReply(status=429, headers={"Retry-After": "1"}, text="slow down")
        return scripted(body)

    with FakeOpenAIServer(reply=reply, delay=0.05) as server:
        config = KalmaRunConfig(
            model="vllm/fake-model",
            base_url=server.base_url,
            text_quality="vllm/judge",
            judge_base_url=server.base_url,
        )
        runtime = Runtime(limit=6, concurrency=2)
        result = run_kalma(tmp_path / "run", config, runtime=runtime, data_dir=data_dir)
        answer_bodies = [b for b in server.requests if b["model"] == "fake-model"]
        judge_bodies = [b for b in server.requests if b["model"] == "judge"]
        # 6 questions + 1 retried 429; 4 judge calls (one per criterion) per answered question.
        assert len(answer_bodies) + len(judge_bodies) == 6 + 1 + 6 * 4
        first = answer_bodies[0]
        assert first["temperature"] == 0.5 and first["seed"] == 0 and first["top_p"] == 1.0
        assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant", "user"]
        assert all(b["temperature"] == 0 for b in judge_bodies)
        assert server.max_in_flight <= 2
        m = result.metrics
        assert m["generation"]["n_retried"] == 1 and m["generation"]["n_failed"] == 0
        assert m["correctness"]["micro"] == pytest.approx(1.0)  # both citations are in the KG
        assert m["n_citations"] == 2
        assert m["text_quality"]["fluency"]["mean"] == pytest.approx(4.0)
        assert m["setup"]["model"] == "vllm/fake-model"

        server.reset()
        again = run_kalma(tmp_path / "again", config, runtime=runtime, data_dir=data_dir)
        assert server.requests == []  # every request answered from the response cache
        assert again.metrics["generation"]["n_cached"] == 6
        assert again.metrics["correctness"] == m["correctness"]


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_sigkill_half_way_loses_nothing(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    n = 12
    with FakeOpenAIServer(reply=scripted, delay=0.3) as server:
        command = [
            sys.executable,
            "-c",
            "from citegraph.cli import main; main()",
            "kalma",
            "run",
            "--model",
            "vllm/fake-model",
            "--base-url",
            server.base_url,
            "--limit",
            str(n),
            "--concurrency",
            "2",
            "--data-dir",
            str(data_dir),
            "--out",
            str(out),
        ]
        env = os.environ | {"CITEGRAPH_CACHE": str(tmp_path / "cache")}
        proc = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 120
            while len(_lines(out / "samples.jsonl")) < 4 and time.monotonic() < deadline:
                assert proc.poll() is None, "the run ended before it could be killed"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        written = len(_lines(out / "samples.jsonl"))
        assert 4 <= written < n
        config = KalmaRunConfig(model="vllm/fake-model", base_url=server.base_url)
        result = run_kalma(out, config, runtime=Runtime(limit=n, concurrency=2), data_dir=data_dir)
    assert result.n_resumed >= 4 and result.n_resumed + result.n_done_now == n
    ids = [json.loads(line)["id"] for line in _lines(out / "samples.jsonl")]
    assert sorted(ids) == sorted(f"specific-{i}" for i in range(n))  # each exactly once
    assert result.metrics["n_answers"] == n
