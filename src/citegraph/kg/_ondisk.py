"""On-disk store cache: one directory per source content hash, written atomically.

Layout of a cache entry::

    <cache_dir>/<source hash>/
        store/          the pyoxigraph (RocksDB) database, opened read-only once complete
        COMPLETE.json   written last: loader, versions, file names, fact count

An entry is imported into ``<cache_dir>/.tmp-<hash>-<random>/`` and renamed into place only after
the store is flushed, closed and the marker is written, so a crash never leaves a directory that
looks complete. A directory without the marker is deleted and imported again.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from pyoxigraph import Quad, Store

from citegraph.errors import DataNotFoundError, KGError
from citegraph.io import cache_root
from citegraph.kg._rdf import SCHEMA_VERSION

#: Receives one human-readable message per stage of a load; the CLI renders it.
ProgressCallback = Callable[[str], None]


class LoadOptions(TypedDict, total=False):
    """How a dataset KG is loaded (the ``load_*_kg`` functions, :meth:`OxigraphKG.from_source`)."""

    cache_dir: str | Path | None
    """Where on-disk stores are cached (default ``$CITEGRAPH_CACHE/kg``)."""
    use_cache: bool
    """``False`` loads into memory and writes nothing (default ``True``)."""
    progress: ProgressCallback | None
    """Receives a message per stage."""


MARKER = "COMPLETE.json"
STORE_DIR = "store"
_CHUNK = 1 << 20


def default_cache_dir() -> Path:
    """``$CITEGRAPH_CACHE/kg``, else ``$XDG_CACHE_HOME/citegraph/kg``, else
    ``~/.cache/citegraph/kg``."""
    return cache_root() / "kg"


def hash_sources(
    loader: str,
    loader_version: int,
    paths: Sequence[Path],
    options: Mapping[str, Any] | None = None,
) -> str:
    """SHA-256 over the loader name and version, the IRI-scheme version, the reader's options
    (when any are given: ``{"label_predicates": [...]}``), and each file's name, size and bytes,
    in the order given (directories are not part of the hash, so a moved copy of the same files
    hits the same cache entry).

    Raises:
        DataNotFoundError: a file is missing.
    """
    digest = hashlib.sha256()
    header: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "loader": loader,
        "loader_version": loader_version,
    }
    if options:
        header["options"] = dict(options)
    digest.update(json.dumps(header, sort_keys=True).encode())
    for path in paths:
        if not path.is_file():
            raise DataNotFoundError("source file not found", path=path)
        digest.update(b"\0" + os.fsencode(path.name) + f"\0{path.stat().st_size}\0".encode())
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def read_marker(entry: Path) -> dict[str, Any] | None:
    """The marker of a complete cache entry, or ``None`` when the entry is absent or partial."""
    marker = entry / MARKER
    if not marker.is_file() or not (entry / STORE_DIR).is_dir():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def count_facts(store: Store) -> int:
    """Number of quads in the default (fact) graph. The query text is constant."""
    solutions = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    for solution in solutions:  # type: ignore[union-attr]
        return int(solution["n"].value)
    return 0


def build_entry(
    cache_dir: Path,
    source_hash: str,
    quads: Iterable[Quad],
    meta: dict[str, Any],
    progress: ProgressCallback | None = None,
) -> Path:
    """Import ``quads`` into a new cache entry and return its directory.

    If another process finished the same entry first, its directory is kept and ours discarded.
    """
    entry = cache_dir / source_hash
    if entry.exists() and read_marker(entry) is None:
        shutil.rmtree(entry, ignore_errors=True)  # a partial entry from an interrupted import
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{source_hash[:16]}-", dir=cache_dir))
    try:
        store = Store(str(tmp / STORE_DIR))
        store.bulk_extend(quads)
        store.flush()
        store.optimize()
        n_facts = count_facts(store)
        del store  # closes RocksDB so the directory can be renamed
        gc.collect()
        record = {**meta, "source_hash": source_hash, "n_facts": n_facts}
        with (tmp / MARKER).open("w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.rename(tmp, entry)
        except OSError:
            if read_marker(entry) is None:
                raise
            if progress:
                progress(f"another process finished {entry} first; using it")
    except OSError as exc:
        raise KGError(f"could not write the KG cache entry {entry}: {exc}") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return entry
