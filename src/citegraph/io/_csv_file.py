"""Reading a CSV file with errors that name the file (missing file, bad encoding, bad CSV) and
the line (:func:`numbered_rows`)."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO, TypeVar

from citegraph.errors import DataError, DataNotFoundError

T = TypeVar("T")


def read_csv_file(path: str | Path, read_rows: Callable[[TextIO, Path], T], *, what: str) -> T:
    """Open ``path`` (UTF-8, a byte-order mark tolerated) and hand it to ``read_rows``.

    Args:
        path: The CSV file.
        read_rows: Reads the open file (``csv.reader`` / ``csv.DictReader``); gets the path for
            its own line-level errors.
        what: What the file is, for the not-found message (``"ratings file"``).

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: the file is not UTF-8 or not valid CSV (plus ``read_rows``' own errors).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{what} not found", path=path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return read_rows(handle, path)
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8: {exc.reason}", path=path) from exc
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path) from exc


def numbered_rows(lines: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """The CSV rows of ``lines`` that hold a non-blank cell, each with the line it starts on
    (1-based; a quoted cell may span lines), for errors that name the line.

    Raises:
        csv.Error: malformed CSV (:func:`read_csv_file` turns it into a :class:`DataError`).
    """
    reader = csv.reader(lines)
    next_line = 1
    for row in reader:
        line, next_line = next_line, reader.line_num + 1
        if any(cell.strip() for cell in row):
            yield line, row
