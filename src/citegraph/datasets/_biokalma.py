"""BioKaLMA, the KaLMA paper's dataset: 1,085 questions in two phrasings with their KG graphs.

Split ``general`` is ``simple_question_graph.json`` and ``specific`` is
``complex_question_graph.json``. Each entry is ``[question, [entity_dict, ...]]``; an entity dict
maps Wikidata property labels to value labels plus ``qid`` and ``name``. Sample ids are
``general-<index>`` / ``specific-<index>`` (zero-based position in the file). 98 entries have no
graph: they are kept and marked ``has_graph=False``. The general file prefixes most questions
with a stray ``"question: "``, which is removed (``prefix_stripped=True``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph._json_file import load_json
from citegraph.datasets._location import dataset_file, resolve_data_dir
from citegraph.errors import ConfigError, DataError
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
    path = biokalma_path(split, data_dir)
    entries = load_json(path)
    if not isinstance(entries, list):
        raise DataError("expected a JSON list of [question, [entity, ...]] entries", path=path)
    return [_sample(split, i, entry, path) for i, entry in enumerate(entries)]


def _sample(split: Split, index: int, entry: object, path: Path) -> BioKaLMASample:
    where = f"entry {index}"
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
        raise DataError(f"{where}: expected [question, [entity, ...]]", path=path)
    question, entities = entry
    if not isinstance(entities, list):
        raise DataError(f"{where}: entities must be a list", path=path, field="entities")
    graphs = []
    for j, ent in enumerate(entities):
        if not isinstance(ent, dict) or "qid" not in ent:
            raise DataError(f"{where}: entity {j} has no 'qid'", path=path, field="qid")
        graphs.append(Subgraph.from_entity_dict(ent))
    stripped = question.startswith(_PREFIX)
    return BioKaLMASample(
        id=f"{split}-{index}",
        split=split,
        index=index,
        question=question[len(_PREFIX) :] if stripped else question,
        prefix_stripped=stripped,
        graphs=tuple(graphs),
    )
