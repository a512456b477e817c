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
    """A knowledge-graph entity: id, English name and the labels of its types (P31).

    ``id`` is the full id (a QID, or an RDF entity's IRI) used everywhere facts are stored and
    compared; ``short_id`` is presentation only (see :mod:`citegraph.kg._short_ids`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Entity id, e.g. 'Q206534'.")
    name: str = Field(description="English label.")
    types: tuple[str, ...] = Field(
        default=(), description="Labels of the entity's 'instance of' types, e.g. ('human',)."
    )
    description: str | None = Field(default=None, description="Short description, if known.")
    short_id: str | None = Field(
        default=None,
        description="How prompts and pages show the id when it is long, e.g. 'ex:MarieCurie' "
        "for 'http://example.org/kg/MarieCurie'; None when the id is shown as it is (QIDs).",
    )

    @property
    def display_id(self) -> str:
        """The id as prompts and pages show it: :attr:`short_id`, else :attr:`id`."""
        return self.short_id or self.id


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
        """BioKaLMA-style dict: relation label -> first value, plus ``name`` and ``qid``.

        One value per relation, as BioKaLMA's files and the authors' prompt string hold it; a
        relation's later values are left out. Use :meth:`as_entity_dict` to keep every fact.
        """
        out: dict[str, str] = {"name": self.center.name}
        for t in self.triples:
            out.setdefault(t.relation, t.value)
        out["qid"] = self.center.id
        return out

    def as_entity_dict(self) -> dict[str, str | list[str]]:
        """Every fact as an entity dict: a relation with several values maps to a JSON list.

        A relation with one value maps to a plain string, as in BioKaLMA. Keys follow the order
        in which relations first appear among the triples; ``name`` is the centre's name (first
        in its list when the graph holds other ``name`` facts, at the front when it holds none)
        and ``qid`` comes last. :meth:`from_entity_dict` reads it back to the same centre and
        triples, in the same order, for every graph whose ``name`` facts start with the centre's
        name (every graph :meth:`from_entity_dict` builds); ids, descriptions and
        ``relation_id`` / ``value_id`` metadata are not part of the format.
        """
        grouped: dict[str, list[str]] = {}
        for t in self.triples:
            values = grouped.setdefault(t.relation, [])
            if t.value not in values:
                values.append(t.value)
        name = self.center.name
        names = grouped.pop("name", None)
        out: dict[str, str | list[str]] = {} if names is not None else {"name": name}
        for relation in [t.relation for t in self.triples]:
            if relation in out:
                continue
            if relation == "name":
                others = [n for n in names or () if n != name]
                out["name"] = [name, *others] if others else name
            else:
                values = grouped[relation]
                out[relation] = values[0] if len(values) == 1 else values
        out["qid"] = self.center.id
        return out

    @classmethod
    def from_entity_dict(cls, entity: Mapping[str, Any]) -> Subgraph:
        """Build from a BioKaLMA entity dict (relation label -> value label, plus qid and name).

        A value may also be a JSON list of value labels (what ``kalma build`` writes for a
        relation with several values): one triple per element, in order, repeated elements once.
        Empty values (BioKaLMA writes ``"date_of_death": ""`` for living people, and empty list
        elements) are not facts and are skipped. The ``name`` key is kept as a fact too, because
        KaLMA answers cite ``[Qxx, name: ...]`` and the authors' code counts such citations as
        correct; a list-valued ``name`` gives the centre its first non-empty element.
        """
        qid = str(entity["qid"])
        raw_name = entity.get("name", "")
        name = str(raw_name) if not isinstance(raw_name, list) else next(iter(_texts(raw_name)), "")
        types = [v for k, raw in entity.items() if k == "instance of" for v in _texts(raw)]
        triples = [
            {"subject": qid, "relation": str(k), "value": v, "subject_label": name}
            for k, raw in entity.items()
            if k != "qid"
            for v in _texts(raw)
        ]
        # One validation of the whole graph (in pydantic-core) instead of a model per triple:
        # a third less time to load a dataset of graphs (BioKaLMA's 24k facts).
        center = {"id": qid, "name": name, "types": types}
        return cls.model_validate({"center": center, "triples": triples})


def _texts(value: Any) -> list[str]:
    """The value labels of an entity-dict value: ``[]`` for an empty value, one per list item."""
    if not isinstance(value, list):
        return [] if value in ("", None) else [str(value)]
    out: list[str] = []
    for item in value:
        if item in ("", None):
            continue
        text = str(item)
        if text not in out:
            out.append(text)
    return out
