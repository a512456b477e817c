"""Line-numbered JSONL reading: every error names the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from citegraph.errors import DataError, DataNotFoundError


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: a line is not a JSON object (names the file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError("file not found", path=path)
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"not valid JSON ({exc.msg})", path=path, line=lineno) from exc
            if not isinstance(obj, dict):
                raise DataError("expected a JSON object", path=path, line=lineno)
            yield lineno, obj


def read_jsonl_tolerant(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Read an append-only JSONL file written by citegraph, tolerating a torn last line.

    A run killed mid-write can leave a partial last line; it is dropped (and counted) so the run
    resumes from the last complete record. A bad line elsewhere is real corruption and raises.

    Returns:
        The records and the number of dropped trailing lines (0 or 1).
    """
    if not path.exists():
        return [], 0
    lines = path.read_text(encoding="utf-8").splitlines()
    records: list[dict[str, Any]] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if lineno == len(lines):
                return records, 1
            raise DataError(f"corrupt record ({exc.msg})", path=path, line=lineno) from exc
    return records, 0
