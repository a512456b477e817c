"""Decoding user files as UTF-8, with errors that say where the first bad byte is.

Every reader of user files (JSONL, JSON, CSV, TSV) reads bytes and decodes them here, so a binary
or non-UTF-8 file (say, saved as Windows-1252) is one :class:`DataError` naming the file, the line
and the byte offset instead of a ``UnicodeDecodeError`` traceback. A UTF-8 byte-order mark at the
start of a file (editors and Excel write one) is dropped.

Any text goes out safely too. Python text can hold a lone surrogate (``"\\ud800"``: JSON's
``\\ud800`` escape, read from a model's reply or a user's file, decodes to one), which UTF-8
cannot encode. :func:`json_text` writes such text as JSON's own escape, so a record that holds
one is stored and read back unchanged; :func:`encodable` replaces it with U+FFFD for every place
that shows text (terminal, HTML, plots, CSV and Parquet cells).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from citegraph.errors import DataError, DataNotFoundError

BOM = b"\xef\xbb\xbf"

#: A lone surrogate: a code point UTF-8 cannot encode.
_SURROGATE = re.compile("[\ud800-\udfff]")

#: What a user file must be, for the error message.
_EXPECTED = "expected UTF-8 text (re-save the file as UTF-8)"


def not_utf8_error(
    raw: bytes, column: int, path: Path, *, line: int, line_offset: int
) -> DataError:
    """The :class:`DataError` for bytes that are not UTF-8.

    Args:
        raw: The bytes of the line.
        column: The index in ``raw`` of the first byte that does not decode.
        path: The file.
        line: The line (1-based) the bytes are on.
        line_offset: The byte offset of the line's start in the file.
    """
    where = f"byte offset {line_offset + column}, column {column + 1}"
    byte = f"byte 0x{raw[column]:02x}" if column < len(raw) else "truncated character"
    return DataError(f"not UTF-8: {byte} at {where}; {_EXPECTED}", path=path, line=line)


def decode_text(data: bytes, path: Path) -> str:
    """``data`` (a whole file) as text, a leading byte-order mark dropped.

    Raises:
        DataError: the bytes are not UTF-8 (names the line and byte offset).
    """
    start = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = start + exc.start
        line_start = data.rfind(b"\n", 0, bad) + 1
        line = data.count(b"\n", 0, bad) + 1
        column = bad - line_start
        raw = data[line_start : bad + 1]
        raise not_utf8_error(raw, column, path, line=line, line_offset=line_start) from None


def read_text(path: Path) -> str:
    """The text of a UTF-8 file (a byte-order mark dropped, line endings kept as they are).

    Raises:
        DataError: the file is not UTF-8 (names the line and byte offset), or cannot be read.
    """
    try:
        data = path.read_bytes()
    except IsADirectoryError as exc:
        raise DataError("is a directory, expected a file", path=path) from exc
    except FileNotFoundError as exc:
        raise DataNotFoundError("file not found", path=path) from exc
    return decode_text(data, path)


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line of a UTF-8 file, without its ``\\n`` or
    ``\\r\\n``. Only ``\\n`` ends a line (a ``\\r`` or U+2028 inside a line stays in it); a
    byte-order mark at the start is dropped.

    Raises:
        DataError: a line is not UTF-8 (names the line and byte offset).
    """
    for lineno, _, text in iter_lines_at(path):
        yield lineno, text


def iter_lines_at(
    path: Path, *, max_bytes: int | None = None, cap_hint: str = ""
) -> Iterator[tuple[int, int, str]]:
    """:func:`iter_lines` with each line's byte offset in the file: ``(line_number, offset,
    text)``, so that a line can be read again alone (:func:`read_line_at`).

    Args:
        path: The file.
        max_bytes: When given, a line of more bytes is refused after reading at most
            ``max_bytes + 1`` of them (a huge line is never read whole).
        cap_hint: Added to the message of a line over ``max_bytes`` (how to raise the cap).

    Raises:
        DataError: a line is not UTF-8 (names the line and byte offset), or is longer than
            ``max_bytes``.
    """
    offset = 0
    with path.open("rb") as handle:
        lineno = 0
        while raw := handle.readline(-1 if max_bytes is None else max_bytes + 1):
            lineno += 1
            if max_bytes is not None and len(raw.removesuffix(b"\n")) > max_bytes:
                raise DataError(
                    f"the line is longer than {max_bytes:,} bytes, the cap per line{cap_hint}",
                    path=path,
                    line=lineno,
                )
            yield lineno, offset, _line_text(raw, path, lineno, offset)
            offset += len(raw)


def read_line_at(handle: BinaryIO, path: Path, offset: int, lineno: int) -> str:
    """The line of ``path`` that starts at byte ``offset`` (line ``lineno``), read through the
    open ``handle`` as :func:`iter_lines_at` gave it.

    Raises:
        DataError: the line is not UTF-8 (names the line and byte offset).
    """
    handle.seek(offset)
    return _line_text(handle.readline(), path, lineno, offset)


def _line_text(raw: bytes, path: Path, lineno: int, offset: int) -> str:
    start = len(BOM) if offset == 0 and raw.startswith(BOM) else 0
    try:
        text = raw[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        column = start + exc.start
        raise not_utf8_error(raw, column, path, line=lineno, line_offset=offset) from None
    return text.removesuffix("\n").removesuffix("\r")


def file_stamp(path: Path) -> tuple[int, int]:
    """``(size, modification time in ns)`` of ``path``: what changes when the file is written."""
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


def check_unchanged(path: Path, stamp: tuple[int, int]) -> None:
    """Refuse a file written since it was checked (its :func:`file_stamp` was ``stamp``): a
    reader holding its offsets would read the wrong bytes.

    Raises:
        DataError: the file changed.
    """
    if file_stamp(path) != stamp:
        raise DataError(
            "the file changed while the run was using it; start the run again", path=path
        )


def json_text(
    value: object,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
    allow_nan: bool = True,
) -> str:
    """``value`` as JSON text that any UTF-8 writer can write: non-ASCII text kept as it is, a
    lone surrogate written as its ``\\uXXXX`` escape (``json.loads`` reads it back unchanged).

    Args:
        value: Anything :func:`json.dumps` takes.
        indent: As for :func:`json.dumps`.
        sort_keys: As for :func:`json.dumps`.
        separators: As for :func:`json.dumps` (``(",", ":")``: no whitespace).
        allow_nan: As for :func:`json.dumps` (False: NaN and infinities raise ValueError).
    """
    text = json.dumps(
        value,
        ensure_ascii=False,
        indent=indent,
        sort_keys=sort_keys,
        separators=separators,
        allow_nan=allow_nan,
    )
    return _SURROGATE.sub(_escape_surrogate, text)


def json_bytes(value: object, *, indent: int | None = None, sort_keys: bool = False) -> bytes:
    """:func:`json_text` encoded as UTF-8 (never fails on a lone surrogate)."""
    return json_text(value, indent=indent, sort_keys=sort_keys).encode("utf-8")


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so that it can be shown
    (printed, rendered as HTML, plotted, written to a CSV or Parquet cell)."""
    return _SURROGATE.sub("\ufffd", text)


#: What :func:`printable` rewrites: C0 controls but tab and newline, DEL, C1 controls, surrogates.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` safe to show on a terminal or a page: a CRLF becomes a newline, each other
    control character (ESC, CR, BEL, backspace, C1...) its visible ``\\xNN`` escape, each lone
    surrogate U+FFFD. So no text can drive a terminal (an escape sequence: a hyperlink, a title
    change, a cursor move), even one a saved page is printed to, or stop a print."""
    if not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(_visible, text.replace("\r\n", "\n"))


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return "\ufffd" if "\ud800" <= char <= "\udfff" else f"\\x{ord(char):02x}"


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
