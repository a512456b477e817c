"""Issue 39 item 6: what failed is recorded by type (``error_type`` beside the ``error`` text),
and the exit status comes from the type (a table of citegraph's error classes, found along the
MRO); records written before the type was stored keep the exit status their text gave. A busy
run directory (``RunBusy``) is its own error, not a ``ConfigError``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from citegraph import errors
from citegraph.cli import main
from citegraph.cli._exit import MODEL, USAGE, code_for_error
from citegraph.errors import (
    CitegraphError,
    ConfigError,
    DataError,
    EndpointError,
    KGQueryError,
    RunBusy,
    error_class,
    error_type_name,
    exit_status_of,
)
from citegraph.runs import (
    FAILED,
    Record,
    RunDir,
    Runtime,
    Task,
    collecting_runs,
    error_fields,
    failure_kind,
    first_failure,
    opened,
    register_task,
    run_task,
    typed_failure_kind,
)
from citegraph.runs import RunBusy as RunsRunBusy

SRC = Path(__file__).resolve().parents[2] / "src"
CHILD = Path(__file__).with_name("_lock_child.py")


class BadRow(DataError):
    """A task's own input error, defined outside citegraph: still an input error by its MRO."""


class _Options(BaseModel):
    fail_with: str = ""


#: What the task's item "b" fails with, by the name its config gives.
FAILURES: dict[str, BaseException] = {
    "data": DataError("not a string", path="answers.jsonl", line=3, field="answer"),
    "endpoint": EndpointError("HTTP 503 from the server", status=503),
    "kg": KGQueryError("unknown entity 'Q0'"),
    "own": BadRow("row 7 has no answer"),
    "value": ValueError("a bug, say"),
}


@register_task
class FailingTask(Task[str, None]):
    """Two items; ``b`` fails with ``FAILURES[config.fail_with]`` (recorded by type)."""

    name: ClassVar[str] = "testing.failure-types"

    def __init__(self, config: _Options) -> None:
        self.config = config

    def items(self) -> Sequence[tuple[str, str]]:
        return [("a", "a"), ("b", "b")]

    def open(self, runtime: Runtime) -> Any:
        return opened(None)

    async def work(self, batch: Sequence[str], models: None) -> list[Record]:
        records: list[Record] = []
        for item in batch:
            if item == "b" and self.config.fail_with:
                error = FAILURES[self.config.fail_with]
                records.append({"id": item, "status": FAILED, **error_fields(error)})
            else:
                records.append({"id": item, "status": "ok"})
        return records

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {"n_ok": sum(1 for r in records if r.get("status") != FAILED)}


def _run(out: Path, fail_with: str) -> Any:
    with collecting_runs() as runs:
        run_task(FailingTask(_Options(fail_with=fail_with)), out)
    (finished,) = runs.finished
    return finished


def _records(out: Path) -> list[dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


# --- the table -------------------------------------------------------------------------------


def test_every_citegraph_error_has_an_exit_status_found_along_its_mro() -> None:
    classes = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, CitegraphError)
    ]
    assert len(classes) >= 15
    for cls in classes:
        assert exit_status_of(cls) in (USAGE, MODEL), cls
    assert exit_status_of(errors.RateLimited) == MODEL  # by EndpointError
    assert exit_status_of(errors.PromptTooLong) == MODEL  # by ModelError
    assert exit_status_of(errors.DataNotFoundError) == USAGE  # by DataError
    assert exit_status_of(errors.KGQueryError) == USAGE  # by KGError
    assert exit_status_of(errors.MissingDependency) == USAGE  # its own entry, before ModelError
    assert exit_status_of(BadRow) == USAGE
    assert exit_status_of(ValueError) is None  # not citegraph's


@pytest.mark.parametrize(
    "error",
    [
        ConfigError("x"),
        DataError("x"),
        RunBusy("x"),
        KGQueryError("x"),
        errors.MissingDependency("pkg", "extra"),
        EndpointError("x"),
        errors.RateLimited("x"),
        errors.ModelError("x"),
        errors.PromptTooLong("x"),
    ],
)
def test_a_command_stopped_by_an_error_exits_with_its_types_status(error: CitegraphError) -> None:
    expected = MODEL if isinstance(error, EndpointError | errors.ModelError) else USAGE
    if isinstance(error, errors.MissingDependency):
        expected = USAGE  # as before the table: a setup problem
    assert code_for_error(error) == expected == exit_status_of(error)


def test_run_busy_is_its_own_error_not_a_config_error() -> None:
    assert issubclass(RunBusy, CitegraphError)
    assert not issubclass(RunBusy, ConfigError)
    assert RunsRunBusy is RunBusy  # citegraph.runs.RunBusy is the same class
    assert code_for_error(RunBusy("run x is being written by pid 1")) == USAGE


def test_error_type_names_are_module_qualified_and_found_again() -> None:
    assert error_type_name(DataError("x")) == "citegraph.errors.DataError"
    assert error_type_name(ValueError("x")) == "builtins.ValueError"
    assert error_class("citegraph.errors.DataError") is DataError
    assert error_class(error_type_name(BadRow("x"))) is BadRow  # a module imported here
    assert error_class("builtins.ValueError") is None
    # a module not imported here: a citegraph.errors class of the same name, else nothing
    assert error_class("citegraph.gone._mod.EndpointUnavailable") is errors.EndpointUnavailable
    assert error_class("elsewhere.NoSuchError") is None
    assert error_class("not a name") is None and error_class(7) is None


def test_error_fields_write_the_text_as_before_and_the_type() -> None:
    error = DataError("not a string", path="answers.jsonl", line=3, field="answer")
    assert error_fields(error) == {
        "error": "DataError: answers.jsonl:3, field 'answer': not a string",
        "error_type": "citegraph.errors.DataError",
    }
    prefixed = error_fields(EndpointError("down"), prefix="answer model: ")
    assert prefixed["error"] == "answer model: EndpointError: down"


# --- failed records --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fail_with", "kind", "error_type"),
    [
        ("data", "input", "citegraph.errors.DataError"),
        ("endpoint", "model", "citegraph.errors.EndpointError"),
        ("kg", "input", "citegraph.errors.KGQueryError"),
        ("own", "input", f"{__name__}.BadRow"),
        ("value", "model", "builtins.ValueError"),
    ],
)
def test_a_failed_record_carries_its_type_and_the_type_decides(
    tmp_path: Path, fail_with: str, kind: str, error_type: str
) -> None:
    finished = _run(tmp_path / "run", fail_with)
    (failed,) = [r for r in _records(tmp_path / "run") if r["status"] == FAILED]
    assert failed["error_type"] == error_type
    assert failed["error"].startswith(type(FAILURES[fail_with]).__name__ + ": ")
    assert finished.n_failed == 1 and finished.failure is not None
    assert (finished.failure.kind, finished.failure.error_type) == (kind, error_type)


def test_the_type_wins_over_what_the_text_names() -> None:
    # a model's error message may quote an input error's name: the type says what failed
    assert failure_kind("EndpointError: the server said DataError") == "model"
    assert failure_kind("answer model: ConfigError: x") == "input"
    assert typed_failure_kind("citegraph.errors.EndpointError") == "model"
    # the text rule did not know KGError was an input error; the table does
    assert failure_kind("KGQueryError: unknown entity") == "model"
    assert typed_failure_kind("citegraph.errors.KGQueryError") == "input"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("DataError: answers.jsonl:3, field 'answer': not a string", "input"),
        ("DataNotFoundError: no such file", "input"),
        ("answer model: ConfigError: bad option", "input"),
        ("ClientError: model 'x' does not exist", "model"),
        ("answer model: EndpointUnavailable: timed out", "model"),
        ("KGQueryError: unknown entity", "model"),
        ("MissingDependency: spacy is not installed", "model"),
        ("no candidate: every answer failed", "model"),
        ("ValueError: boom", "model"),
    ],
)
def test_an_old_record_without_a_type_maps_as_before(tmp_path: Path, error: str, kind: str) -> None:
    with RunDir.open(tmp_path, {"task_name": "testing.failure-types"}) as run:
        run.append({"id": "a", "status": "ok"})
        run.append({"id": "b", "status": FAILED, "error": error})  # no error_type
        failure = first_failure(run.records)
    assert failure is not None
    assert (failure.id, failure.error, failure.kind, failure.error_type) == ("b", error, kind, None)


def test_runs_report_exits_by_the_records_type_and_by_the_old_text(tmp_path: Path) -> None:
    typed, old = tmp_path / "typed", tmp_path / "old"
    _run(typed, "kg")  # KGQueryError: an input error by type (2)
    _run(old, "kg")
    lines = _records(old)  # the same run as written before types were stored
    for record in lines:
        record.pop("error_type", None)
    (old / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (old / "metrics.json").unlink()
    runner = CliRunner()
    by_type = runner.invoke(main, ["runs", "report", str(typed)])
    assert by_type.exit_code == 2, by_type.output
    assert "1 of 2 items failed (input error); first: b: KGQueryError: " in by_type.stderr
    by_text = runner.invoke(main, ["runs", "report", str(old)])
    assert by_text.exit_code == 3, by_text.output  # what the text rule always gave
    assert "(model or endpoint failure)" in by_text.stderr


# --- a busy run from the command line --------------------------------------------------------


def test_a_busy_run_exits_2_naming_the_writer(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RunDir.open(out, {"child": True}) as run:
        run.append({"id": "a"})
    child = subprocess.Popen(
        [sys.executable, str(CHILD), "hold", str(out)],
        env=os.environ | {"PYTHONPATH": str(SRC)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        result = CliRunner().invoke(main, ["runs", "report", str(out)])
    finally:
        child.communicate("\n")
    assert result.exit_code == 2, result.output
    stderr = " ".join(result.stderr.split())
    assert f"error: run {out} is being written by pid {child.pid}" in stderr
    assert "run citegraph runs report after that" in stderr
    assert "Traceback" not in result.output
