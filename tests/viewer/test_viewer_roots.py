"""Issue 37, item 3: files of a run directory that lead out of the viewer's roots, reproduced
first. A run directory inside a root whose ``run.json``, ``samples.jsonl`` or ``metrics.json``
was a symlink to a file outside it was served in full (a ``samples.jsonl`` linked to
``/etc/passwd`` showed that it has 25 lines); ``citegraph report`` read it too. A
``metrics.json`` that is a named pipe stalled the run list for good.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import DataError
from citegraph.viewer import create_app, write_report

pytest.importorskip("starlette", reason="the viewer extra is not installed")

INFO = {"task": "kalma.score", "created": "2026-01-01", "config": {"mode": "paper"}}
SECRET = "s3cret-outside-the-root"
FILES = {
    "run.json": json.dumps(INFO | {"config": {"mode": "paper", "seed": SECRET}}) + "\n",
    "samples.jsonl": json.dumps({"id": "s0", "status": "ok", "question": SECRET}) + "\n",
    "metrics.json": json.dumps({"f1": 0.5, "note": SECRET}) + "\n",
}


def make_run(root: Path, name: str) -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps(INFO), encoding="utf-8")
    (run / "samples.jsonl").write_text(json.dumps({"id": "s0", "status": "ok"}) + "\n")
    return run


def client(root: Path) -> Any:
    from starlette.testclient import TestClient

    return TestClient(create_app([root], warm=False), base_url="http://127.0.0.1")


@pytest.fixture
def linked(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    """``root/linked``: a run whose file ``request.param`` links to ``outside/<name>``, and
    ``root/good``."""
    name = request.param
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / name).write_text(FILES[name], encoding="utf-8")
    root = tmp_path / "root"
    run = make_run(root, "linked")
    (run / name).unlink(missing_ok=True)
    (run / name).symlink_to(outside / name)
    make_run(root, "good")
    return root, run / name


@pytest.mark.parametrize("linked", sorted(FILES), indirect=True)
def test_a_run_file_linked_out_of_the_root_is_never_read(linked: tuple[Path, Path]) -> None:
    root, link = linked
    viewer = client(root)
    index = viewer.get("/")
    assert index.status_code == 200 and SECRET not in index.text
    assert 'href="/run?run=0%2Fgood"' in index.text
    row = index.text[index.text.index('href="/run?run=0%2Flinked"') :].split("</tr>")[0]
    assert "unreadable: " in row and "outside the viewer" in row
    for page in ("/run?run=0/linked", "/sample?run=0/linked&id=s0", "/compare?run=0/linked"):
        answer = viewer.get(page)
        assert answer.status_code == 422, page
        assert SECRET not in answer.text and str(link) in answer.text, page
    with pytest.raises(DataError, match="outside") as caught:
        write_report([link.parent], root.parent / "r.html")
    assert caught.value.path == str(link)


def test_a_link_that_stays_inside_the_root_is_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    shared = make_run(root, "a")
    run = make_run(root, "b")
    (run / "samples.jsonl").unlink()
    (run / "samples.jsonl").symlink_to(shared / "samples.jsonl")
    assert client(root).get("/run?run=0/b").status_code == 200


def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    run = make_run(tmp_path, "piped")
    os.mkfifo(run / "metrics.json")
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(client(tmp_path).get("/")), daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():  # stalled on the pipe: unblock it, then fail
        fd = os.open(run / "metrics.json", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(timeout=10)
        pytest.fail("the run list waited on a named pipe")
    index = answers[0]
    row = index.text[index.text.index('href="/run?run=0%2Fpiped"') :].split("</tr>")[0]
    assert "unreadable: " in row and "not a regular file" in row
