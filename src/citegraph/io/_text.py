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

Any text comes in safely as well. A user's input file (answers, gold, questions, a dataset) may
hold a lone surrogate the same way; no model, tokenizer, grammar engine or NLP pipeline takes
one. The readers of such files pass every record through :class:`SurrogateTally`: each lone
surrogate is read as U+FFFD, and the file gets one :class:`TextWarning` saying how many lines
held one and where the first was (line and field). Citegraph's own files (records,
``run.json``) are read back exactly, escapes and all.

A reader reads only a regular file (:func:`regular_file`): a directory, a device (``/dev/zero``,
``/dev/urandom``: endless), a pipe or a socket is refused by name, never read.
"""

from __future__ import annotations

import json
import os
import re
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

from citegraph.errors import DataError, DataNotFoundError

BOM = b"\xef\xbb\xbf"

T = TypeVar("T")

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
        data = regular_file(path).read_bytes()
    except IsADirectoryError as exc:
        raise DataError("is a directory, expected a file", path=path) from exc
    except FileNotFoundError as exc:
        raise DataNotFoundError("file not found", path=path) from exc
    return decode_text(data, path)


def regular_file(path: Path, *, missing: str = "file not found", expected: str = "a file") -> Path:
    """``path``, when it is a regular file (or a link to one): what a reader may read to its
    end. Checked before anything is read, so an endless device is never read.

    Args:
        path: The file.
        missing: The message when nothing is there.
        expected: What the file should be, for the other messages (``an RDF file of the KG``).

    Raises:
        DataNotFoundError: nothing is there.
        DataError: a directory, or not a regular file (a device such as ``/dev/zero`` or
            ``/dev/urandom``, a pipe, a socket), or the path cannot be looked at.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise DataNotFoundError(missing, path=path) from exc
    except OSError as exc:
        raise DataError(f"cannot be read ({exc.strerror or exc})", path=path) from exc
    if stat.S_ISDIR(mode):
        raise DataError(f"is a directory, expected {expected}", path=path)
    if not stat.S_ISREG(mode):
        kind = "a character device" if stat.S_ISCHR(mode) else (
            "a block device" if stat.S_ISBLK(mode) else
            "a pipe" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a file"
        )  # fmt: skip
        raise DataError(f"is not a regular file ({kind}), expected {expected}", path=path)
    return path


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


class TextWarning(UserWarning):
    """An input file held text UTF-8 cannot encode (a lone surrogate: JSON's ``\\ud800``
    escape decodes to one), read with U+FFFD in its place. One per file: how many lines (or
    entries) held one, and the first one's line and field."""


def without_surrogates(value: T, names: tuple[str, ...] = ()) -> tuple[T, str | None]:
    """``value`` (parsed JSON: strings, lists, dicts, numbers) with every lone surrogate in its
    strings, keys included, replaced by U+FFFD; and where the first one was (``answer``,
    ``knowledge[0][2]``), or None when there was none (``value`` is then returned as it is).
    ``names`` name the items of a list ``value`` (``("question", "entities")``).
    """
    text = json.dumps(value, ensure_ascii=False)
    if _SURROGATE.search(text) is None:
        return value, None
    cleaned: T = json.loads(_SURROGATE.sub("\ufffd", text))
    return cleaned, _first_surrogate(value, names)


def _first_surrogate(value: object, names: tuple[str, ...]) -> str:
    """The field of the first string (in document order) holding a lone surrogate."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return _field_name(where, names)
        elif isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                stack += [(sub, (*where, key)), (key, (*where, key))]  # the key first
        elif isinstance(item, list):
            stack.extend((sub, (*where, i)) for i, sub in reversed(list(enumerate(item))))
    return ""


def _field_name(where: tuple[str | int, ...], names: tuple[str, ...]) -> str:
    if not where:
        return "(the value)"
    head, rest = where[0], where[1:]
    if isinstance(head, int) and head < len(names):
        head = names[head]
    parts = [head if isinstance(head, str) else f"[{head}]"]
    for k in rest:
        parts.append(f"[{k}]" if isinstance(k, int) else f"[{json.dumps(k, ensure_ascii=False)}]")
    return encodable("".join(parts))


_PLURAL = {"entry": "entries"}


class SurrogateTally:
    """The lone surrogates one input file held: :meth:`clean` reads each record (or entry)
    with them as U+FFFD and counts it; :meth:`warn` gives the file's one :class:`TextWarning`."""

    def __init__(self, path: Path, unit: str = "line", names: tuple[str, ...] = ()) -> None:
        """Count for ``path``, whose records are each a ``unit`` (``line`` or ``entry``);
        ``names``: of the items of a record that is a list (as :func:`without_surrogates`)."""
        self.path = path
        self.unit = unit
        self.names = names
        self.count = 0
        self.first: str | None = None

    def clean(self, value: T, at: int) -> T:
        """``value`` (the record at line or entry ``at``) without lone surrogates, counted.

        Raises:
            DataError: the record is nested too deeply to be looked through.
        """
        try:
            cleaned, field = without_surrogates(value, self.names)
        except RecursionError as exc:
            line = at if self.unit == "line" else None
            what = "" if line is not None else f"{self.unit} {at}: "
            raise DataError(f"{what}nested too deeply", path=self.path, line=line) from exc
        if field is not None:
            self.count += 1
            if self.first is None:
                self.first = f"{self.unit} {at}, field {field!r}"
        return cleaned

    def warn(self) -> None:
        """One :class:`TextWarning` when any record held a lone surrogate."""
        if self.count:
            units = self.unit if self.count == 1 else _PLURAL.get(self.unit, f"{self.unit}s")
            warnings.warn(
                TextWarning(
                    f"{encodable(str(self.path))}: {self.count} {units} held text UTF-8 cannot "
                    "encode (a lone surrogate, such as JSON's \\ud800 escape), read with "
                    f"U+FFFD in its place; the first: {self.first}"
                ),
                stacklevel=2,
            )


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
