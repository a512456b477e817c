"""Loading knowledge graphs from source files into :class:`OxigraphKG`, through the disk cache.

Five loaders turn files into citegraph's RDF layout (see :mod:`citegraph.kg._rdf`):
``"biokalma"`` (BioKaLMA question-graph JSON), ``"codex"`` (CoDEx-S), ``"pathquestion"``
(PathQuestion's KB files), ``"grailqa"`` (the GrailQA single-edge mini KB) and ``"rdf"``
(N-Triples, Turtle and other RDF files). The convenience constructors take the data directory
(the folder that holds ``biokalma/``, ``codex_s/``..., see
``citegraph.io.resolve_data_dir``).

A load hashes the source files (SHA-256 over the loader, its version, the IRI-scheme version and
each file's name and bytes). With the cache on, ``<cache_dir>/<hash>/`` is opened read-only when
it is complete; otherwise the sources are bulk-loaded into a temporary directory that is renamed
into place (see :mod:`citegraph.kg._ondisk`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import Quad

from citegraph.errors import ConfigError, DataNotFoundError
from citegraph.kg._load_biokalma import BIOKALMA_LOADER_VERSION, read_biokalma
from citegraph.kg._load_codex import (
    CODEX_LOADER_VERSION,
    DESCRIPTIONS,
    ENTITY_TYPES,
    NAMES,
    RELATIONS,
    TYPE_LABELS,
    read_codex,
)
from citegraph.kg._load_grailqa import (
    GRAILQA_LOADER_VERSION,
    QUESTIONS_FILE,
    TRIPLES_FILE,
    read_grailqa_kb,
)
from citegraph.kg._load_pathquestion import (
    PATHQUESTION_KBS,
    PATHQUESTION_LOADER_VERSION,
    read_pathquestion_kb,
)
from citegraph.kg._load_rdf import RDF_LOADER_VERSION, read_rdf
from citegraph.kg._ondisk import (
    ProgressCallback,
    build_entry,
    default_cache_dir,
    hash_sources,
    read_marker,
)
from citegraph.kg._oxigraph import OxigraphKG

BIOKALMA_FILES = ("simple_question_graph.json", "complex_question_graph.json")
CODEX_SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class SourceLoader:
    """A named reader from source files to quads; ``version`` is part of the cache key."""

    name: str
    version: int
    read: Callable[[Sequence[Path]], Iterator[Quad]]


LOADERS: dict[str, SourceLoader] = {
    "biokalma": SourceLoader("biokalma", BIOKALMA_LOADER_VERSION, read_biokalma),
    "codex": SourceLoader("codex", CODEX_LOADER_VERSION, read_codex),
    "pathquestion": SourceLoader("pathquestion", PATHQUESTION_LOADER_VERSION, read_pathquestion_kb),
    "grailqa": SourceLoader("grailqa", GRAILQA_LOADER_VERSION, read_grailqa_kb),
    "rdf": SourceLoader("rdf", RDF_LOADER_VERSION, read_rdf),
}


def open_source(
    kind: str,
    paths: Sequence[Path],
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: ProgressCallback | None = None,
) -> OxigraphKG:
    """Load ``paths`` with the loader ``kind`` (see :meth:`OxigraphKG.from_source`)."""
    loader = LOADERS.get(kind)
    if loader is None:
        raise ConfigError(f"unknown KG source kind {kind!r}; expected one of {sorted(LOADERS)}")
    if not paths:
        raise ConfigError(f"no source files given for the {kind} loader")
    source_hash = hash_sources(loader.name, loader.version, paths)
    if not use_cache:
        if progress:
            progress(f"loading {kind} into memory ({len(paths)} files)")
        return OxigraphKG.in_memory(loader.read(paths), source_hash=source_hash)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    entry = root / source_hash
    imported = False
    if read_marker(entry) is None:
        if progress:
            progress(f"importing {kind} ({len(paths)} files) into {entry}")
        meta = {
            "loader": loader.name,
            "loader_version": loader.version,
            "files": [p.name for p in paths],
        }
        build_entry(root, source_hash, loader.read(paths), meta, progress)
        imported = True
    elif progress:
        progress(f"opening cached {kind} store {entry}")
    kg = OxigraphKG.open(entry)
    kg.imported = imported
    return kg


def _existing(paths: Iterable[Path]) -> list[Path]:
    out = list(paths)
    for path in out:
        if not path.is_file():
            raise DataNotFoundError("file not found (is the data directory right?)", path=path)
    return out


def biokalma_source_files(data_dir: str | Path) -> list[Path]:
    """The BioKaLMA question-graph files under ``data_dir/biokalma/``."""
    return _existing(Path(data_dir) / "biokalma" / name for name in BIOKALMA_FILES)


def codex_source_files(data_dir: str | Path, split: Sequence[str] = CODEX_SPLITS) -> list[Path]:
    """The CoDEx-S files under ``data_dir/codex_s/``: metadata, then ``triples/<split>.txt``."""
    if isinstance(split, str):
        split = (split,)
    base = Path(data_dir) / "codex_s"
    meta = [base / name for name in (NAMES, DESCRIPTIONS, RELATIONS, TYPE_LABELS, ENTITY_TYPES)]
    return _existing([*meta, *(base / "triples" / f"{name}.txt" for name in split)])


def pathquestion_source_files(data_dir: str | Path, kb: str = "2h") -> list[Path]:
    """The PathQuestion KB file ``kb`` (``2h``, ``3h``, ``pql2``, ``pql3``) under
    ``data_dir/pathquestion/``."""
    name = PATHQUESTION_KBS.get(kb.lower())
    if name is None:
        raise ConfigError(
            f"unknown PathQuestion KB {kb!r}; expected one of {list(PATHQUESTION_KBS)}"
        )
    return _existing([Path(data_dir) / "pathquestion" / name])


def grailqa_source_files(data_dir: str | Path) -> list[Path]:
    """``derived/grailqa_tog_single_edge_triples.jsonl``, plus ``kgqa_tog/grailqa.json`` (entity
    classes and names) when it exists."""
    triples = _existing([Path(data_dir) / "derived" / TRIPLES_FILE])
    questions = Path(data_dir) / "kgqa_tog" / QUESTIONS_FILE
    return triples + ([questions] if questions.is_file() else [])


def load_biokalma_kg(
    data_dir: str | Path,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: ProgressCallback | None = None,
) -> OxigraphKG:
    """The BioKaLMA biography KG: every entity of both question files (about 1,076 people).

    Args:
        data_dir: The folder that holds ``biokalma/``.
        cache_dir: Where on-disk stores are cached (default ``$CITEGRAPH_CACHE/kg``).
        use_cache: ``False`` loads into memory and writes nothing.
        progress: Receives a message per stage.
    """
    paths = biokalma_source_files(data_dir)
    return open_source(
        "biokalma", paths, cache_dir=cache_dir, use_cache=use_cache, progress=progress
    )


def load_codex_kg(
    data_dir: str | Path,
    split: Sequence[str] = CODEX_SPLITS,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: ProgressCallback | None = None,
) -> OxigraphKG:
    """The CoDEx-S KG: the triples of the given splits with names, descriptions and types.

    Args:
        data_dir: The folder that holds ``codex_s/``.
        split: Which of ``train``, ``valid``, ``test`` to load (all by default).
        cache_dir: Where on-disk stores are cached (default ``$CITEGRAPH_CACHE/kg``).
        use_cache: ``False`` loads into memory and writes nothing.
        progress: Receives a message per stage.
    """
    paths = codex_source_files(data_dir, split)
    return open_source("codex", paths, cache_dir=cache_dir, use_cache=use_cache, progress=progress)


def load_rdf_kg(
    paths: Iterable[str | Path],
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: ProgressCallback | None = None,
) -> OxigraphKG:
    """A KG from RDF files (N-Triples, Turtle, N-Quads, TriG, RDF/XML; format by extension).

    Labels come from ``rdfs:label``; see :mod:`citegraph.kg._load_rdf` for the details.
    """
    files = _existing(Path(p) for p in paths)
    return open_source("rdf", files, cache_dir=cache_dir, use_cache=use_cache, progress=progress)


def load_pathquestion_kg(
    data_dir: str | Path,
    kb: str = "2h",
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: ProgressCallback | None = None,
) -> OxigraphKG:
    """A PathQuestion KB: ``2h`` (for PQ-2H), ``3h`` (PQ-3H), ``pql2`` (PQL-2H) or ``pql3``
    (PQL-3H). Entities and relations keep the KB's names as ids (see
    :mod:`citegraph.kg._load_pathquestion`).

    Args:
        data_dir: The folder that holds ``pathquestion/``.
        kb: Which KB.
        cache_dir: Where on-disk stores are cached (default ``$CITEGRAPH_CACHE/kg``).
        use_cache: ``False`` loads into memory and writes nothing.
        progress: Receives a message per stage.

    Raises:
        ConfigError: an unknown ``kb``.
        DataNotFoundError: the KB file is missing.
    """
    paths = pathquestion_source_files(data_dir, kb)
    return open_source(
        "pathquestion", paths, cache_dir=cache_dir, use_cache=use_cache, progress=progress
    )


def load_grailqa_kg(
    data_dir: str | Path,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: ProgressCallback | None = None,
) -> OxigraphKG:
    """The GrailQA mini KB: the Freebase facts of GrailQA's single-edge questions, with answer
    and topic-entity types (see :mod:`citegraph.kg._load_grailqa`).

    Args:
        data_dir: The folder that holds ``derived/`` (and ``kgqa_tog/``).
        cache_dir: Where on-disk stores are cached (default ``$CITEGRAPH_CACHE/kg``).
        use_cache: ``False`` loads into memory and writes nothing.
        progress: Receives a message per stage.
    """
    paths = grailqa_source_files(data_dir)
    return open_source(
        "grailqa", paths, cache_dir=cache_dir, use_cache=use_cache, progress=progress
    )
