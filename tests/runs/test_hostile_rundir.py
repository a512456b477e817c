"""Issue 27 in the run directory: any text is stored (a lone surrogate too), one writer per run
directory, an edited run.json is refused, a full disk is one clear line, a record without a
string id is named rather than counted."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from citegraph.cli import main
from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import MockChat
from citegraph.runs import Record, RunBusy, RunDir, Runtime, Task, merge_runs, opened, run_task

SRC = Path(__file__).resolve().parents[2] / "src"
CHILD = Path(__file__).with_name("_lock_child.py")
SURROGATE_ANSWER = "Stephen Crane \ud800 was born in Newark [Q206534, place of birth: Newark]."


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


# --- any text --------------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_model_reply_is_stored_resumed_and_reported(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = run_kalma(
        out,
        KalmaRunConfig(model="mock"),
        runtime=Runtime(limit=2),
        data_dir=data_dir,
        model=MockChat(SURROGATE_ANSWER),
    )
    assert first.n_done_now == 2 and first.n_failed == 0
    records = _lines(out / "samples.jsonl")
    assert [r["answer"] for r in records] == [SURROGATE_ANSWER] * 2  # read back unchanged
    assert b"\\ud800" in (out / "samples.jsonl").read_bytes()
    again = MockChat("x \ud800")
    second = run_kalma(
        out, KalmaRunConfig(model="mock"), runtime=Runtime(limit=3), data_dir=data_dir, model=again
    )
    assert (second.n_resumed, second.n_done_now, again.calls) == (2, 1, 1)
    assert len(_lines(out / "samples.jsonl")) == 3
    report = _invoke("runs", "report", str(out))
    assert report.exit_code == 0, report.output
    assert "Traceback" not in report.output
    assert json.loads((out / "metrics.json").read_text())["progress"]["n_done"] == 3


def test_kalma_score_of_answers_holding_a_surrogate_escape(data_dir: Path, tmp_path: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(
        '{"id": "specific-0", "answer": "Crane \\ud800 [Q206534, place of birth: Newark]."}\n',
        encoding="utf-8",
    )
    out = tmp_path / "score"
    result = _invoke(
        "kalma", "score", str(answers), "--out", str(out), "--data-dir", str(data_dir),
        "--nli", "lexical",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    (record,) = _lines(out / "samples.jsonl")
    # rule 7: inputs are read with a lone surrogate as U+FFFD, said once per file
    assert record["answer"].startswith("Crane \ufffd [")
    assert "a.jsonl: 1 line held text UTF-8 cannot encode" in " ".join(result.output.split())


# --- one writer ------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return os.environ | {"PYTHONPATH": str(SRC)}


def _wait_for_run(proc: subprocess.Popen[str], out: Path) -> None:
    """Until ``proc`` holds the lock of ``out`` and has written its run.json."""
    deadline = time.monotonic() + 120
    lock = out / ".lock"
    while not (
        lock.exists() and f'"pid": {proc.pid}' in lock.read_text() and (out / "run.json").exists()
    ):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the child never took the lock"
        time.sleep(0.02)


def test_a_second_writer_is_refused_naming_the_pid_and_touching_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RunDir.open(out, {"child": True}) as run:
        run.append({"id": "a"})
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "hold", str(out)],
        env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        with pytest.raises(RunBusy, match=rf"run {out} is being written by pid {child.pid} ") as e:
            RunDir.open(out, {"child": True}, overwrite=True)
        assert not isinstance(e.value, ConfigError)  # the options are fine: the run is taken
        after = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"}
        assert after == before  # not even --overwrite removed anything
    finally:
        child.communicate("\n")
    assert child.returncode == 0
    with RunDir.open(out, {"child": True}) as run:  # released at close
        assert run.done == {"a"}


class _NoOptions(BaseModel):
    pass


class _Counting(Task[int, None]):
    """One item; counts the opens of its models."""

    name: ClassVar[str] = "testing.open-counting"

    def __init__(self) -> None:
        self.config = _NoOptions()
        self.opens = 0

    def items(self) -> Sequence[tuple[str, int]]:
        return [("a", 1)]

    def open(self, runtime: Runtime) -> Any:
        self.opens += 1
        return opened(None)

    async def work(self, batch: Sequence[int], models: None) -> list[Record]:
        return [{"id": "a"}]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {}


def test_a_busy_run_is_refused_before_any_model_is_loaded(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "hold", str(out)],
        env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    task = _Counting()
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        with pytest.raises(RunBusy, match=f"is being written by pid {child.pid}"):
            run_task(task, out)
    finally:
        child.communicate("\n")
    assert task.opens == 0
    assert run_task(task, out).n_done_now == 1 and task.opens == 1


def test_two_kalma_runs_on_one_out_one_is_refused(data_dir: Path, tmp_path: Path) -> None:
    out, gate = tmp_path / "run", tmp_path / "gate"
    first = subprocess.Popen(
        [sys.executable, str(CHILD), "kalma", str(out), str(data_dir), str(gate)],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_for_run(first, out)
        run_json = (out / "run.json").read_bytes()
        second = subprocess.run(
            [
                sys.executable, "-c", "from citegraph.cli import main; main()",
                "kalma", "run", "--model", "mock", "--limit", "3", "--data-dir", str(data_dir),
                "--out", str(out),
            ],
            env=_env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert second.returncode == 2, second.stderr
        assert f"is being written by pid {first.pid}" in second.stderr
        assert "--out" in second.stderr and "Traceback" not in second.stderr
        assert (out / "run.json").read_bytes() == run_json
        assert not (out / "samples.jsonl").exists()  # the first run is held at its first item
    finally:
        gate.touch()
        _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    ids = [r["id"] for r in _lines(out / "samples.jsonl")]
    assert sorted(ids) == ["specific-0", "specific-1", "specific-2"]  # 3 lines for 3 ids


def test_a_lock_left_by_a_killed_writer_does_not_block_a_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "hold", str(out)],
        env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdout.readline() == "locked\n"
    child.send_signal(signal.SIGKILL)
    child.communicate()
    assert f'"pid": {child.pid}' in (out / ".lock").read_text()  # the stale note stays
    with RunDir.open(out, {"child": True}) as run:
        run.append({"id": "a"})
        assert f'"pid": {os.getpid()}' in (out / ".lock").read_text()
    assert not (out / ".lock").exists()  # a clean close leaves no lock file


def test_a_writer_refused_before_the_note_is_written_waits_for_it(tmp_path: Path) -> None:
    """The holder writes its note just after taking the lock: a writer refused in between
    still names the pid, and one refused by a holder that has just finished takes the lock."""
    from citegraph.runs import _lock

    lock_file = tmp_path / ".lock"
    lock_file.write_text("")
    timer = threading.Timer(0.1, lambda: lock_file.write_text('{"pid": 4242, "started": "x"}'))
    timer.start()
    try:
        note = _lock._read_note(lock_file)
    finally:
        timer.join()
    assert note == {"pid": 4242, "started": "x"}
    assert _lock._busy_message(tmp_path, note).startswith(
        f"run {tmp_path} is being written by pid 4242 (started x)"
    )
    lock_file.unlink()
    assert _lock._read_note(lock_file) is _lock._RELEASED


def test_append_records_where_the_line_really_is(tmp_path: Path) -> None:
    """The offset of an appended line comes from the file, not from a position the handle
    guessed before an append-mode write (another writer's line in between)."""
    with RunDir.open(tmp_path, {"m": 1}) as run:
        run.append({"id": "a", "v": 1})
        with (tmp_path / "samples.jsonl").open("ab") as other:
            other.write(b'{"id": "x", "v": "someone else"}\n')
        run.append({"id": "b", "v": 2})
        assert list(run.newest(["a", "b"])) == [{"id": "a", "v": 1}, {"id": "b", "v": 2}]


# --- edited run.json -------------------------------------------------------------------------


def _kalma_run(data_dir: Path, out: Path) -> None:
    run_kalma(
        out,
        KalmaRunConfig(model="mock"),
        runtime=Runtime(limit=2),
        data_dir=data_dir,
        model=MockChat("I cannot say [NA]."),
    )


def _edit_run_json(out: Path, **changes: Any) -> None:
    info = json.loads((out / "run.json").read_text())
    for key, value in changes.items():
        if key == "config":
            info["config"] = info["config"] | value
        else:
            info[key] = value
    (out / "run.json").write_text(json.dumps(info, indent=2))


def test_an_edited_config_in_run_json_is_refused_everywhere(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _kalma_run(data_dir, out)
    _edit_run_json(out, config={"temperature": 0.7})
    with pytest.raises(DataError, match=r"run.json: was edited.*restore the file.*--overwrite"):
        RunDir.read(out)
    with pytest.raises(DataError, match=r"run.json: was edited"):
        _kalma_run(data_dir, out)  # the resume is refused: no model is asked
    other = tmp_path / "other"
    _kalma_run(data_dir, other)
    for command in (
        ["runs", "report", str(out)],
        ["runs", "export", str(out), "--format", "csv"],
        ["runs", "compare", str(other), str(out)],
    ):
        result = _invoke(*command)
        assert result.exit_code == 2 and "run.json: was edited" in result.output, command
        assert "Traceback" not in result.output
    assert not (out / "export").exists()
    pytest.importorskip("starlette", reason="the viewer extra is not installed")
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    viewer = TestClient(create_app([tmp_path], warm=False), base_url="http://127.0.0.1")
    index = viewer.get("/")
    assert index.status_code == 200 and "run.json: was edited" in index.text
    assert viewer.get("/run?run=0/run").status_code == 422
    assert viewer.get("/run?run=0/other").status_code == 200
    run_kalma(
        out,
        KalmaRunConfig(model="mock"),
        runtime=Runtime(limit=2, overwrite=True),
        data_dir=data_dir,
        model=MockChat("I cannot say [NA]."),
    )
    assert RunDir.read(out).done == {"specific-0", "specific-1"}


def test_an_edited_shard_is_not_merged(tmp_path: Path) -> None:
    for shard in ("s0", "s1"):
        with RunDir.open(tmp_path / shard, {"m": 1}) as run:
            run.append({"id": shard})
    _edit_run_json(tmp_path / "s1", config={"m": 2})
    with pytest.raises(DataError, match=r"s1/run.json: was edited"):
        merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "merged")
    assert not (tmp_path / "merged" / "samples.jsonl").exists()


@pytest.mark.parametrize("task", ["caqa.judge", "bogus.task", "nothing", 7])
def test_an_edited_task_is_a_clear_error_in_report_and_export(
    data_dir: Path, tmp_path: Path, task: object
) -> None:
    out = tmp_path / "run"
    _kalma_run(data_dir, out)
    _edit_run_json(out, task=task)
    for command in (["runs", "report", str(out)], ["runs", "export", str(out), "--format", "csv"]):
        result = _invoke(*command)
        assert result.exit_code == 2, (command, result.output)
        assert "run.json" in result.output and "names task" in result.output
        assert "Traceback" not in result.output
    assert not (out / "export").exists()  # no 0-row export


# --- a full disk -----------------------------------------------------------------------------


def test_a_full_disk_is_one_line_naming_the_file_and_loses_nothing(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    real_write = os.write
    calls = {"n": 0}

    def write(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 2:  # the second record: half of it, then the disk is full
            real_write(fd, bytes(data)[:10])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr("citegraph.runs._rundir.os.write", write)
    runtime = Runtime(limit=3, concurrency=1)
    with pytest.raises(DataError) as caught:
        run_kalma(
            out,
            KalmaRunConfig(model="mock"),
            runtime=runtime,
            data_dir=data_dir,
            model=MockChat("x"),
        )
    message = str(caught.value)
    assert message.startswith(f"{out / 'samples.jsonl'}: cannot write (No space left on device)")
    assert "free some space" in message
    chain = "".join(traceback.format_exception(caught.value))
    assert "no running event loop" not in chain and "During handling" not in chain
    kept = [r["id"] for r in _lines(out / "samples.jsonl")]  # whole lines only
    assert "specific-0" in kept and "specific-1" not in kept  # its torn half was taken back
    monkeypatch.undo()
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    again = run_kalma(
        out, KalmaRunConfig(model="mock"), runtime=runtime, data_dir=data_dir, model=MockChat("x")
    )
    assert (again.n_resumed, again.n_done_now) == (len(kept), 3 - len(kept))
    assert sorted(r["id"] for r in _lines(out / "samples.jsonl")) == [
        "specific-0", "specific-1", "specific-2",
    ]  # fmt: skip


def test_a_full_disk_for_metrics_json_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(path: Path, data: str | bytes) -> None:
        path.with_name(path.name + ".tmp").write_text("partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with RunDir.open(tmp_path, {"m": 1}) as run:
        run.append({"id": "a"})
        monkeypatch.setattr("citegraph.runs._runfile.atomic_write", full)
        with pytest.raises(DataError, match=r"metrics.json: cannot write \(No space left"):
            run.write_metrics({"x": 1})
    assert not (tmp_path / "metrics.json.tmp").exists()
    assert [r["id"] for r in _lines(tmp_path / "samples.jsonl")] == ["a"]


# --- ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ['{"status": "ok"}', '{"id": 7}', '{"id": ""}', '{"id": null}'])
def test_a_record_without_a_string_id_is_named_not_counted(tmp_path: Path, line: str) -> None:
    with RunDir.open(tmp_path, {"m": 1}) as run:
        run.append({"id": "a"})
    with (tmp_path / "samples.jsonl").open("a") as fh:
        fh.write(line + "\n")
    with pytest.raises(DataError, match=r"samples.jsonl:2, field 'id': a record without a str"):
        RunDir.read(tmp_path)
    with pytest.raises(DataError, match=r"samples.jsonl:2, field 'id'"):
        RunDir.open(tmp_path, {"m": 1})


def test_append_refuses_a_record_without_a_string_id(tmp_path: Path) -> None:
    with RunDir.open(tmp_path, {"m": 1}) as run:
        with pytest.raises(DataError, match=r"samples.jsonl, field 'id': .* got 3; not written"):
            run.append({"id": 3})
        deep: object = "x"
        for _ in range(5000):
            deep = [deep]
        with pytest.raises(DataError, match=r"record \"b\" cannot be written .*too deeply"):
            run.append({"id": "b", "v": deep})
    assert not (tmp_path / "samples.jsonl").exists()
