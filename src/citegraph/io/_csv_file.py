"""Reading a CSV file with errors that name the file (missing file, bad encoding, bad CSV) and
the line (:func:`numbered_rows`); writing a text cell that no spreadsheet reads as a formula and no
terminal obeys (:func:`formula_safe`)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO, TypeVar

from citegraph.errors import DataError, DataNotFoundError
from citegraph.io._text import encodable, read_text

T = TypeVar("T")

#: The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

#: Control characters a CSV cell shows as their visible ``\xNN`` escape: C0 controls but tab,
#: newline and carriage return (which a cell may hold), DEL and C1 controls.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def formula_safe(text: str) -> str:
    """``text`` as a CSV text cell: lone surrogates as U+FFFD (:func:`encodable`), control
    characters (ESC, BEL, NUL, backspace, C1...; not tab, newline or carriage return) as their
    visible ``\\xNN`` escape, so that a file printed to a terminal cannot drive it, and a cell
    that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return prefixed with a single
    quote (``'=1+2``), so that a spreadsheet opening the file shows it as text instead of running
    it as a formula (OWASP's advice against CSV injection). For text cells only: numbers such as
    ``-0.5`` are written as numbers."""
    text = _CONTROLS.sub(_visible, encodable(text))
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def read_csv_file(path: str | Path, read_rows: Callable[[TextIO, Path], T], *, what: str) -> T:
    """Read ``path`` (UTF-8, a byte-order mark tolerated) and hand its text to ``read_rows``.

    Args:
        path: The CSV file.
        read_rows: Reads the text (``csv.reader`` / ``csv.DictReader``), a file-like object
            opened with ``newline=""``; gets the path for its own line-level errors.
        what: What the file is, for the not-found message (``"ratings file"``).

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: the file is not UTF-8 (names the line and byte offset) or not valid CSV
            (plus ``read_rows``' own errors).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{what} not found", path=path)
    handle = _CountingText(read_text(path), newline="")
    try:
        return read_rows(handle, path)
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path, line=handle.lines or None) from exc


class _CountingText(io.StringIO):
    """Text whose iteration counts the lines read, so a ``csv.Error`` names its line."""

    lines = 0

    def __next__(self) -> str:  # type: ignore[override]  # typeshed types _IOBase as bytes
        text = super().__next__()
        self.lines += 1
        return text


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
