"""Whether a run is finished, read from the run itself (never from file times).

``metrics.json`` records what it was computed from: under ``samples_file`` the byte size, line
count and an order-free SHA-256 of the lines of ``samples.jsonl`` when the metrics were written
(:func:`~citegraph.runs.samples_fingerprint`, added by
:meth:`~citegraph.runs.RunDir.write_metrics`). A run is *finished* while
``samples.jsonl`` still matches that record, wherever the directory was copied or moved (``cp
-r``, ``rsync``, a git checkout give new modification times, not new contents); it is *in
progress* when ``samples.jsonl`` changed after the metrics were written (records appended by a
run still going, or by a resume), or when there is no ``metrics.json`` yet.

Runs written before ``samples_file`` was recorded are judged by counts: finished when the number
of samples in ``samples.jsonl`` (newest record of each id) equals the number ``metrics.json``
counted (``progress`` ``n_done + n_failed``, else ``n_answers``, ``n_samples`` or ``n``).

:func:`run_state` is what the viewer's run list, a run's page and the HTML report show.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from citegraph.errors import DataError
from citegraph.io import TolerantScan
from citegraph.runs._rundir import (
    METRICS_FILE,
    SAMPLES_FILE,
    SAMPLES_RECORD_KEY,
    samples_fingerprint,
)
from citegraph.runs._runfile import record_id

#: ``metrics.json`` keys that count a run's samples, for runs without ``samples_file``.
_COUNT_KEYS = ("n_answers", "n_samples", "n")

_DIGESTS: dict[tuple[object, ...], str] = {}
_MAX_DIGESTS = 1024

State = Literal["finished", "in_progress"]


@dataclass(frozen=True)
class RunState:
    """A run's state and why.

    Attributes:
        state: ``finished`` (the metrics cover ``samples.jsonl`` as it is) or ``in_progress``.
        reason: Why, in words (``samples.jsonl changed after metrics.json was written``...).
    """

    state: State
    reason: str

    @property
    def finished(self) -> bool:
        """Whether the metrics are final for what ``samples.jsonl`` holds."""
        return self.state == "finished"


def run_state(run_dir: str | Path, *, n_samples: int | None = None) -> RunState:
    """The state of the run in ``run_dir`` (see the module docstring).

    Args:
        run_dir: A run directory.
        n_samples: The number of distinct sample ids in ``samples.jsonl`` when the caller has it
            (the viewer's index); counted here when needed and not given. Used only for runs
            whose ``metrics.json`` has no ``samples_file`` record.
    """
    run_dir = Path(run_dir)
    metrics = _read_metrics(run_dir / METRICS_FILE)
    if metrics is None:
        return RunState("in_progress", f"no readable {METRICS_FILE} yet")
    samples = run_dir / SAMPLES_FILE
    recorded = metrics.get(SAMPLES_RECORD_KEY)
    if isinstance(recorded, Mapping):
        return _against_record(samples, recorded)
    counted = _counted(metrics)
    if counted is None:
        return RunState("finished", f"{METRICS_FILE} exists (it records no sample count)")
    if n_samples is None:
        try:
            n_samples = len({record_id(line, samples) for line in TolerantScan(samples)})
        except DataError as exc:
            return RunState("in_progress", f"{SAMPLES_FILE} cannot be read: {exc}")
    if n_samples == counted:
        return RunState("finished", f"{METRICS_FILE} counts the {counted} samples there are")
    return RunState(
        "in_progress",
        f"{SAMPLES_FILE} holds {n_samples} samples, {METRICS_FILE} counted {counted}",
    )


def _against_record(samples: Path, recorded: Mapping[str, Any]) -> RunState:
    changed = RunState("in_progress", f"{SAMPLES_FILE} changed after {METRICS_FILE} was written")
    size = samples.stat().st_size if samples.is_file() else 0
    if size != recorded.get("bytes"):
        return changed
    if _sha256(samples) != recorded.get("sha256"):
        return changed
    return RunState("finished", f"{METRICS_FILE} was computed from {SAMPLES_FILE} as it is")


def _sha256(samples: Path) -> str:
    """The SHA-256 of ``samples``, remembered per (path, inode, size, mtime): the viewer asks on
    every page view, and a finished run's file does not change."""
    status = samples.stat() if samples.is_file() else None
    key = (
        str(samples),
        *(() if status is None else (status.st_ino, status.st_size, status.st_mtime_ns)),
    )
    found = _DIGESTS.get(key)
    if found is None:
        if len(_DIGESTS) >= _MAX_DIGESTS:
            _DIGESTS.clear()
        found = _DIGESTS[key] = samples_fingerprint(samples)["sha256"]
    return found


def _counted(metrics: Mapping[str, Any]) -> int | None:
    progress = metrics.get("progress")
    if isinstance(progress, Mapping):
        done, failed = _int(progress.get("n_done")), _int(progress.get("n_failed"))
        if done is not None and failed is not None:
            return done + failed
    for key in _COUNT_KEYS:
        if (count := _int(metrics.get(key))) is not None:
            return count
    return None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read_metrics(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
