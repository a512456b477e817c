"""Typed knowledge-graph records: :class:`Triple`, :class:`Entity`, :class:`Subgraph`.

A triple is identified by ``(subject, relation, value)``: the centre entity's id (a Wikidata QID
such as ``Q206534``), the relation's English label (``place of birth``) and the value's label
(``Newark``). This is the identity KaLMA citations use, so equality and hashing use only that key;
the optional ids and labels are metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Keys of a BioKaLMA entity dict that are identity, not facts.
ENTITY_DICT_META_KEYS = frozenset({"qid", "name"})


class Triple(BaseModel):
    """One knowledge-graph fact: ``subject --relation--> value``.

    Equality and hashing use :attr:`key` only: two triples that name the same subject, relation
    label and value label are the same fact whatever metadata they carry.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str = Field(description="Centre entity id, e.g. the Wikidata QID 'Q206534'.")
    relation: str = Field(description="Relation label, e.g. 'place of birth'.")
    value: str = Field(description="Value label (entity name or literal), e.g. 'Newark'.")
    subject_label: str | None = Field(default=None, description="Centre entity's name, if known.")
    relation_id: str | None = Field(default=None, description="Relation id, e.g. 'P19', if known.")
    value_id: str | None = Field(
        default=None, description="Value entity id, e.g. 'Q18127', when the value is an entity."
    )

    @property
    def key(self) -> tuple[str, str, str]:
        """The identity of the fact: ``(subject, relation, value)``."""
        return (self.subject, self.relation, self.value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Triple):
            return self.key == other.key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.key)

    def as_list(self) -> list[str]:
        """The JSON form used in gold files and samples: ``[subject, relation, value]``."""
        return [self.subject, self.relation, self.value]

    def as_text(self) -> str:
        """``relation: value``: the hypothesis text KaLMA's alignment check uses."""
        return f"{self.relation}: {self.value}"

    @classmethod
    def from_list(cls, item: Iterable[str]) -> Triple:
        """Build from ``[subject, relation, value]``."""
        subject, relation, value = list(item)
        return cls(subject=subject, relation=relation, value=value)


class Entity(BaseModel):
    """A knowledge-graph entity: id, English name and the labels of its types (P31)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Entity id, e.g. 'Q206534'.")
    name: str = Field(description="English label.")
    types: tuple[str, ...] = Field(
        default=(), description="Labels of the entity's 'instance of' types, e.g. ('human',)."
    )
    description: str | None = Field(default=None, description="Short description, if known.")


class Subgraph(BaseModel):
    """The one-hop neighbourhood of a centre entity: the facts whose subject is the centre."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    center: Entity
    triples: tuple[Triple, ...] = ()

    def __iter__(self) -> Iterator[Triple]:  # type: ignore[override]
        return iter(self.triples)

    def __len__(self) -> int:
        return len(self.triples)

    def __contains__(self, triple: object) -> bool:
        return triple in self.triple_set

    @cached_property
    def triple_set(self) -> frozenset[Triple]:
        """The triples as a set, for O(1) membership tests (computed once)."""
        return frozenset(self.triples)

    def values(self, relation: str) -> list[str]:
        """All values of ``relation`` for the centre entity, in stored order."""
        return [t.value for t in self.triples if t.relation == relation]

    def as_dict(self) -> dict[str, str]:
        """BioKaLMA-style dict: relation label -> first value, plus ``name`` and ``qid``."""
        out: dict[str, str] = {"name": self.center.name}
        for t in self.triples:
            out.setdefault(t.relation, t.value)
        out["qid"] = self.center.id
        return out

    @classmethod
    def from_entity_dict(cls, entity: Mapping[str, Any]) -> Subgraph:
        """Build from a BioKaLMA entity dict (relation label -> value label, plus qid and name).

        Empty values (BioKaLMA writes ``"date_of_death": ""`` for living people) are not facts and
        are skipped. The ``name`` key is kept as a fact too, because KaLMA answers cite
        ``[Qxx, name: ...]`` and the authors' code counts such citations as correct.
        """
        qid = str(entity["qid"])
        name = str(entity.get("name", ""))
        types = tuple(str(v) for k, v in entity.items() if k == "instance of" and v)
        triples = tuple(
            Triple(subject=qid, relation=str(k), value=str(v), subject_label=name)
            for k, v in entity.items()
            if k != "qid" and v not in ("", None)
        )
        return cls(center=Entity(id=qid, name=name, types=types), triples=triples)
