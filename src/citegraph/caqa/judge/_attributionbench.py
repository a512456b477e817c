"""AttributionBench (human binary attribution labels) as :class:`CaqaSample` records.

The file is ``attributionbench/dev_all_subset_balanced.jsonl`` in the data directory: 1,198 rows,
599 attributable and 599 not. Each row becomes one sample:

====================  =====================================================================
sample field          row field
====================  =====================================================================
``id``, ``group``     ``id``
``question``          ``question``
``answer``            ``claim`` (the statement to attribute)
``citation``          ``references`` (a list of strings) joined by blank lines, verbatim
``label``             ``attribution_label``: ``attributable`` -> ``supportive``,
                      ``not attributable`` -> ``unsupported``
``source``            ``attributionbench/<src_dataset>``
====================  =====================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from citegraph.caqa._types import BinaryLabel, CaqaSample
from citegraph.errors import ConfigError, DataError
from citegraph.io import iter_jsonl

__all__ = ["ATTRIBUTIONBENCH_FILE", "attributionbench_path", "load_attributionbench"]

#: The file inside the data directory.
ATTRIBUTIONBENCH_FILE = ("attributionbench", "dev_all_subset_balanced.jsonl")

_LABELS: dict[str, BinaryLabel] = {"attributable": "supportive", "not attributable": "unsupported"}


def attributionbench_path(path_or_data_dir: str | Path) -> Path:
    """The JSONL file: ``path_or_data_dir`` itself unless it is a directory; in a directory,
    ``attributionbench/dev_all_subset_balanced.jsonl`` (a data directory), else
    ``dev_all_subset_balanced.jsonl`` when that exists (the dataset's own folder)."""
    path = Path(path_or_data_dir).expanduser()
    if not path.is_dir():
        return path
    inside = path.joinpath(*ATTRIBUTIONBENCH_FILE)
    direct = path / ATTRIBUTIONBENCH_FILE[1]
    return direct if not inside.exists() and direct.exists() else inside


def _text(row: dict[str, Any], field: str, path: Path, line: int) -> str:
    value = row.get(field)
    if not isinstance(value, str) or not value.strip():
        raise DataError("missing or empty string", path=path, line=line, field=field)
    return value


def _sample(row: dict[str, Any], path: Path, line: int) -> CaqaSample:
    references = row.get("references")
    if (
        not isinstance(references, list)
        or not references
        or not all(isinstance(r, str) for r in references)
    ):
        raise DataError(
            "expected a non-empty list of strings", path=path, line=line, field="references"
        )
    raw_label = row.get("attribution_label")
    label = _LABELS.get(raw_label.strip().lower()) if isinstance(raw_label, str) else None
    if label is None:
        raise DataError(
            f"expected 'attributable' or 'not attributable', got {raw_label!r}",
            path=path,
            line=line,
            field="attribution_label",
        )
    sample_id = _text(row, "id", path, line)
    return CaqaSample(
        id=sample_id,
        question=_text(row, "question", path, line),
        answer=_text(row, "claim", path, line),
        citation="\n\n".join(references),
        label=label,
        source=f"attributionbench/{_text(row, 'src_dataset', path, line)}",
        group=sample_id,
    )


def load_attributionbench(
    path_or_data_dir: str | Path, *, limit: int | None = None
) -> list[CaqaSample]:
    """Read AttributionBench as binary-labelled samples (module table).

    Args:
        path_or_data_dir: The JSONL file, or the data directory holding
            ``attributionbench/dev_all_subset_balanced.jsonl``.
        limit: Read only the first ``limit`` rows.

    Returns:
        The samples in file order.

    Raises:
        DataNotFoundError: The file does not exist.
        DataError: A row is malformed (the message names the file, line and field), or two rows
            share an id.
        ConfigError: ``limit`` is negative.
    """
    if limit is not None and limit < 0:
        raise ConfigError(f"limit must be >= 0, got {limit}")
    path = attributionbench_path(path_or_data_dir)
    samples: list[CaqaSample] = []
    seen: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        if limit is not None and len(samples) >= limit:
            break
        sample = _sample(row, path, line)
        if sample.id in seen:
            raise DataError(
                f"duplicate id {sample.id!r} (first on line {seen[sample.id]})",
                path=path,
                line=line,
                field="id",
            )
        seen[sample.id] = line
        samples.append(sample)
    return samples
