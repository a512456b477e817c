"""The dataset KGs by name: ``load_biokalma_kg``, ``load_codex_kg`` ... over
:meth:`OxigraphKG.from_source`.

Each takes the data directory (the folder that holds ``biokalma/``, ``codex_s/``...; left out,
it is found as ``citegraph.io.resolve_data_dir`` finds it, the same way ``load_biokalma()``
does), finds its files there (:mod:`citegraph.kg._sources`) and loads them through the on-disk
cache: the sources are hashed (SHA-256 over the loader, its version, the IRI-scheme version and
each file's name and bytes) and ``<cache_dir>/<hash>/`` is opened read-only when it is complete,
else imported (see :mod:`citegraph.kg._ondisk`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Unpack

from citegraph.io import resolve_data_dir
from citegraph.kg._ondisk import LoadOptions
from citegraph.kg._oxigraph import OxigraphKG
from citegraph.kg._sources import (
    CODEX_SPLITS,
    biokalma_source_files,
    codex_source_files,
    grailqa_source_files,
    pathquestion_source_files,
    rdf_source_files,
)


def load_biokalma_kg(
    data_dir: str | Path | None = None,
    **options: Unpack[LoadOptions],
) -> OxigraphKG:
    """The BioKaLMA biography KG: every entity of both question files (about 1,076 people).

    Args:
        data_dir: The folder that holds ``biokalma/``; None: found as
            :func:`~citegraph.io.resolve_data_dir` finds it (``$CITEGRAPH_DATA``, then
            ``../shared/data`` from the working directory or the checkout), like
            ``load_biokalma()``.
        **options: ``cache_dir``, ``use_cache``, ``progress`` (:class:`LoadOptions`).
    """
    paths = biokalma_source_files(resolve_data_dir(data_dir))
    return OxigraphKG.from_source("biokalma", paths, **options)


def load_codex_kg(
    data_dir: str | Path | None = None,
    split: Sequence[str] = CODEX_SPLITS,
    **options: Unpack[LoadOptions],
) -> OxigraphKG:
    """The CoDEx-S KG: the triples of the given splits with names, descriptions and types.

    Args:
        data_dir: The folder that holds ``codex_s/``; None: found as
            :func:`~citegraph.io.resolve_data_dir` finds it (``$CITEGRAPH_DATA``, then
            ``../shared/data`` from the working directory or the checkout), like
            ``load_biokalma()``.
        split: Which of ``train``, ``valid``, ``test`` to load (all by default).
        **options: ``cache_dir``, ``use_cache``, ``progress`` (:class:`LoadOptions`).
    """
    paths = codex_source_files(resolve_data_dir(data_dir), split)
    return OxigraphKG.from_source("codex", paths, **options)


def load_rdf_kg(
    paths: Iterable[str | Path],
    *,
    label_predicates: Sequence[str] = (),
    **options: Unpack[LoadOptions],
) -> OxigraphKG:
    """A KG from RDF files (N-Triples, Turtle, N-Quads, TriG, RDF/XML, JSON-LD; format by
    extension).

    Names come from ``rdfs:label``, ``skos:prefLabel``, ``skos:altLabel``, ``schema:name`` and
    ``foaf:name``; see :mod:`citegraph.kg._load_rdf` for the details.

    Args:
        paths: The files.
        label_predicates: IRIs of more label predicates, preferred to those for display names
            (part of the on-disk cache key).
        **options: ``cache_dir``, ``use_cache``, ``progress`` (:class:`LoadOptions`).
    """
    files = rdf_source_files(paths)
    read_options = {"label_predicates": list(label_predicates)} if label_predicates else None
    return OxigraphKG.from_source("rdf", files, read_options=read_options, **options)


def load_pathquestion_kg(
    data_dir: str | Path | None = None,
    kb: str = "2h",
    **options: Unpack[LoadOptions],
) -> OxigraphKG:
    """A PathQuestion KB: ``2h`` (for PQ-2H), ``3h`` (PQ-3H), ``pql2`` (PQL-2H) or ``pql3``
    (PQL-3H). Entities and relations keep the KB's names as ids (see
    :mod:`citegraph.kg._load_pathquestion`).

    Args:
        data_dir: The folder that holds ``pathquestion/``; None: found as
            :func:`~citegraph.io.resolve_data_dir` finds it (``$CITEGRAPH_DATA``, then
            ``../shared/data`` from the working directory or the checkout), like
            ``load_biokalma()``.
        kb: Which KB.
        **options: ``cache_dir``, ``use_cache``, ``progress`` (:class:`LoadOptions`).

    Raises:
        ConfigError: an unknown ``kb``.
        DataNotFoundError: the KB file is missing.
    """
    paths = pathquestion_source_files(resolve_data_dir(data_dir), kb)
    return OxigraphKG.from_source("pathquestion", paths, **options)


def load_grailqa_kg(
    data_dir: str | Path | None = None,
    **options: Unpack[LoadOptions],
) -> OxigraphKG:
    """The GrailQA mini KB: the Freebase facts of GrailQA's single-edge questions, with answer
    and topic-entity types (see :mod:`citegraph.kg._load_grailqa`).

    Args:
        data_dir: The folder that holds ``derived/`` (and ``kgqa_tog/``); None: found as
            :func:`~citegraph.io.resolve_data_dir` finds it (``$CITEGRAPH_DATA``, then
            ``../shared/data`` from the working directory or the checkout), like
            ``load_biokalma()``.
        **options: ``cache_dir``, ``use_cache``, ``progress`` (:class:`LoadOptions`).
    """
    paths = grailqa_source_files(resolve_data_dir(data_dir))
    return OxigraphKG.from_source("grailqa", paths, **options)
