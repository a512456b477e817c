"""Where the datasets live: ``--data-dir``, then ``$CITEGRAPH_DATA``, then ``../shared/data``.

Here, below every package that reads data (``datasets``, ``kg``, ``caqa``), so that none of
them imports another for it; ``citegraph.datasets`` re-exports these names.

The datasets are public files citegraph reads in place and never copies. When none of the
locations exists, the error says how to fetch the originals (``citegraph data fetch``).
"""

from __future__ import annotations

import os
from pathlib import Path

from citegraph.errors import DataNotFoundError

#: Environment variable naming the data directory.
DATA_ENV = "CITEGRAPH_DATA"

_REPO_ROOT = Path(__file__).resolve().parents[3]


def _default_candidates() -> list[Path]:
    """``../shared/data`` relative to the working directory and to the source checkout."""
    return [Path.cwd().parent / "shared" / "data", _REPO_ROOT.parent / "shared" / "data"]


def resolve_data_dir(explicit: str | Path | None = None) -> Path:
    """Find the data directory.

    Args:
        explicit: A directory given by the user (``--data-dir``); it must exist.

    Returns:
        The directory that holds ``biokalma/``, ``codex_s/`` and the other datasets.

    Raises:
        DataNotFoundError: no location exists; the message says how to get the data.
    """
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not path.is_dir():
            raise DataNotFoundError(_missing_message(f"--data-dir {path} is not a directory."))
        return path
    env = os.environ.get(DATA_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise DataNotFoundError(_missing_message(f"${DATA_ENV}={env} is not a directory."))
        return path
    for candidate in _default_candidates():
        if candidate.is_dir():
            return candidate.resolve()
    return _fallback_cache_dir_or_raise()


def default_download_dir() -> Path:
    """Where ``citegraph data fetch`` puts files when no directory is given."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "citegraph" / "data"


def _fallback_cache_dir_or_raise() -> Path:
    fetched = default_download_dir()
    if fetched.is_dir() and any(fetched.iterdir()):
        return fetched
    raise DataNotFoundError(_missing_message("No data directory found."))


def _missing_message(first: str) -> str:
    return (
        f"{first} citegraph looks for data in --data-dir, then ${DATA_ENV}, then ../shared/data, "
        f"then {default_download_dir()}. To download the public originals (BioKaLMA from "
        "github.com/lixinze777/Knowledge-aware-Language-Model-Attribution, CoDEx-S from "
        "github.com/tsafavi/codex), run: citegraph data fetch biokalma codex-s "
        "[--dest DIR], then pass --data-dir DIR or set CITEGRAPH_DATA=DIR."
    )


def dataset_file(data_dir: Path, *parts: str) -> Path:
    """A file inside the data directory, or a clear error naming it and how to fetch it."""
    path = data_dir.joinpath(*parts)
    if not path.exists():
        raise DataNotFoundError(_missing_message(f"{path} does not exist."), path=path)
    return path
