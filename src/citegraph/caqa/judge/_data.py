"""What ``caqa judge`` reads: a CAQA split (or any JSONL of samples), or ``attributionbench``."""

from __future__ import annotations

from pathlib import Path

from citegraph.caqa._samples_io import load_caqa_split
from citegraph.caqa._types import CaqaSample
from citegraph.caqa.judge._attributionbench import attributionbench_path, load_attributionbench
from citegraph.errors import DataError
from citegraph.io import resolve_data_dir
from citegraph.runs import sha256_file

ATTRIBUTIONBENCH = "attributionbench"


def read_samples(data: str, *, data_dir: str | Path | None = None) -> tuple[list[CaqaSample], str]:
    """The samples named by ``data`` and the SHA-256 of the file they came from.

    Args:
        data: ``attributionbench`` (the human-labelled dev set in the data directory) or a path
            to a JSONL of :class:`CaqaSample` (a ``caqa build`` split).
        data_dir: Where the datasets are (for ``attributionbench``).

    Raises:
        DataNotFoundError: the file is missing.
        DataError: a bad line (the message names the file, line and field), or a file with no
            sample.
    """
    if data == ATTRIBUTIONBENCH:
        path = attributionbench_path(resolve_data_dir(data_dir))
        return load_attributionbench(path), sha256_file(path)
    samples = load_caqa_split(data)
    if not samples:
        raise DataError(
            "no samples: the file is empty or blank (expected one CAQA sample JSON object per "
            "line, as `citegraph caqa build` writes)",
            path=data,
        )
    return samples, sha256_file(data)
