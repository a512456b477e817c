"""An index of a run's ``samples.jsonl`` that pages and single samples are served from.

``samples.jsonl`` is append-only, so the index reads each byte once: a refresh reads only what
was appended since the last one (a run still being written shows its new samples on reload) and
starts over when the file was replaced (``runs merge``, a resume that dropped a torn line). It
keeps, per id, the byte offset of the newest record, so one sample's page reads one line, not
the run; the sample-list rows (:class:`~citegraph.runs.SampleSummary`) are made once per record
and kept. A torn last line (a run killed mid-write) is left out and counted. A complete line
that is not a record (not UTF-8, not JSON, nested too deeply, not an object) is left out and
named: :attr:`SampleIndex.damage` holds its :class:`~citegraph.errors.DataError` (file and
line), as ``runs report`` would raise it; a record is read again through the same parser. A
record its task cannot show is named there too, and listed as an ``unreadable`` row.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from citegraph.errors import DataError
from citegraph.io import encodable, not_utf8_error, parse_jsonl_line
from citegraph.runs import SAMPLES_FILE, Presenter, SampleSummary
from citegraph.viewer._listing import Facets, facets_of

#: What a presenter may raise on a record of a shape it does not expect (a field of the wrong
#: type, a missing key, JSON nested too deeply to walk): the record cannot be shown, and the
#: index says which line it is (:class:`~citegraph.errors.DataError`) instead.
UNSHOWABLE = (TypeError, KeyError, AttributeError, IndexError, ValueError, RecursionError)

#: Bytes of ``samples.jsonl`` read at a time while indexing (a line longer than this is read
#: whole, across blocks): indexing a run of any size holds one block, not the file.
READ_BLOCK = 8 * 2**20

_ID = re.compile(rb'^\{"id": ("(?:[^"\\]|\\.)*")')


@dataclass
class _State:
    key: tuple[int, int] | None = None  # (device, inode) of the file read
    scanned: int = 0  # bytes read, up to the end of the last complete line
    lines: int = 0  # complete lines read
    # id -> (offset, length, line number) of its newest record
    where: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    # complete lines that are no record, and records the task cannot show
    damage: list[DataError] = field(default_factory=list)
    summaries: dict[str, tuple[int, SampleSummary]] = field(default_factory=dict)
    torn: int = 0  # bytes of an incomplete last line
    version: int = 0  # bumped whenever ``where`` changes
    rows: tuple[int, list[SampleSummary], Facets] | None = None  # (version, rows, facets)


class SampleIndex:
    """Offsets and sample-list rows of one run's records (thread-safe)."""

    def __init__(self, run_dir: Path, presenter: type[Presenter]) -> None:
        self.path = run_dir / SAMPLES_FILE
        self.presenter = presenter
        self._state = _State()
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Read what was appended since the last refresh (or everything, if the file changed)."""
        with self._lock:
            self._refresh()

    @property
    def ids(self) -> list[str]:
        """Ids in order of first appearance (after a refresh)."""
        with self._lock:
            self._refresh()
            return list(self._state.where)

    @property
    def damage(self) -> list[DataError]:
        """The complete lines that are not records, and the records the task cannot show (found
        as the sample list is made), each as the error naming file and line."""
        with self._lock:
            self._refresh()
            return list(self._state.damage)

    @property
    def torn(self) -> bool:
        """Whether the file ends in an incomplete line (left out)."""
        return self._state.torn > 0

    def record(self, sample_id: str) -> dict[str, Any] | None:
        """The newest record of ``sample_id`` (read from its offset), or None."""
        with self._lock:
            self._refresh()
            stored = self._stored_id(sample_id)
            where = None if stored is None else self._state.where[stored]
        if where is None:
            return None
        with self.path.open("rb") as fh:
            return _read_record(fh, self.path, *where)

    def _stored_id(self, sample_id: str) -> str | None:
        """The id as stored that ``sample_id`` names: itself, or, for a link to an id holding a
        lone surrogate (pages show and link it with U+FFFD), the first id shown as it."""
        where = self._state.where
        if sample_id in where:
            return sample_id
        if "\ufffd" in sample_id:
            return next((i for i in where if encodable(i) == sample_id), None)
        return None

    def records(self) -> list[dict[str, Any]]:
        """The newest record of every id, in order of first appearance (one pass over the
        file: what a figure or a report needs, never a page)."""
        with self._lock:
            self._refresh()
            where = list(self._state.where.values())
        out: list[dict[str, Any]] = []
        if not where:
            return out
        with self.path.open("rb") as fh:
            out.extend(_read_record(fh, self.path, *at) for at in where)
        return out

    def record_bytes(self) -> int:
        """The bytes of the newest record of every id: what :meth:`records` reads."""
        with self._lock:
            self._refresh()
            return sum(length for _, length, _ in self._state.where.values())

    def summaries(self) -> list[SampleSummary]:
        """The sample-list row of every id's newest record, in order of first appearance."""
        return self.listing()[0]

    def listing(self) -> tuple[list[SampleSummary], Facets]:
        """The sample-list rows and their facets (made once per change of the file)."""
        with self._lock:
            self._refresh()
            state = self._state
            if state.rows is not None and state.rows[0] == state.version:
                return state.rows[1], state.rows[2]
            done = state.summaries
            missing = [(i, at) for i, at in state.where.items() if done.get(i, (-1,))[0] != at[0]]
            if missing:
                with self.path.open("rb") as fh:
                    for sample_id, at in missing:
                        row = self._summary(fh, sample_id, *at)
                        state.summaries[sample_id] = (at[0], row)
            rows = [state.summaries[i][1] for i in state.where]
            facets = facets_of(rows)
            state.rows = (state.version, rows, facets)
            return rows, facets

    def _summary(
        self, fh: BinaryIO, sample_id: str, offset: int, length: int, lineno: int
    ) -> SampleSummary:
        """The row of the record at ``offset``; a record the task cannot show is a row saying
        so (tagged ``unreadable``) and named in :attr:`damage`, so one bad record does not hide
        the run's others (its own page says why)."""
        try:
            record = _read_record(fh, self.path, offset, length, lineno)
            return self.presenter.summary(record)
        except DataError as exc:
            err = exc
        except UNSHOWABLE as exc:
            why = f"{type(exc).__name__}: {exc}"[:200]
            err = DataError(
                f"a record this run's task cannot show ({why})", path=self.path, line=lineno
            )
        self._state.damage.append(err)
        return SampleSummary(
            id=sample_id, title=f"unreadable: {err}", status="unreadable", tags=["unreadable"]
        )

    def neighbours(self, sample_id: str) -> tuple[str | None, str | None]:
        """The ids before and after ``sample_id`` in the run."""
        with self._lock:
            self._refresh()
            stored = self._stored_id(sample_id)
            ids = list(self._state.where)
        if stored is None:
            return None, None
        at = ids.index(stored)
        return (ids[at - 1] if at else None, ids[at + 1] if at + 1 < len(ids) else None)

    def _refresh(self) -> None:
        state = self._state
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._state = _State()
            return
        key = (stat.st_dev, stat.st_ino)
        if key != state.key or stat.st_size < state.scanned + state.torn:
            state = self._state = _State(key=key)
        if stat.st_size == state.scanned + state.torn and not state.torn:
            return
        with self.path.open("rb") as fh:
            fh.seek(state.scanned)
            left = stat.st_size - state.scanned
            parts: list[bytes] = []  # read since the last complete line
            while left > 0:
                block = _read_block(fh, min(READ_BLOCK, left))
                if not block:
                    break
                left -= len(block)
                parts.append(block)
                if b"\n" in block:
                    rest = self._scan(b"".join(parts))
                    parts = [rest] if rest else []
        state.torn = sum(len(p) for p in parts)

    def _scan(self, chunk: bytes) -> bytes:
        """Index the complete lines of ``chunk`` (the bytes from ``scanned`` on); returns what
        follows the last of them."""
        state = self._state
        end = chunk.rfind(b"\n") + 1
        offset = state.scanned
        for line in chunk[:end].split(b"\n")[:-1]:
            length = len(line)
            state.lines += 1
            try:
                sample_id = _id_of(line, self.path, state.lines, offset)
            except DataError as err:
                state.damage.append(err)
            else:
                if sample_id is not None:
                    state.where[sample_id] = (offset, length, state.lines)
            offset += length + 1
        state.scanned += end
        if end:
            state.version += 1
        return chunk[end:]


def _read_block(fh: BinaryIO, size: int) -> bytes:
    """The next ``size`` bytes of ``fh`` (fewer at its end)."""
    return fh.read(size)


def _id_of(line: bytes, path: Path, lineno: int, offset: int) -> str | None:
    """The id of the record on ``line`` (None for a blank line).

    Raises:
        DataError: the line is not a record (names the file and line).
    """
    match = _ID.match(line)
    if match:
        return str(json.loads(match.group(1)))
    if not line.strip():
        return None
    return str(_parse(line, path, lineno, offset).get("id"))


def _parse(line: bytes, path: Path, lineno: int, offset: int) -> dict[str, Any]:
    """The record on one line, parsed as every reader of a run parses it.

    Raises:
        DataError: not UTF-8, not valid JSON (or nested too deeply), or not an object.
    """
    if lineno == 1:
        line = line.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8_error(line, exc.start, path, line=lineno, line_offset=offset) from None
    return parse_jsonl_line(text, path, lineno)


def _read_record(fh: BinaryIO, path: Path, offset: int, length: int, lineno: int) -> dict[str, Any]:
    """The record at ``offset`` (read again through :func:`_parse`).

    Raises:
        DataError: the line is no longer a record (the file was changed under the index).
    """
    fh.seek(offset)
    return _parse(fh.read(length), path, lineno, offset)
