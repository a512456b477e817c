"""Human category labels for CAQA samples (§6.3), read from a CSV or JSONL file.

The paper had 600 test samples annotated by people and compares them with the automatic labels
(Cohen's kappa) and evaluators' scores on both (Pearson). A labels file has one row per sample:
``id,label`` (CSV with a header) or ``{"id": ..., "label": ...}`` (JSONL); labels are the four
categories (``supportive``...), or ``unsupported`` for binary annotations.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO, get_args

from citegraph.caqa._types import CaqaSample, Label
from citegraph.errors import DataError, DataNotFoundError
from citegraph.io import iter_jsonl, read_csv_file

LABELS: tuple[str, ...] = get_args(Label)


def _rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    if path.suffix == ".jsonl":
        return [(n, {k: str(v) for k, v in row.items()}) for n, row in iter_jsonl(path)]
    return read_csv_file(path, _csv_rows, what="human-labels file")


def _csv_rows(handle: TextIO, path: Path) -> list[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(handle)
    if reader.fieldnames is None or not {"id", "label"} <= set(reader.fieldnames):
        raise DataError("expected a CSV header with 'id' and 'label'", path=path, line=1)
    return [(n, row) for n, row in enumerate(reader, start=2)]


def read_human_labels(path: str | Path) -> dict[str, Label]:
    """``{sample id: human label}`` from a CSV (``id,label`` header) or JSONL file.

    Raises:
        DataNotFoundError: the file is missing.
        DataError: a missing id or label, an unknown label, or an id given twice (names the
            line and field).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError("no such human-labels file", path=path)
    out: dict[str, Label] = {}
    for line, row in _rows(path):
        sample_id, label = (row.get("id") or "").strip(), (row.get("label") or "").strip().lower()
        if not sample_id:
            raise DataError("missing sample id", path=path, line=line, field="id")
        if label not in LABELS:
            msg = f"unknown label {label!r}; expected one of {', '.join(LABELS)}"
            raise DataError(msg, path=path, line=line, field="label")
        if sample_id in out:
            raise DataError(f"sample {sample_id!r} labelled twice", path=path, line=line)
        out[sample_id] = label  # type: ignore[assignment]
    return out


def with_human_labels(
    samples: Sequence[CaqaSample], labels: dict[str, Label], *, source: str | Path = ""
) -> list[CaqaSample]:
    """The samples with ``human_label`` set from ``labels``.

    Raises:
        DataError: a labelled id is not among the samples (a labels file for another split).
    """
    known = {s.id for s in samples}
    unknown = sorted(set(labels) - known)
    if unknown:
        raise DataError(
            f"{len(unknown)} labelled ids are not among the samples, e.g. {unknown[:3]}",
            path=source or None,
        )
    return [
        s.model_copy(update={"human_label": labels[s.id]}) if s.id in labels else s for s in samples
    ]
