"""Reading and writing CAQA splits: one :class:`CaqaSample` JSON object per line.

``caqa build`` writes ``train.jsonl`` / ``dev.jsonl`` / ``test.jsonl`` in this form;
:func:`load_caqa_split` reads them back (blank lines are skipped) and :func:`write_samples`
writes them atomically, as the builder does (``None`` fields left out).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from citegraph.caqa._types import CaqaSample
from citegraph.errors import DataError, DataNotFoundError
from citegraph.io import AtomicLines, iter_jsonl, json_text


def load_caqa_split(path: str | Path) -> list[CaqaSample]:
    """The samples of a CAQA JSONL split, in file order.

    Args:
        path: A ``train.jsonl`` / ``dev.jsonl`` / ``test.jsonl`` from ``caqa build``, or any JSONL
            of :class:`CaqaSample` objects.

    Raises:
        DataNotFoundError: The file does not exist.
        DataError: A line is not JSON or not a valid sample (names the line and field), a
            sample's id is empty, or two samples share an id.
    """
    file = Path(path)
    if not file.is_file():
        raise DataNotFoundError(
            "no such CAQA split file; build one with `citegraph caqa build`", path=file
        )
    samples: list[CaqaSample] = []
    seen: dict[str, int] = {}
    for number, data in iter_jsonl(file):
        try:
            sample = CaqaSample.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or None
            raise DataError(error["msg"], path=file, line=number, field=field) from exc
        if not sample.id.strip():
            raise DataError("empty sample id", path=file, line=number, field="id")
        if sample.id in seen:
            msg = f"duplicate sample id {sample.id!r} (first on line {seen[sample.id]})"
            raise DataError(msg, path=file, line=number, field="id")
        seen[sample.id] = number
        samples.append(sample)
    return samples


def write_samples(path: str | Path, samples: Iterable[CaqaSample]) -> int:
    """Write ``samples`` as JSONL (:func:`sample_line`) in one atomic rename, streamed.

    Returns:
        The number of samples written.
    """
    n = 0
    with AtomicLines(Path(path)) as target:
        for sample in samples:
            target.write(sample_line(sample))
            n += 1
    return n


def sample_line(sample: CaqaSample) -> str:
    """One sample's JSONL line (``None`` fields left out), with its newline (text pydantic
    cannot write as UTF-8, a lone surrogate, is kept as its JSON escape)."""
    try:
        return sample.model_dump_json(exclude_none=True) + "\n"
    except PydanticSerializationError:
        return json_text(sample.model_dump(mode="json", exclude_none=True)) + "\n"
