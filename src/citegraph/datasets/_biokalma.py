"""BioKaLMA, the KaLMA paper's dataset: 1,085 questions in two phrasings with their KG graphs.

Split ``general`` is ``simple_question_graph.json`` and ``specific`` is
``complex_question_graph.json``. Each entry is ``[question, [entity_dict, ...]]``; an entity dict
maps Wikidata property labels to value labels plus ``qid`` and ``name``. Sample ids are
``general-<index>`` / ``specific-<index>`` (zero-based position in the file). 98 entries have no
graph: they are kept and marked ``has_graph=False``. The general file prefixes most questions
with a stray ``"question: "``, which is removed (``prefix_stripped=True``). An entity-dict value may
also be a JSON list of value labels (one fact each), as ``kalma build`` writes them. A lone
surrogate in an entry's text (JSON's ``\\ud800`` escape) is read as U+FFFD, with one warning per
file (:class:`~citegraph.io.TextWarning`).

:func:`load_kalma_dataset` reads BioKaLMA itself or any dataset directory in its format (the output
of ``citegraph kalma build``): a directory holding both files, with the same sample ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.io import (
    JsonArrayIndex,
    SurrogateTally,
    dataset_file,
    load_json,
    regular_file,
    resolve_data_dir,
    without_surrogates,
)
from citegraph.kg import Entity, Subgraph

Split = Literal["general", "specific"]

SPLIT_FILES: dict[str, str] = {
    "general": "simple_question_graph.json",
    "specific": "complex_question_graph.json",
}
_PREFIX = "question: "


class BioKaLMASample(BaseModel):
    """One BioKaLMA question with the KG graphs retrieved for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="'general-<index>' or 'specific-<index>'.")
    split: Split
    index: int = Field(description="Zero-based position in the split's file.")
    question: str = Field(description="The question, stray 'question: ' prefix removed.")
    prefix_stripped: bool = Field(default=False, description="Whether that prefix was removed.")
    graphs: tuple[Subgraph, ...] = Field(default=(), description="One-hop graph per person.")

    @property
    def has_graph(self) -> bool:
        """False for the 98 entries that came without any graph."""
        return bool(self.graphs)

    @property
    def entities(self) -> tuple[Entity, ...]:
        """The people the question is about."""
        return tuple(g.center for g in self.graphs)


def biokalma_path(split: Split, data_dir: str | Path | None = None) -> Path:
    """The JSON file of a split."""
    if split not in SPLIT_FILES:
        raise ConfigError(f"unknown BioKaLMA split {split!r}; choose 'general' or 'specific'")
    return dataset_file(resolve_data_dir(data_dir), "biokalma", SPLIT_FILES[split])


def load_biokalma(split: Split, data_dir: str | Path | None = None) -> list[BioKaLMASample]:
    """Load one BioKaLMA split.

    Args:
        split: ``"general"`` or ``"specific"``.
        data_dir: The data directory (see :func:`resolve_data_dir`).

    Raises:
        DataError: the file is malformed; names the entry and field.
    """
    return _load_file(split, biokalma_path(split, data_dir))


#: The dataset name :func:`load_kalma_dataset` resolves in the data directory.
BIOKALMA = "biokalma"


def kalma_dataset_path(
    dataset: str | Path, split: Split, data_dir: str | Path | None = None
) -> Path:
    """The JSON file of a split of a KaLMA-style dataset (the file to hash for provenance).

    Args:
        dataset: ``"biokalma"`` (found in the data directory, as :func:`biokalma_path`), or the
            path of a dataset directory holding ``simple_question_graph.json`` and
            ``complex_question_graph.json`` (what ``citegraph kalma build`` writes). Only the
            string ``"biokalma"`` names the dataset; write ``./biokalma`` for a directory of
            that name.
        split: ``"general"`` or ``"specific"``.
        data_dir: The data directory; used for ``"biokalma"`` only.

    Raises:
        ConfigError: unknown split.
        DataNotFoundError: the directory or the split's file does not exist.
        DataError: the split's file is a directory or not a regular file.
    """
    if split not in SPLIT_FILES:
        raise ConfigError(f"unknown KaLMA split {split!r}; choose 'general' or 'specific'")
    if isinstance(dataset, str) and dataset == BIOKALMA:
        return biokalma_path(split, data_dir)
    directory = Path(dataset).expanduser()
    if not directory.is_dir():
        raise DataNotFoundError(
            "not a dataset directory: give 'biokalma' or a directory written by "
            "'citegraph kalma build' (to score answers over your own KG, give it as --kg)",
            path=directory,
        )
    return regular_file(
        directory / SPLIT_FILES[split],
        missing=f"the {split} split's file is missing: a KaLMA dataset directory holds "
        f"{SPLIT_FILES['general']} and {SPLIT_FILES['specific']} "
        "(written by 'citegraph kalma build')",
        expected="a JSON file",
    )


def load_kalma_dataset(
    dataset: str | Path, split: Split, data_dir: str | Path | None = None
) -> list[BioKaLMASample]:
    """Load one split of BioKaLMA or of a dataset directory in its format.

    Sample ids are ``general-<i>`` / ``specific-<i>`` (position in the file) for both.

    Args:
        dataset: ``"biokalma"`` or a dataset directory (see :func:`kalma_dataset_path`).
        split: ``"general"`` or ``"specific"``.
        data_dir: The data directory; used for ``"biokalma"`` only.

    Raises:
        ConfigError: unknown split.
        DataNotFoundError: the directory or the split's file does not exist.
        DataError: the file is malformed; names the entry and field.
    """
    return _load_file(split, kalma_dataset_path(dataset, split, data_dir))


class KalmaSplit:
    """One split of a KaLMA-style dataset, checked entry by entry as :func:`load_kalma_dataset`
    checks it, then read again an entry at a time: a run over some of its questions holds where
    each entry is in the file, not the split's graphs."""

    def __init__(
        self, dataset: str | Path, split: Split, data_dir: str | Path | None = None
    ) -> None:
        """Find and check every entry of the split's file (the arguments and errors of
        :func:`load_kalma_dataset`; a malformed file's error also names the line)."""
        self.split: Split = split
        self.path = kalma_dataset_path(dataset, split, data_dir)
        self._entries = JsonArrayIndex(self.path, what=_WHAT)
        tally = SurrogateTally(self.path, unit="entry", names=_FIELDS)
        self._with_graph = bytearray(
            bool(_checked(index, tally.clean(entry, index), self.path)[1])
            for index, entry in enumerate(self._entries.entries())
        )
        tally.warn()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def ids(self) -> list[str]:
        """Every sample id, in file order (``<split>-0`` ...)."""
        return [f"{self.split}-{i}" for i in range(len(self))]

    def has_graph(self, sample_id: str) -> bool:
        """Whether the entry came with a graph (:attr:`BioKaLMASample.has_graph`), without
        building it."""
        index = self.index_of(sample_id)
        return index is not None and bool(self._with_graph[index])

    def index_of(self, sample_id: str) -> int | None:
        """The position of ``<split>-<i>`` in the file, or None when the split has no such id."""
        prefix, _, number = sample_id.rpartition("-")
        if prefix != self.split or not number.isdigit() or number != str(int(number)):
            return None
        index = int(number)
        return index if index < len(self) else None

    def samples(self, sample_ids: Sequence[str]) -> list[BioKaLMASample]:
        """The samples of ``sample_ids`` (``<split>-<i>``), read again from the file.

        Raises:
            DataError: the split has no such id, or the file changed since it was checked.
        """
        indices = [self._index(sid) for sid in sample_ids]
        entries = self._entries.read(indices)
        return [
            _sample(self.split, i, entry, self.path)
            for i, entry in zip(indices, entries, strict=True)
        ]

    def _index(self, sample_id: str) -> int:
        index = self.index_of(sample_id)
        if index is None:
            raise DataError(f"no sample {sample_id!r} in this split", path=self.path)
        return index


_WHAT = "a JSON list of [question, [entity, ...]] entries"
_FIELDS = ("question", "entities")


def _load_file(split: Split, path: Path) -> list[BioKaLMASample]:
    entries = load_json(path)
    if not isinstance(entries, list):
        raise DataError(f"expected {_WHAT}", path=path)
    tally = SurrogateTally(path, unit="entry", names=_FIELDS)
    samples = [_sample(split, i, tally.clean(entry, i), path) for i, entry in enumerate(entries)]
    tally.warn()
    return samples


def _sample(split: Split, index: int, entry: object, path: Path) -> BioKaLMASample:
    """The sample of entry ``index``; a lone surrogate in its text is read as U+FFFD (the
    readers' rule: :class:`~citegraph.io.SurrogateTally` counts and warns when checking)."""
    question, entities = _checked(index, without_surrogates(entry)[0], path)
    stripped = question.startswith(_PREFIX)
    return BioKaLMASample(
        id=f"{split}-{index}",
        split=split,
        index=index,
        question=question[len(_PREFIX) :] if stripped else question,
        prefix_stripped=stripped,
        graphs=tuple(Subgraph.from_entity_dict(entity) for entity in entities),
    )


def _checked(index: int, entry: object, path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The question and entity dicts of a well-formed entry: what :func:`_sample` needs, and
    all it needs (a checked entity dict always builds a graph: its values become strings)."""
    where = f"entry {index}"
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
        raise DataError(f"{where}: expected [question, [entity, ...]]", path=path)
    question, entities = entry
    if not isinstance(entities, list):
        raise DataError(f"{where}: entities must be a list", path=path, field="entities")
    for j, ent in enumerate(entities):
        if not isinstance(ent, dict) or "qid" not in ent:
            raise DataError(f"{where}: entity {j} has no 'qid'", path=path, field="qid")
        for key, value in ent.items():
            if isinstance(value, list) and not all(isinstance(v, str | None) for v in value):
                raise DataError(
                    f"{where}: entity {j}: a list value must hold strings", path=path, field=key
                )
    return question, entities
