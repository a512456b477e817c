"""Real runs for the viewer's tests, made through the CLI by the tests themselves (kalma score
on hand-written answers, one of them carrying a ``<script>``; caqa build + judge with the
lexical NLI evaluator), and a live viewer serving them on a free port (uvicorn in a thread)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main

pytest.importorskip("starlette", reason="the viewer extra is not installed")
pytest.importorskip("jinja2", reason="the viewer extra is not installed")

DEMO = resources.files("citegraph.kalma") / "demo"
#: Put into one answer's text: must render as text, never run.
INJECTED = "<script>document.title='pwned';window.__pwned=1</script>"


def cli(*args: str | Path) -> str:
    """Run ``citegraph`` with ``args``; fail with its output when it does not exit 0."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """``runs/`` with ``scored`` (kalma score of the demo answers, ``specific-1`` carrying
    :data:`INJECTED`), ``judged`` (caqa judge) and ``built`` (caqa build)."""
    root = tmp_path_factory.mktemp("viewer") / "runs"
    answers = root.parent / "answers.jsonl"
    lines = (DEMO / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    for record in records:
        if record["id"] == "specific-1":
            record["answer"] = record["answer"].replace(". ", f" {INJECTED}. ", 1)
    answers.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    cli("kalma", "score", answers, "--gold", str(DEMO / "gold.jsonl"),
        "--data-dir", data_dir, "--out", root / "scored")  # fmt: skip
    cli("caqa", "build", "--questions", "simplequestions-wd", "--limit", "24",
        "--splits", "0.2,0.2,0.6", "--data-dir", data_dir, "--out", root / "built")  # fmt: skip
    cli("caqa", "judge", root / "built" / "test.jsonl", "--evaluator", "nli/lexical",
        "--bootstrap", "0", "--out", root / "judged")  # fmt: skip
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def viewer_url(runs_root: Path) -> Iterator[str]:
    """The base URL of a viewer serving :func:`runs_root` (stopped at the end)."""
    import uvicorn

    from citegraph.viewer import create_app

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app([runs_root]), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the viewer did not start within 20 s")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
