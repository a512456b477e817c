"""runs export: a small task's run as Parquet, CSV and JSONL tables, read back exactly."""

from __future__ import annotations

import csv
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from pydantic import BaseModel, ConfigDict

from citegraph.cli import main
from citegraph.errors import ConfigError, DataError, DataNotFoundError, MissingDependency
from citegraph.runs import (
    FAILED,
    Presenter,
    Record,
    Runtime,
    SampleSummary,
    Task,
    export_run,
    register_task,
    run_sync,
    run_task_async,
)


class ExportConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = 4


class ExportPresenter(Presenter):
    """The default summary plus a ``has-cites`` tag; one ``cites`` table."""

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        summary = super().summary(record)
        if record.get("cites"):
            return summary.model_copy(update={"tags": [*summary.tags, "has-cites"]})
        return summary

    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        return {
            "cites": [
                {"n": i, "triple": c["triple"], "ok": c["ok"], "weight": c["weight"]}
                for i, c in enumerate(record.get("cites") or [])
            ]
        }


# What each item's record holds: an int and a float in ``value`` (a float column), a str and an
# int in ``note`` (a string column), a None (null), an unmeasured score; item 3 always fails.
_RECORDS: dict[int, Record] = {
    0: {
        "question": "q0",
        "value": 1,
        "note": "a",
        "flag": True,
        "scores": {"f1": 1, "recall": 0.5},
        "cites": [{"triple": "a|b|c", "ok": True, "weight": 2}],
    },
    1: {
        "question": "q1",
        "value": 2.5,
        "note": 3,
        "flag": None,
        "scores": {"f1": None},
        "cites": [
            {"triple": "d|e|f", "ok": False, "weight": 0.5},
            {"triple": "g|h|i", "ok": None, "weight": None},
        ],
    },
    2: {"question": "q2", "value": 4, "scores": {"precision": 0.25}},
}


@register_task
class ExportTask(Task[int, set[int]]):
    """Gives the records above; an item in the ``fail`` set gives a failed record."""

    name: ClassVar[str] = "testing.export"
    presenter: ClassVar[type[Presenter]] = ExportPresenter

    def __init__(self, config: ExportConfig, fail: set[int]) -> None:
        self.config = config
        self.fail = fail

    def items(self) -> Sequence[tuple[str, int]]:
        return [(f"s-{i}", i) for i in range(self.config.n)]

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[set[int]]:
        yield self.fail

    def open(self, runtime: Runtime) -> Any:
        return self._open()

    async def work(self, batch: Sequence[int], models: set[int]) -> list[Record]:
        return [
            {"id": f"s-{i}", "status": FAILED, "error": "boom"}
            if i in models
            else {"id": f"s-{i}", **_RECORDS[i]}
            for i in batch
        ]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(records)}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run whose item 2 failed first, then succeeded (two records), whose item 3 failed
    twice, and whose last line is torn (a run killed mid-write)."""
    out = tmp_path / "run"
    run_sync(run_task_async(ExportTask(ExportConfig(), {2, 3}), out))
    run_sync(run_task_async(ExportTask(ExportConfig(), {3}), out))
    with (out / "samples.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"id": "s-9", "value": ')
    return out


def _run_id(run_dir: Path) -> str:
    return json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["run_id"]


def _snapshot(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


#: Run-level columns; this task's config names no model, mode, NLI / LM model, dtype or seed.
RUN_COLUMNS = ["run_id", "task", "model", "mode", "nli_model", "lm_model", "dtype", "seed"]
NO_SETTINGS = dict.fromkeys(RUN_COLUMNS[2:])
SAMPLE_COLUMNS = [
    *RUN_COLUMNS, "id", "status", "title", "tags",
    "score_f1", "score_recall", "score_precision",
    "question", "value", "note", "flag", "error",
]  # fmt: skip
CITE_COLUMNS = [*RUN_COLUMNS, "sample_id", "n", "triple", "ok", "weight"]


def _expected(run_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    base = {"run_id": run_id, "task": "testing.export"} | NO_SETTINGS
    samples = [
        base | {"id": "s-0", "status": "ok", "title": "q0", "tags": ["has-cites"],
                "score_f1": 1.0, "score_recall": 0.5, "score_precision": None,
                "question": "q0", "value": 1.0, "note": "a", "flag": True, "error": None},
        base | {"id": "s-1", "status": "ok", "title": "q1", "tags": ["unmeasured", "has-cites"],
                "score_f1": None, "score_recall": None, "score_precision": None,
                "question": "q1", "value": 2.5, "note": "3", "flag": None, "error": None},
        base | {"id": "s-2", "status": "ok", "title": "q2", "tags": [],
                "score_f1": None, "score_recall": None, "score_precision": 0.25,
                "question": "q2", "value": 4.0, "note": None, "flag": None, "error": None},
        base | {"id": "s-3", "status": "failed", "title": "s-3", "tags": ["failed"],
                "score_f1": None, "score_recall": None, "score_precision": None,
                "question": None, "value": None, "note": None, "flag": None, "error": "boom"},
    ]  # fmt: skip
    cites = [
        base | {"sample_id": "s-0", "n": 0, "triple": "a|b|c", "ok": True, "weight": 2.0},
        base | {"sample_id": "s-1", "n": 0, "triple": "d|e|f", "ok": False, "weight": 0.5},
        base | {"sample_id": "s-1", "n": 1, "triple": "g|h|i", "ok": None, "weight": None},
    ]
    return samples, cites


#: Every export format (parquet needs pyarrow, the export extra).
FORMATS = [pytest.param("parquet", marks=pytest.mark.needs("pyarrow")), "csv", "jsonl"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_leaves_the_run_directory_as_it_was(run_dir: Path, tmp_path: Path, fmt: str) -> None:
    before = _snapshot(run_dir)
    written = export_run(run_dir, tmp_path / "out", fmt)
    assert _snapshot(run_dir) == before  # the torn line is skipped, not repaired
    assert list(written) == ["samples", "cites"]
    assert written["samples"] == tmp_path / "out" / f"samples.{fmt}"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        f"cites.{fmt}",
        f"samples.{fmt}",
    ]


def test_jsonl_rows_columns_and_types(run_dir: Path, tmp_path: Path) -> None:
    written = export_run(run_dir, tmp_path / "out", "jsonl")
    samples, cites = _expected(_run_id(run_dir))
    rows = [json.loads(line) for line in written["samples"].read_text("utf-8").splitlines()]
    assert rows == samples  # s-2's newest record (ok) won over its failed one ("error": "boom")
    assert [list(r) for r in rows] == [SAMPLE_COLUMNS] * 4
    assert isinstance(rows[0]["value"], float)  # an int in a column that also holds 2.5
    assert rows[1]["note"] == "3"  # an int in a column that also holds "a"
    rows = [json.loads(line) for line in written["cites"].read_text("utf-8").splitlines()]
    assert rows == cites
    assert [list(r) for r in rows] == [CITE_COLUMNS] * 3


def test_parquet_schema_and_rows(run_dir: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    written = export_run(run_dir, tmp_path / "out", "parquet")
    samples, cites = _expected(_run_id(run_dir))
    table = pq.read_table(written["samples"])
    assert table.column_names == SAMPLE_COLUMNS
    types = dict(zip(table.schema.names, table.schema.types, strict=True))
    assert types["tags"] == pa.list_(pa.string())
    assert types["value"] == pa.float64()
    assert types["note"] == pa.string()
    assert types["flag"] == pa.bool_()
    assert types["score_f1"] == types["score_precision"] == pa.float64()
    assert table.to_pylist() == samples
    table = pq.read_table(written["cites"])
    assert table.column_names == CITE_COLUMNS
    assert table.schema.field("n").type == pa.int64()
    assert table.schema.field("weight").type == pa.float64()
    assert table.to_pylist() == cites


def test_csv_rows_with_joined_tags_and_empty_nulls(run_dir: Path, tmp_path: Path) -> None:
    written = export_run(run_dir, tmp_path / "out", "csv")
    with written["samples"].open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    run_id = _run_id(run_dir)
    assert rows[0] == SAMPLE_COLUMNS
    b = [run_id, "testing.export", "", "", "", "", "", ""]
    assert rows[1:] == [
        [*b, "s-0", "ok", "q0", "has-cites", "1.0", "0.5", "", "q0", "1.0", "a", "true", ""],
        [*b, "s-1", "ok", "q1", "unmeasured;has-cites", "", "", "", "q1", "2.5", "3", "", ""],
        [*b, "s-2", "ok", "q2", "", "", "", "0.25", "q2", "4.0", "", "", ""],
        [*b, "s-3", "failed", "s-3", "failed", "", "", "", "", "", "", "", "boom"],
    ]  # fmt: skip
    with written["cites"].open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows == [
        CITE_COLUMNS,
        [*b, "s-0", "0", "a|b|c", "true", "2.0"],
        [*b, "s-1", "0", "d|e|f", "false", "0.5"],
        [*b, "s-1", "1", "g|h|i", "", ""],
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_run_without_records_gives_an_empty_samples_table(tmp_path: Path, fmt: str) -> None:
    run_sync(run_task_async(ExportTask(ExportConfig(n=0), set()), tmp_path / "run"))
    written = export_run(tmp_path / "run", tmp_path / "out", fmt)
    assert list(written) == ["samples"]
    text = written["samples"].read_text("utf-8") if fmt != "parquet" else ""
    if fmt == "csv":
        assert text == ",".join(SAMPLE_COLUMNS[:12]) + "\n"  # read_text turns \r\n into \n
    elif fmt == "jsonl":
        assert text == ""
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(written["samples"])
        assert table.num_rows == 0
        assert table.column_names == SAMPLE_COLUMNS[:12]
        assert str(table.schema.field("tags").type) == "list<element: string>"
        assert str(table.schema.field("seed").type) == "int64"


def test_a_directory_without_run_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="not a run directory") as caught:
        export_run(tmp_path, tmp_path / "out", "csv")
    assert str(tmp_path) in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_an_unknown_format_is_refused(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown export format 'xlsx'.*parquet, csv, jsonl"):
        export_run(run_dir, tmp_path / "out", "xlsx")


def test_missing_pyarrow_names_the_extra(run_dir: Path, tmp_path: Path, monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "pyarrow":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(MissingDependency, match=r"pip install 'citegraph\[export\]'"):
        export_run(run_dir, tmp_path / "out", "parquet")
    assert not (tmp_path / "out").exists()


@pytest.mark.needs("pyarrow")
def test_cli_runs_export(run_dir: Path, tmp_path: Path) -> None:
    before = _snapshot(run_dir)
    result = CliRunner().invoke(main, ["runs", "export", str(run_dir), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    out = run_dir / "export"
    assert f"Wrote {out / 'samples.jsonl'} (4 rows)" in result.output
    assert f"Wrote {out / 'cites.jsonl'} (3 rows)" in result.output
    after = _snapshot(run_dir)
    assert {k: v for k, v in after.items() if not k.startswith("export/")} == before

    result = CliRunner().invoke(
        main, ["runs", "export", str(run_dir), "--out", str(tmp_path / "p")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p" / "samples.parquet").is_file()  # parquet by default

    result = CliRunner().invoke(main, ["runs", "export", str(tmp_path / "p")])
    assert result.exit_code == 2
    assert "not a run directory" in result.output
    result = CliRunner().invoke(main, ["runs", "export", str(run_dir), "--format", "xlsx"])
    assert result.exit_code == 2
    assert "xlsx" in result.output


class _Broken(ExportPresenter):
    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        return {"cites": [{"weight": 1 / len(record.get("cites") or [])}]}


class _Clashing(ExportPresenter):
    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        return {"samples": []}


def test_a_presenter_that_fails_is_named_with_the_record(
    run_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(ExportTask, "presenter", _Broken)
    with pytest.raises(DataError, match=r"samples.jsonl: the testing.export presenter cannot read "
                       r"record 's-2': division by zero"):  # fmt: skip
        export_run(run_dir, tmp_path / "out", "jsonl")
    monkeypatch.setattr(ExportTask, "presenter", _Clashing)
    with pytest.raises(ConfigError, match="gives a table named 'samples'"):
        export_run(run_dir, tmp_path / "out", "jsonl")
    assert not (tmp_path / "out").exists()


def test_run_columns_come_from_run_json() -> None:
    from citegraph.runs._export import run_columns

    info = {
        "run_id": "abc",
        "task": "kalma.run",
        "config": {"model": "local", "model_name": "local/SmolLM2", "mode": "reference",
                   "nli": "hf", "nli_name": "hf:t5", "seed": 3},
        "models": {"nli": {"dtype": "bfloat16"}, "answer": {"dtype": "float32"}},
    }  # fmt: skip
    assert run_columns(info) == {
        "run_id": "abc", "task": "kalma.run", "model": "local/SmolLM2", "mode": "reference",
        "nli_model": "hf:t5", "lm_model": None, "dtype": "nli=bfloat16,answer=float32", "seed": 3,
    }  # fmt: skip
    same = info | {"models": {"nli": {"dtype": "float16"}, "lm": {"dtype": "float16"}}}
    assert run_columns(same)["dtype"] == "float16"
    judge = {"config": {"evaluator": "nli/lexical", "extraction": "paper", "seed": True}}
    assert run_columns(judge, "caqa.judge") | {"run_id": None} == {
        "run_id": None, "task": "caqa.judge", "model": "nli/lexical", "mode": "paper",
        "nli_model": None, "lm_model": None, "dtype": None, "seed": None,
    }  # fmt: skip
