"""Fuzz the run directory with hostile records and text, edited files and concurrent writers
(issue 27).

A seeded generator makes records holding lone surrogates, NUL, U+2028, huge strings, deep
nesting and ids of the wrong type, and feeds them through :meth:`RunDir.append`, a read, a
resume, ``metrics.json`` (``finalize``) and ``citegraph runs report``; it edits ``run.json`` and
tears ``samples.jsonl``; and it races pairs of real ``kalma run`` processes on one ``--out``.
Every step either works or ends in citegraph's own error type (never a traceback), and no
record is lost or duplicated. Counts are asserted; a failure names the seed's case.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from _fuzz import fuzz_size
from citegraph.cli import main
from citegraph.errors import CitegraphError, DataError
from citegraph.runs import Record, RunDir, Task, finalize, register_task

SEED = 27
N_RUNS = fuzz_size(12, 40)
RECORDS_PER_RUN = 40
N_EDITS = fuzz_size(90, 300)
N_PAIRS = fuzz_size(2, 4)
SRC = Path(__file__).resolve().parents[2] / "src"

HOSTILE = [
    "\ud800", "\udfff", "a\udc80b", "\udbff\ud800", "\x00", "nul\x00byte", "\u2028", "\u2029",
    "\r", "\r\n", "\n", "\ufeff", "\u202e", "😀", "\\", '"', "\\ud800", "$x^2$", "[/]", "[link=x]",
    "<script>", "=1+1", "\x1b[31m", "é", "\U0010ffff",
]  # fmt: skip


@register_task
class EchoTask(Task[str, None]):
    """The fuzz's task: records are written by the fuzz itself; its metrics count them and keep
    the hostile text of one (so metrics.json holds it too)."""

    name: ClassVar[str] = "testing.hostile-echo"

    def items(self) -> Sequence[tuple[str, str]]:
        return []

    def open(self, runtime: Any) -> Any:
        raise NotImplementedError

    async def work(self, batch: Sequence[str], models: None) -> list[Record]:
        raise NotImplementedError

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        texts = [r.get("text") for r in records]
        return {"n": len(records), "text": next((t for t in texts if isinstance(t, str)), None)}


def _text(rng: random.Random) -> str:
    parts = [rng.choice(HOSTILE) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.05:
        parts.append(rng.choice(HOSTILE) * rng.randint(10_000, 200_000))  # huge
    return "".join(parts)


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.4 or depth > 3:
        return _text(rng)
    if roll < 0.5:
        return rng.choice([0, -1, 2**70, 1.5, float("inf"), True, None])
    if roll < 0.55:  # deep nesting, now and then too deep to write
        nested: Any = _text(rng)
        for _ in range(rng.choice([50, 200, 400, 5000])):
            nested = [nested] if rng.random() < 0.5 else {"k": nested}
        return nested
    if roll < 0.75:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.05:
        key: Any = rng.choice([7, None, "", 1.5, ["x"], {"a": 1}, True])
    elif roll < 0.15:
        key = f"x{rng.randint(0, 5)}"  # a repeat: the newest wins
    else:
        key = f"{i}-{_text(rng)[:40]}"
    record: dict[str, Any] = {"id": key, "text": _text(rng), "v": _value(rng)}
    if rng.random() < 0.2:
        record["status"] = "failed"
    if rng.random() < 0.1:
        del record["id"]
    return record


def _fill(run: RunDir, rng: random.Random, n: int) -> tuple[dict[str, dict[str, Any]], int, int]:
    """Append ``n`` hostile records: the newest written record of each id, the lines written
    and the appends refused (all with a :class:`DataError`)."""
    newest: dict[str, dict[str, Any]] = {}
    written = refused = 0
    for i in range(n):
        record = _record(rng, i)
        try:
            run.append(record)
        except DataError:
            refused += 1
            continue
        written += 1
        # as any JSON reader gives it back (a surrogate pair held as two code points reads
        # back as the one character JSON's escapes spell)
        stored = json.loads(json.dumps(record))
        newest[stored["id"]] = stored
    return newest, written, refused


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_hostile_records_are_stored_read_resumed_and_reported(tmp_path: Path) -> None:
    rng = random.Random(f"{SEED}:records")
    tried = written = refused = lost = duplicated = reports = 0
    for case in range(N_RUNS):
        out = tmp_path / str(case)
        config = {"case": case, "label": _text(rng)}
        with RunDir.open(out, config, task=EchoTask.name) as run:
            newest, n_written, n_refused = _fill(run, rng, RECORDS_PER_RUN)
        tried += RECORDS_PER_RUN
        written += n_written
        refused += n_refused
        lines = (out / "samples.jsonl").read_bytes().count(b"\n")
        assert lines == n_written, f"case {case}: {lines} lines for {n_written} appends"
        read = RunDir.read(out)
        got = {r["id"]: r for r in read.records}
        lost += len(set(newest) - set(got))
        duplicated += len(read.ids) - len(set(read.ids))
        for key, record in newest.items():
            assert _same(got.get(key), record), f"case {case}: {key!r} changed"
        failed = {k for k, r in newest.items() if r.get("status") == "failed"}
        with RunDir.open(out, config) as again:  # resume
            assert again.done == set(newest) - failed, f"case {case}"
            metrics = finalize(EchoTask, again)
        assert metrics["n"] == len(newest) and metrics["progress"]["n_failed"] == len(failed)
        stored = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        assert stored["text"] == metrics["text"]  # hostile text kept in metrics.json
        if case % 4 == 0:
            result = CliRunner().invoke(main, ["runs", "report", str(out), "--allow-failures"])
            assert result.exit_code == 0, f"case {case}: {result.output[-500:]}"
            assert "Traceback" not in result.output
            reports += 1
    assert tried == N_RUNS * RECORDS_PER_RUN == written + refused
    assert refused > 0 and written > 0 and reports == N_RUNS // 4
    assert (lost, duplicated) == (0, 0)
    print(f"records tried {tried}: written {written}, refused {refused}, lost 0, duplicated 0")


def _edit(rng: random.Random, out: Path) -> str:
    """One hostile change to a run directory; its name."""
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    kind = rng.choice(
        ["config", "data", "run_id", "task", "drop", "harmless", "tear", "junk-line", "bad-id"]
    )
    if kind == "config":
        info["config"][rng.choice(["case", "label", "new"])] = rng.choice(
            [_text(rng), 1, None, [_text(rng)], {"k": _text(rng)}]
        )
    elif kind == "data":
        info["data"] = {"answers": _text(rng)}
    elif kind == "run_id":
        info["run_id"] = rng.choice(["0" * 64, 7, None, _text(rng)])
    elif kind == "task":
        info["task"] = rng.choice(["kalma.run", "caqa.judge", "bogus.x", "nothing", 7, None, ""])
    elif kind == "drop":
        info.pop(rng.choice(["config", "data", "run_id", "task", "created"]), None)
    elif kind == "harmless":
        info["created"] = _text(rng)
    elif kind == "tear":
        with (out / "samples.jsonl").open("ab") as fh:
            fh.write(b'{"id": "torn", "te')
    elif kind == "junk-line":
        with (out / "samples.jsonl").open("ab") as fh:
            fh.write(rng.choice([b"[1]\n", b"\xff\xfe\n", b'"x"\n', b"[" * 5000 + b"\n"]))
    else:
        with (out / "samples.jsonl").open("ab") as fh:
            fh.write(rng.choice([b'{"id": 7}\n', b'{"v": 1}\n', b'{"id": ""}\n']))
    if kind not in ("tear", "junk-line", "bad-id"):
        text = json.dumps(info, indent=2, ensure_ascii=rng.random() < 0.5)
        (out / "run.json").write_bytes(text.encode("utf-8", "surrogatepass"))
    return kind


def test_edited_and_damaged_run_directories_are_named_never_raised(tmp_path: Path) -> None:
    rng = random.Random(f"{SEED}:edits")
    outcomes: dict[str, int] = {"worked": 0, "refused": 0}
    silent = 0
    for case in range(N_EDITS):
        out = tmp_path / str(case)
        config = {"case": case, "label": _text(rng)}
        if rng.random() < 0.5:
            config["task"] = EchoTask.name  # as Task.run_config records it
        with RunDir.open(out, config, task=EchoTask.name) as run:
            _fill(run, rng, 5)
        kind = _edit(rng, out)
        for step in ("read", "open", "report"):
            try:
                if step == "read":
                    RunDir.read(out)
                elif step == "open":
                    RunDir.open(out, config).close()
                else:
                    result = CliRunner().invoke(main, ["runs", "report", str(out)])
                    assert "Traceback" not in result.output, f"case {case} {kind}: {result.output}"
                    assert result.exit_code in (0, 2, 3), f"case {case} {kind}: {result.output}"
                    if result.exit_code == 0 and kind in ("config", "data", "run_id"):
                        silent += 1
                outcomes["worked"] += 1
            except CitegraphError:
                outcomes["refused"] += 1
            except Exception as exc:
                pytest.fail(f"case {case} ({kind}), {step}: {type(exc).__name__}: {exc}")
    assert sum(outcomes.values()) == N_EDITS * 3
    assert outcomes["refused"] > 0 and outcomes["worked"] > 0
    assert silent == 0  # an edited identity never reports as if nothing happened
    print(f"edits tried {N_EDITS} x 3 steps: {outcomes}, tracebacks 0, silent successes 0")


def test_racing_writers_on_one_out_lose_and_duplicate_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    env = os.environ | {"PYTHONPATH": str(SRC), "CITEGRAPH_CACHE": str(tmp_path / "cache")}
    refused = 0
    for pair in range(N_PAIRS):
        out = tmp_path / f"run{pair}"
        command = [
            sys.executable, "-c", "from citegraph.cli import main; main()",
            "kalma", "run", "--model", "mock", "--limit", "3", "--data-dir", str(data_dir),
            "--out", str(out),
        ]  # fmt: skip
        procs = [
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
            for _ in range(2)
        ]  # fmt: skip
        results = [(p, p.communicate(timeout=300)[1]) for p in procs]
        codes = sorted(p.returncode for p, _ in results)
        assert codes in ([0, 0], [0, 2]), [(p.returncode, err[-800:]) for p, err in results]
        for proc, err in results:
            assert "Traceback" not in err, err[-800:]
            if proc.returncode:
                assert "is being written by pid" in err, err[-800:]
                refused += 1
        lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        ids = [json.loads(line)["id"] for line in lines]
        assert sorted(ids) == ["specific-0", "specific-1", "specific-2"], ids
    print(f"writer pairs {N_PAIRS}: refused {refused}, lost 0, duplicated 0, tracebacks 0")
