"""Run directories: ``run.json`` (config and provenance), append-only ``samples.jsonl``,
``metrics.json``.

A run directory is resumable: re-running the same command skips samples already in
``samples.jsonl``. A run killed mid-write loses nothing already written: each record is one
flushed line, and a torn last line is dropped on resume (and counted in ``run.json``
``torn_lines_dropped``, which ``metrics.json`` reports under ``progress``). Re-using a
directory with a different configuration is refused when it holds finished records, so results
of two configurations never mix; a directory with no finished record (a run that failed at its
first item, say) simply starts over with the new configuration, noting it in ``run.json``
(``started_over``). Records whose run is unknown (a ``samples.jsonl`` without its ``run.json``)
are never adopted, and a ``run.json`` whose ``task`` was edited is refused on resume as
``runs report`` refuses it, not silently restored.

A record whose ``status`` is ``"failed"`` (say, the model server was down) is kept, but it does not
count as done: a resumed run tries that sample again and appends a new record. The newest record
of an id wins, so ``records`` holds one record per id. A :class:`RunDir` keeps where each id's
newest record is in ``samples.jsonl`` (and whether it failed), not the records: ``records`` and
``newest`` read them from the file as they are used (:class:`~citegraph.runs.StoredRecords`).

``runtime`` settings (concurrency, shard, limit) are recorded but are not part of the run's
identity: they change how much is done and how fast, not what each sample's record holds. Shards of
one run therefore share a ``run_id``, which is what ``citegraph runs merge`` checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, DataError
from citegraph.io import JsonlLine, TolerantScan, json_bytes, json_text
from citegraph.runs._lock import lock_run_dir, unlock_run_dir
from citegraph.runs._placements import check_same_dtypes
from citegraph.runs._provenance import package_versions, sha256_json
from citegraph.runs._registry import edited_task
from citegraph.runs._runfile import (
    is_count,
    load_run_file,
    record_id,
    write_error,
    write_json,
)
from citegraph.runs._schema import SCHEMA_KEY, SCHEMA_VERSION, config_task
from citegraph.runs._stored import Stored, StoredRecords

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
METRICS_FILE = "metrics.json"
FAILED = "failed"
SAMPLES_RECORD_KEY = "samples_file"
"""``metrics.json`` key: the ``samples.jsonl`` the metrics were computed from (its byte size,
line count and SHA-256; see :func:`samples_fingerprint` and :func:`citegraph.runs.run_state`)."""
TORN_KEY = "torn_lines_dropped"
"""``run.json`` key: how many torn last lines of ``samples.jsonl`` were dropped so far (absent
when none was)."""
STARTED_OVER_KEY = "started_over"
"""``run.json`` key, present when the directory held a run of another configuration with no
finished record (an aborted start, say) and this run replaced it: the old ``run_id``, the keys
that differed and the note shown (:attr:`RunDir.started_over`)."""
#: The order a run directory's files are removed in (``--overwrite``, a start over): the
#: records before the ``run.json`` that says what they are.
_REMOVE_ORDER = (SAMPLES_FILE, METRICS_FILE, RUN_FILE)
STARTED_OVER_NOTE = (
    "{path} held a run of another configuration (differs in: {changed}) with no finished "
    "record; started over with this one"
)


#: What ``runs report`` says to do when another process is writing the run.
REPORT_WHEN_DONE = (
    "it writes metrics.json itself when it ends; run citegraph runs report after that"
)


def torn_lines_dropped(info: dict[str, Any]) -> int:
    """Torn last lines dropped from the run's ``samples.jsonl`` so far, from its ``run.json``."""
    value = info.get(TORN_KEY, 0)
    return value if is_count(value) else 0


class RunDir:
    """An output directory for one run.

    Use :meth:`open`; then :meth:`append` one record per finished sample and
    :meth:`write_metrics` at the end. ``done`` holds the ids already written;
    ``torn_dropped`` the torn last lines of ``samples.jsonl`` this open dropped (0 or 1), and
    ``info["torn_lines_dropped"]`` those of every open of the directory.
    """

    def __init__(
        self,
        path: Path,
        info: dict[str, Any],
        lines: Iterable[JsonlLine] | None = None,
        *,
        torn_dropped: int = 0,
    ) -> None:
        self.path = path
        self.info = info
        self.torn_dropped = torn_dropped
        self._where: dict[str, Stored] = {}
        for line in TolerantScan(path / SAMPLES_FILE) if lines is None else lines:
            self._note(record_id(line, path / SAMPLES_FILE), line)
        self._fd: int | None = None
        self._lock: str | None = None
        #: Set by :meth:`open` when it replaced a run of another configuration that had no
        #: finished record: the note saying so (the engine passes it to ``Runtime.notify``).
        self.started_over: str | None = None

    @classmethod
    def read(cls, path: str | Path) -> RunDir:
        """An existing run directory, to read (a torn last line is left out, not removed).

        Raises:
            DataError: ``run.json`` or a line of ``samples.jsonl`` is malformed, or ``run.json``
                was edited (its config and data no longer match its ``run_id``).
        """
        path = Path(path)
        return cls(path, load_run_file(path / RUN_FILE, check=True))

    @classmethod
    def reopen(cls, path: str | Path) -> RunDir:
        """The run directory at ``path`` as ``runs report`` needs it to write its
        ``metrics.json``: its ``run.json`` checked, a torn last line of ``samples.jsonl``
        dropped (and counted) as a resume does, and the directory's lock held until
        :meth:`close` (use it as a context manager), so no run writes it meanwhile.

        Raises:
            DataNotFoundError: ``path`` holds no ``run.json``.
            DataError: ``run.json`` or ``samples.jsonl`` is damaged, or ``run.json`` was edited.
            RunBusy: another process is writing the run (names its pid; nothing is changed).
        """
        path = Path(path)
        info = load_run_file(path / RUN_FILE, check=True)
        lock = lock_run_dir(path, advice=REPORT_WHEN_DONE)  # before any file is touched
        try:
            run = cls.open(path, info.get("config") or {}, data=info.get("data"))
        finally:
            unlock_run_dir(lock)  # ``run`` holds a lock of its own (the same one: counted)
        return run

    def _note(self, key: str, line: JsonlLine) -> None:
        failed = line.record.get("status") == FAILED
        self._where[key] = Stored(key, line.offset, line.length, failed)

    @property
    def records(self) -> StoredRecords:
        """The newest record of each id, in order of first appearance (read from
        ``samples.jsonl`` as they are used: the run directory holds where they are, not them)."""
        return StoredRecords(self.path / SAMPLES_FILE, list(self._where.values()))

    @property
    def ids(self) -> list[str]:
        """The ids that have a record, in order of first appearance."""
        return list(self._where)

    def newest(self, ids: Iterable[str]) -> StoredRecords:
        """The newest record of each of ``ids`` that has one, in the order of ``ids``."""
        where = self._where
        return StoredRecords(self.path / SAMPLES_FILE, [where[i] for i in ids if i in where])

    @property
    def done(self) -> set[str]:
        """Ids whose newest record is finished (not ``status: failed``)."""
        return {i for i, line in self._where.items() if not line.failed}

    @classmethod
    def open(
        cls,
        path: str | Path,
        config: dict[str, Any],
        *,
        data: dict[str, str] | None = None,
        command: str | None = None,
        overwrite: bool = False,
        runtime: dict[str, Any] | None = None,
        task: str | None = None,
        notes: dict[str, Any] | None = None,
        models: dict[str, dict[str, Any]] | None = None,
    ) -> RunDir:
        """Create a run directory or resume the one at ``path``.

        Args:
            path: The directory.
            config: The full configuration (written verbatim; its hash identifies the run).
            data: Input files and their SHA-256 (part of the identity too).
            command: The command line, for the record.
            overwrite: Start afresh even if the directory holds another run.
            runtime: Settings recorded but not part of the identity (concurrency, shard...).
            task: The registered task's name (``kalma.run``...), recorded beside the identity
                so that ``runs report`` finds the task of any run (when not given: the one the
                config names, if any; see :mod:`citegraph.runs._schema`).
            notes: What the task worked out from its inputs before the work and its metrics
                need (see :meth:`citegraph.runs.Task.run_notes`); not part of the identity.
            models: Where each local model runs (role -> device, dtype, size; see
                :func:`~citegraph.runs.model_placements`); not part of the identity, but a run
                whose records were made in one dtype is not resumed in another.

        Raises:
            ConfigError: the directory holds finished records of a run with a different
                configuration or data (with none, the run starts over and
                :attr:`started_over` says so), or its records were made with a model in
                another dtype.
            RunBusy: another process is writing the directory (nothing is touched).
            DataError: its ``run.json`` is damaged, edited, or of a newer layout.
        """
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        lock = lock_run_dir(path)  # before any file is touched: one writer per directory
        try:
            run = cls._open_locked(
                path,
                config,
                data=data,
                command=command,
                overwrite=overwrite,
                runtime=runtime,
                task=task,
                notes=notes,
                models=models,
            )
        except BaseException:
            unlock_run_dir(lock)
            raise
        run._lock = lock
        return run

    @classmethod
    def _open_locked(
        cls,
        path: Path,
        config: dict[str, Any],
        *,
        data: dict[str, str] | None,
        command: str | None,
        overwrite: bool,
        runtime: dict[str, Any] | None,
        task: str | None,
        notes: dict[str, Any] | None,
        models: dict[str, dict[str, Any]] | None,
    ) -> RunDir:
        """:meth:`open`, once the directory's lock is held."""
        identity = {"config": config, "data": data or {}}
        run_id = sha256_json(identity)
        run_file = path / RUN_FILE
        if overwrite:  # the records first: a run.json is never removed before them
            for name in _REMOVE_ORDER:
                (path / name).unlink(missing_ok=True)
        started_over: dict[str, Any] | None = None
        if not run_file.exists():
            _refuse_orphans(path)
        if run_file.exists():
            previous = load_run_file(run_file, check=True)
            if previous.get("run_id") != run_id:
                changed = _changed_keys(previous, identity)
                if not (changed and _only_new_unset_fields(previous, identity, changed)):
                    if _holds_a_finished_record(path):
                        raise ConfigError(
                            f"{path} holds a run with a different configuration or input "
                            f"(differs in: {', '.join(changed) or 'unknown'}) and finished "
                            "records of it; use another --out, or --overwrite to replace it"
                        )
                    started_over = {
                        "previous_run_id": previous.get("run_id"),
                        "differs_in": changed,
                        "note": STARTED_OVER_NOTE.format(
                            path=path, changed=", ".join(changed) or "unknown"
                        ),
                    }
                    for name in _REMOVE_ORDER:
                        (path / name).unlink(missing_ok=True)
        if run_file.exists():
            previous = load_run_file(run_file)
            info = previous
            if runtime is not None and previous.get("runtime") != runtime:
                info = info | {"runtime": runtime}
            if task is not None and previous.get("task") != task:
                if previous.get("task") is not None:  # edited: refused, as runs report does
                    raise edited_task(previous.get("task"), task, path)
                info = info | {"task": task}  # a run opened without one, whose config names none
            if notes and previous.get("notes") != notes:
                info = info | {"notes": notes}
            if models:
                if (path / SAMPLES_FILE).exists() and (path / SAMPLES_FILE).stat().st_size:
                    check_same_dtypes(path, previous.get("models"), models)
                if previous.get("models") != models:
                    info = info | {"models": (previous.get("models") or {}) | models}
            if info is not previous:
                write_json(run_file, info)
        else:
            info = {
                SCHEMA_KEY: SCHEMA_VERSION,
                "run_id": run_id,
                "task": task if task is not None else config_task(config),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": command,
                "config": config,
                "data": data or {},
                "runtime": runtime or {},
                "versions": package_versions(),
            }
            if notes:
                info["notes"] = notes
            if models:
                info["models"] = models
            if started_over is not None:
                info[STARTED_OVER_KEY] = started_over
            write_json(run_file, info)
        scan = TolerantScan(path / SAMPLES_FILE)
        run = cls(path, info, scan)  # one pass over the records, keeping where they are
        run.started_over = None if started_over is None else started_over["note"]
        if scan.torn:
            os.truncate(path / SAMPLES_FILE, scan.end)
            run.info = info | {TORN_KEY: torn_lines_dropped(info) + scan.torn}
            run.torn_dropped = scan.torn
            write_json(run_file, run.info)
        return run

    def append(self, record: dict[str, Any]) -> None:
        """Append one sample record (its ``id`` a string) and write it to disk at once.

        The line goes to the file's real end (``O_APPEND``), and where it starts is read back
        from the file, not assumed. A write that fails (a full disk) takes back what it wrote
        of the line, so the file keeps whole records only.

        Raises:
            DataError: the record has no non-empty string id or cannot be written as JSON
                (nothing is written), or the write failed (names ``samples.jsonl`` and what to
                do); every record appended before is kept.
        """
        samples = self.path / SAMPLES_FILE
        key = record.get("id")
        if not isinstance(key, str) or not key:
            got = json_text(key)[:40] if isinstance(key, str | int | float | None) else "?"
            raise DataError(
                f"a record needs a non-empty string id, got {got}; not written",
                path=samples,
                field="id",
            )
        try:
            data = json_bytes(record) + b"\n"
        except (RecursionError, TypeError, ValueError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
            raise DataError(
                f"record {json_text(key)[:80]} cannot be written as JSON ({why}); not written",
                path=samples,
            ) from None
        start: int | None = None
        try:
            if self._fd is None:
                self._fd = os.open(samples, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            start = os.fstat(self._fd).st_size
            written = os.write(self._fd, data)
            offset = os.lseek(self._fd, 0, os.SEEK_CUR) - written
            while written < len(data):
                written += os.write(self._fd, memoryview(data)[written:])
        except OSError as exc:
            if self._fd is not None and start is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, start)  # no torn line left behind
            raise write_error(samples, exc) from None
        self._note(key, JsonlLine(offset, len(data) - 1, record))

    def write_metrics(self, metrics: dict[str, Any]) -> Path:
        """Write ``metrics.json`` atomically, as :meth:`with_samples_record` gives it (unless
        ``metrics`` already holds that record).

        Raises:
            DataError: the file cannot be written (a full disk; names it).
        """
        if SAMPLES_RECORD_KEY not in metrics:
            metrics = self.with_samples_record(metrics)
        target = self.path / METRICS_FILE
        write_json(target, metrics)
        return target

    def with_samples_record(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """``metrics`` with the ``samples_file`` they are computed from: the
        :func:`samples_fingerprint` of ``samples.jsonl`` now (a run is finished while its
        ``samples.jsonl`` still matches, wherever the directory is copied)."""
        return metrics | {SAMPLES_RECORD_KEY: samples_fingerprint(self.path / SAMPLES_FILE)}

    def close(self) -> None:
        """Sync and close the samples file, and release the directory's lock (if this run
        holds it). Safe to call twice.

        Raises:
            DataError: the records could not be synced to disk (names the file).
        """
        fd, self._fd = self._fd, None
        lock, self._lock = self._lock, None
        try:
            if fd is not None:
                try:
                    os.fsync(fd)
                except OSError as exc:
                    raise write_error(self.path / SAMPLES_FILE, exc) from None
                finally:
                    os.close(fd)
        finally:
            unlock_run_dir(lock)

    def __del__(self) -> None:
        # a run dropped without close (a notebook, a test) gives its lock back with it
        with contextlib.suppress(Exception):
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            unlock_run_dir(self._lock)
            self._lock = None

    def __enter__(self) -> RunDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def samples_fingerprint(path: Path) -> dict[str, Any]:
    """``{"bytes", "lines", "sha256"}`` of a ``samples.jsonl``: what ``metrics.json``
    ``samples_file`` records (0, 0 and the digest of no line when the file is missing).

    ``sha256`` digests the *set of lines* (with repeats), not their order: the SHA-256 of the
    sorted SHA-256 digests of the lines. Metrics are computed from the records in the task's
    order, whatever their order in the file, so a merge of shards that holds the same lines as
    the unsharded run has the same fingerprint; any changed, added or removed line changes it.
    """
    digests: list[bytes] = []
    size = 0
    if path.is_file():
        with path.open("rb") as handle:
            for line in handle:
                size += len(line)
                digests.append(hashlib.sha256(line.rstrip(b"\r\n")).digest())
    digests.sort()
    return {
        "bytes": size,
        "lines": len(digests),
        "sha256": hashlib.sha256(b"".join(digests)).hexdigest(),
    }


def _only_new_unset_fields(
    previous: dict[str, Any], identity: dict[str, Any], changed: list[str]
) -> bool:
    """Whether the configs differ only in fields the run's config does not have and this one
    leaves unset (None): options added to a task after the run was made, which resumes as the
    same run (its ``run.json`` and id are kept)."""
    old, new = previous.get("config", {}), identity["config"]
    for key in changed:
        section, _, name = key.partition(".")
        if section != "config" or name in old or new.get(name) is not None:
            return False
    return True


def _changed_keys(previous: dict[str, Any], identity: dict[str, Any]) -> list[str]:
    changed = []
    for section in ("config", "data"):
        old, new = previous.get(section, {}), identity[section]
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new or old[key] != new[key]:
                changed.append(f"{section}.{key}")
    return changed


def _refuse_orphans(path: Path) -> None:
    """Refuse to adopt records whose run is unknown: a ``samples.jsonl`` that holds records
    while its ``run.json`` is gone (deleted, or left behind by a copy) would mix their settings,
    unknown, with this run's.

    Raises:
        DataError: ``samples.jsonl`` holds a record (names it and how to recover).
    """
    samples = path / SAMPLES_FILE
    found = next(iter(TolerantScan(samples)), None)
    if found is None:
        return
    raise DataError(
        f"holds records but {path / RUN_FILE} is missing, so the settings they were made with "
        "are unknown and a resume would mix them with this run's; restore run.json (from a "
        "copy of the run), or move samples.jsonl away, or rerun with --overwrite to start "
        "afresh",
        path=samples,
    )


def _holds_a_finished_record(path: Path) -> bool:
    """Whether ``samples.jsonl`` in ``path`` holds a record that is not ``status: failed``."""
    return any(line.record.get("status") != FAILED for line in TolerantScan(path / SAMPLES_FILE))
