"""``runs export``: a run's records as flat tables (Parquet, CSV or JSONL) for pandas, polars
and DuckDB.

One table, ``samples``, has a row per sample (the newest record of each id): the run-level
columns (:func:`run_columns`: task, run id, model, mode, NLI and LM models, dtype, seed, from
``run.json``), the :meth:`~citegraph.runs.Presenter.summary` of the record (id, status, title,
tags, one ``score_<name>`` column per score), the task's per-sample columns
(:meth:`~citegraph.runs.Presenter.export_columns`: the counts every micro and macro figure is
computed from, generation metadata) and the record's other top-level scalars. Every table a
task's presenter gives in :meth:`~citegraph.runs.Presenter.tables` (``citations``, ``facts``...)
becomes one more file, its rows prefixed with the run-level columns and ``sample_id``.

Columns keep the order in which they first appear and one type each: a column holding ints and
floats is float, one holding other mixtures is string (non-strings written as JSON), a missing
value is null. The presenter's :meth:`~citegraph.runs.Presenter.export_schema` declares the
types of its columns, so a table keeps its columns and types when it has no rows. The run
directory is only read (a torn last line of ``samples.jsonl`` is skipped, not repaired), and
its records are checked first as ``runs report`` checks them (a record of another task's shape
is refused, naming its line).
``docs/export.md`` documents the schema.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from citegraph.errors import ConfigError, DataError, MissingDependency
from citegraph.io import encodable, formula_safe, json_text
from citegraph.runs._fit import check_records
from citegraph.runs._merge import read_run_info
from citegraph.runs._present import Presenter
from citegraph.runs._registry import task_of_run
from citegraph.runs._rundir import SAMPLES_FILE, RunDir

ExportFormat = Literal["parquet", "csv", "jsonl"]
#: The formats :func:`export_run` writes, the first the default.
EXPORT_FORMATS: tuple[str, ...] = get_args(ExportFormat)
#: The pip extra that brings pyarrow (Parquet).
EXPORT_EXTRA = "export"
#: The table with one row per sample.
SAMPLES_TABLE = "samples"
#: The run-level columns every table starts with (:func:`run_columns`), and their types.
RUN_COLUMNS: dict[str, str] = {
    "run_id": "string",
    "task": "string",
    "model": "string",
    "mode": "string",
    "nli_model": "string",
    "lm_model": "string",
    "dtype": "string",
    "seed": "int",
}
#: The columns of ``samples`` after the run-level ones (the sample's summary).
SUMMARY_COLUMNS: dict[str, str] = {
    "id": "string",
    "status": "string",
    "title": "string",
    "tags": "list",
}
SAMPLE_COLUMNS = (*RUN_COLUMNS, *SUMMARY_COLUMNS)
#: The first columns of a presenter table's rows.
TABLE_COLUMNS = (*RUN_COLUMNS, "sample_id")

#: Where each run-level column is looked for in ``run.json`` ``config`` (first found wins):
#: ``models.<role>`` is the ``models`` dict of a CONNER score config (resolved names).
_RUN_KEYS: dict[str, tuple[str, ...]] = {
    "model": (
        "model_name",
        "evaluator_name",
        "models.answer_model",
        "model",
        "evaluator",
        "answer_model",
    ),
    "mode": ("mode", "extraction"),
    "nli_model": ("nli_name", "models.nli", "nli"),
    "lm_model": ("lm_name", "models.lm", "lm"),
    "dtype": ("dtype",),
    "seed": ("seed",),
}

_SUFFIX = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
_TABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_INT64 = (-(2**63), 2**63 - 1)


def export_run(
    run_dir: str | Path,
    out_dir: str | Path,
    fmt: str = "parquet",
    *,
    on_table: Callable[[str, Path, int], None] | None = None,
) -> dict[str, Path]:
    """Write the tables of the run in ``run_dir`` to ``out_dir`` (created when missing).

    Args:
        run_dir: A run directory (``run.json``, ``samples.jsonl``); it is only read.
        out_dir: Where the files go: ``samples.<ext>`` and one ``<table>.<ext>`` per table the
            task's presenter gives (an existing file of the same name is replaced).
        fmt: ``parquet`` (needs pyarrow: ``pip install 'citegraph[export]'``), ``csv`` or
            ``jsonl``.
        on_table: Called with ``(table name, file, row count)`` after each file is written.

    Returns:
        Table name -> file written, ``samples`` first.

    Raises:
        ConfigError: ``fmt`` is not a known format, the run names no registered task, or its
            presenter gives a table name that is not a plain file name (or is ``samples``).
        DataNotFoundError: ``run_dir`` is not a run directory (no ``run.json``).
        DataError: ``samples.jsonl`` is corrupt before its last line, a record is not one of
            the task's (another task's shape: refused as ``runs report`` refuses it, naming its
            line; :func:`~citegraph.runs.check_records`), or the task's presenter cannot read a
            record.
        MissingDependency: Parquet was asked for and pyarrow is not installed.
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(
            f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}"
        )
    if fmt == "parquet":
        _pyarrow()  # fail before reading anything
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    info = read_run_info(run_dir)
    task = task_of_run(info, where=run_dir)
    run = RunDir(run_dir, info)  # only read: a torn last line is left out, not removed
    check_records(task, run.records, info, run_dir / SAMPLES_FILE)  # as runs report does
    tables = _collect(run, task.name, task.presenter.for_run(info))
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, table in tables.items():
        path = out_dir / f"{name}{_SUFFIX[fmt]}"
        _WRITERS[fmt](path, table)
        written[name] = path
        if on_table is not None:
            on_table(name, path, len(table.rows))
    return written


def run_columns(info: Mapping[str, Any], task: str | None = None) -> dict[str, Any]:
    """The run-level columns of every exported row, from a run's ``run.json``: ``run_id``,
    ``task``, ``model`` (the answering model, evaluator or judge), ``mode`` (``paper`` /
    ``reference``; a CAQA judge's ``extraction``), ``nli_model``, ``lm_model``, ``dtype`` (of the
    local models, ``role=dtype`` joined by ``,`` when they differ) and ``seed``; ``None`` where
    the run has no such setting."""
    config = info.get("config")
    config = config if isinstance(config, Mapping) else {}
    models = config.get("models")
    models = models if isinstance(models, Mapping) else {}
    out: dict[str, Any] = {"run_id": info.get("run_id"), "task": task or info.get("task")}
    for column, keys in _RUN_KEYS.items():
        found = (
            models.get(key[len("models.") :]) if key.startswith("models.") else config.get(key)
            for key in keys
        )
        value = next((v for v in found if v is not None and v != ""), None)
        out[column] = value if value is None or column == "seed" else str(value)
    if not isinstance(out["seed"], int) or isinstance(out["seed"], bool):
        out["seed"] = None
    out["dtype"] = _dtypes(info.get("models")) or out["dtype"]
    return out


def _dtypes(placed: Any) -> str | None:
    """The dtype of the run's local models (``run.json`` ``models``): one dtype when they share
    it, else ``role=dtype`` of each."""
    if not isinstance(placed, Mapping):
        return None
    found = {
        str(role): str(p["dtype"])
        for role, p in placed.items()
        if isinstance(p, Mapping) and p.get("dtype")
    }
    if not found:
        return None
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return ",".join(f"{role}={dtype}" for role, dtype in found.items())


def _collect(run: RunDir, task: str, presenter: type[Presenter]) -> dict[str, _Table]:
    """The tables of a run, ``samples`` first, from the newest record of each id (read one at a
    time); the tables the presenter declares are there even when no record gives a row."""
    samples_file, info = run.path / SAMPLES_FILE, run.info
    base = run_columns(info, task)
    schema = presenter.export_schema()
    for name in schema:
        _check_table_name(name, task, samples_ok=True)
    samples = _Table(RUN_COLUMNS | SUMMARY_COLUMNS | schema.get(SAMPLES_TABLE, {}))
    tables: dict[str, _Table] = {SAMPLES_TABLE: samples}
    for name, columns in schema.items():
        if name != SAMPLES_TABLE:
            tables[name] = _Table(RUN_COLUMNS | {"sample_id": "string"} | columns)
    for record in run.records:  # rows are kept, records are let go as we go
        key = record["id"]
        try:
            summary = presenter.summary(record)
            columns = presenter.export_columns(record, info)
            extra = presenter.tables(record)
        except Exception as exc:
            raise DataError(
                f"the {task} presenter cannot read record {key!r}: {exc}", path=samples_file
            ) from exc
        row: dict[str, Any] = base | {
            "id": summary.id,
            "status": summary.status,
            "title": summary.title,
            "tags": list(summary.tags),
        }
        for score, number in summary.scores.items():
            samples.scores.setdefault(f"score_{score}")
            row.setdefault(f"score_{score}", number)
        for column, value in columns.items():
            if column.startswith("score_"):
                samples.scores.setdefault(column)
                row[column] = value  # the task's own score replaces the summary's
            else:
                row.setdefault(column, value)
        for name, value in record.items():
            if _is_scalar(value) and name not in row:
                row[name] = value
        samples.add(row)
        for name, rows in extra.items():
            if name not in tables or name == SAMPLES_TABLE:
                _check_table_name(name, task)
                tables[name] = _Table(RUN_COLUMNS | {"sample_id": "string"})
            for extra_row in rows:
                tables[name].add(base | {"sample_id": summary.id} | dict(extra_row))
    return tables


def _check_table_name(name: str, task: str, *, samples_ok: bool = False) -> None:
    if (name == SAMPLES_TABLE and not samples_ok) or not _TABLE_NAME.fullmatch(name):
        raise ConfigError(
            f"the {task} presenter gives a table named {name!r} (a table name is "
            f"letters, digits, _ and -, and not {SAMPLES_TABLE!r})"
        )


#: The kinds of value a declared column type takes as it is (others fall back to inference).
_DECLARED_FITS = {
    "int": {"int"},
    "float": {"int", "float"},
    "bool": {"bool"},
    "list": {"list"},
}


class _Table:
    """Rows of one table, its columns in order of first appearance and their kinds; the
    ``declared`` columns (name -> type) come first, typed as declared even with no rows."""

    def __init__(self, declared: Mapping[str, str]) -> None:
        self.rows: list[dict[str, Any]] = []
        self.declared = dict(declared)
        self.first = tuple(n for n in declared if not n.startswith("score_"))
        self.kinds: dict[str, set[str]] = {name: set() for name in self.first}
        self.scores: dict[str, None] = {  # score columns (always float), in order
            name: None for name in declared if name.startswith("score_")
        }
        for name in self.scores:
            self.kinds[name] = set()

    def add(self, row: dict[str, Any]) -> None:
        for name, value in row.items():
            self.kinds.setdefault(str(name), set()).add(_kind(value))
        self.rows.append(row)

    def columns(self) -> list[tuple[str, str]]:
        """``(name, type)`` of each column, types ``null``, ``bool``, ``int``, ``float``,
        ``string`` or ``list`` (of strings): the first columns, the score columns (always
        float), then the others in order of first appearance."""
        rest = [name for name in self.kinds if name not in self.scores]
        names = [*rest[: len(self.first)], *self.scores, *rest[len(self.first) :]]
        return [(name, self._type(name)) for name in names]

    def _type(self, name: str) -> str:
        kinds = self.kinds[name] - {"null"}
        if name in self.scores and kinds <= {"int", "float"}:
            return "float"
        declared = self.declared.get(name)
        if declared == "string":
            return "string"
        if declared is not None and kinds <= _DECLARED_FITS.get(declared, set()):
            return declared
        if not kinds:
            return "null"
        if kinds == {"int", "float"}:
            return "float"
        if len(kinds) == 1 and (kind := next(iter(kinds))) in ("bool", "int", "float", "list"):
            return kind
        return "string"

    def typed_rows(self) -> list[dict[str, Any]]:
        """The rows with every column, each value converted to its column's type (in place)."""
        columns = self.columns()
        for i, row in enumerate(self.rows):
            self.rows[i] = {name: _convert(row.get(name), kind) for name, kind in columns}
        return self.rows


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if _INT64[0] <= value <= _INT64[1] else "bigint"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "list"
    return "json"


def _convert(value: Any, kind: str) -> Any:
    if value is None or kind == "null":
        return None
    if kind == "float":
        return float(value)
    if kind == "string" and not isinstance(value, str):
        return json_text(value)
    return value


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _write_jsonl(path: Path, table: _Table) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in table.typed_rows():
            fh.write(json_text(row) + "\n")
    tmp.replace(path)


def _write_csv(path: Path, table: _Table) -> None:
    names = [name for name, _ in table.columns()]
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        for row in table.typed_rows():
            writer.writerow(_csv_cell(row[name]) for name in names)
    tmp.replace(path)


def _csv_cell(value: Any) -> str:
    """A typed value as its CSV cell: numbers as numbers, text (a string, a list joined with
    ``;``) through :func:`~citegraph.io.formula_safe` (no formula, no lone surrogate)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return formula_safe(";".join(value))
    if isinstance(value, str):
        return formula_safe(value)
    return str(value)


def _parquet_cell(value: Any) -> Any:
    """A typed value as its Parquet cell: text kept as it is (Parquet has no formulas) but for
    lone surrogates, written as U+FFFD (:func:`~citegraph.io.encodable`)."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value


def _write_parquet(path: Path, table: _Table) -> None:
    pa = _pyarrow()
    import pyarrow.parquet as pq

    types = {
        "null": pa.null(),
        "bool": pa.bool_(),
        "int": pa.int64(),
        "float": pa.float64(),
        "string": pa.string(),
        "list": pa.list_(pa.string()),
    }
    schema = pa.schema([(name, types[kind]) for name, kind in table.columns()])
    rows = table.typed_rows()
    for row in rows:
        for name, value in row.items():
            row[name] = _parquet_cell(value)
    arrow = pa.Table.from_pylist(rows, schema=schema)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(arrow, tmp)
    tmp.replace(path)


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as exc:
        raise MissingDependency("pyarrow", EXPORT_EXTRA, cause=exc) from exc
    return pyarrow


_WRITERS: dict[str, Callable[[Path, _Table], None]] = {
    "parquet": _write_parquet,
    "csv": _write_csv,
    "jsonl": _write_jsonl,
}
