"""The source loaders: which reader turns which files into citegraph's RDF layout.

Five loaders (see :mod:`citegraph.kg._rdf` for the layout): ``"biokalma"`` (BioKaLMA
question-graph JSON), ``"codex"`` (CoDEx-S), ``"pathquestion"`` (PathQuestion's KB files),
``"grailqa"`` (the GrailQA single-edge mini KB) and ``"rdf"`` (N-Triples, Turtle and other RDF
files), each with its version (part of the on-disk cache key), and where each dataset's files are
in the data directory. Opening them through the cache is :meth:`OxigraphKG.from_source`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import Quad

from citegraph.errors import ConfigError, DataNotFoundError
from citegraph.io import regular_file
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

BIOKALMA_FILES = ("simple_question_graph.json", "complex_question_graph.json")
CODEX_SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class SourceLoader:
    """A named reader from source files to quads; ``version`` is part of the cache key. The
    reader takes the files and, for the ``rdf`` loader, keyword options
    (``label_predicates``)."""

    name: str
    version: int
    read: Callable[..., Iterator[Quad]]


LOADERS: dict[str, SourceLoader] = {
    "biokalma": SourceLoader("biokalma", BIOKALMA_LOADER_VERSION, read_biokalma),
    "codex": SourceLoader("codex", CODEX_LOADER_VERSION, read_codex),
    "pathquestion": SourceLoader("pathquestion", PATHQUESTION_LOADER_VERSION, read_pathquestion_kb),
    "grailqa": SourceLoader("grailqa", GRAILQA_LOADER_VERSION, read_grailqa_kb),
    "rdf": SourceLoader("rdf", RDF_LOADER_VERSION, read_rdf),
}


def source_loader(kind: str) -> SourceLoader:
    """The loader named ``kind``.

    Raises:
        ConfigError: no such loader.
    """
    loader = LOADERS.get(kind)
    if loader is None:
        raise ConfigError(f"unknown KG source kind {kind!r}; expected one of {sorted(LOADERS)}")
    return loader


def _existing(paths: Iterable[Path]) -> list[Path]:
    out = list(paths)
    for path in out:
        if not path.is_file():
            raise DataNotFoundError("file not found (is the data directory right?)", path=path)
    return out


def rdf_source_files(paths: Iterable[str | Path]) -> list[Path]:
    """RDF files given by path (each must exist: a missing one is named as the KG file that
    does not exist, not as a dataset file).

    Raises:
        DataNotFoundError: a file does not exist.
        DataError: a path is a directory or not a regular file (``/dev/zero``: never read).
    """
    out = [Path(p) for p in paths]
    for path in out:
        regular_file(
            path,
            missing="the KG file does not exist (check the path given to --kg)",
            expected="an RDF file of the KG",
        )
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
