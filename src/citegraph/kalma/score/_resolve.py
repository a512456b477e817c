"""Entity references in scoring inputs (gold subjects, answers' ``entities``) resolved to ids.

A reference is, in this order of preference:

1. an entity id: a QID, an IRI (``http://example.org/kg/MarieCurie``, also ``<...>``);
2. a short id, when the KG resolves them (``resolve_id``: a CURIE of the RDF file's prefixes such
   as ``ex:MarieCurie``, or a unique local name such as ``MarieCurie``); over SPARQL, where the
   endpoint is not searched by local name, a local name of the KG's own prefixes (``--prefix``)
   that is an entity (one query per prefix);
3. a label: the entities whose English label is the reference, compared case-insensitively.

One entity found: that is the id. Several: the reference is ambiguous, and two entities found
for one label (two people named "William Thomson") is a :class:`~citegraph.errors.DataError`
naming the file, line, field and the candidates, as is a reference that names nothing.

Over your own KG (``kalma score --kg``) the whole KG is searched (:func:`resolve_in_kg`). Over a
dataset, a gold subject is looked for among the entry's own graphs (:func:`resolve_in_graphs`):
a subject given as the name of one of them is taken as its id, and counted as a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import DataError, KGQueryError
from citegraph.kg import WELL_KNOWN_PREFIXES, KnowledgeGraph, Subgraph
from citegraph.runs import blocking

#: At most this many entities are looked up for one label (more than one is ambiguous anyway).
_LABEL_LIMIT = 10
#: A plain local name (``city_waw``, ``NielsBohr``): no spaces, colons or slashes.
_LOCAL_NAME = re.compile(r"[^\W\d][\w\-.]*(?<!\.)")
#: Candidates an error message lists.
_SHOWN = 5


class Reference(BaseModel):
    """Where an entity reference was read: for the error that names its file, line and field."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The reference as written.")
    path: Path
    line: int
    field: str = Field(description="The field it was in, e.g. 'knowledge' or 'entities'.")
    what: str = Field(description="What it is, for the message: 'item 2 subject', 'entity'.")


async def entity_matches(kg: KnowledgeGraph, text: str) -> tuple[str, ...]:
    """The ids of the entities ``text`` names in ``kg`` (see the module docstring): one id for
    an id or short id, the labelled entities otherwise (none: it names nothing)."""
    text = text.strip()
    resolve = getattr(kg, "resolve_id", None)
    if callable(resolve):
        found = resolve(text)  # over SPARQL, any CURIE of a known prefix: is it an entity?
        if isinstance(found, str) and await _is_entity(kg, found):
            return (found,)
    bare = text[1:-1] if text.startswith("<") and text.endswith(">") else text
    if " " not in bare and await _is_entity(kg, bare):
        return (bare,)
    if _LOCAL_NAME.fullmatch(text):  # over SPARQL: a local name of the KG's own prefixes
        found = [iri for iri in _in_own_namespaces(kg, text) if await _is_entity(kg, iri)]
        if found:
            return tuple(found)
    named = await kg.find_entities(text, case_sensitive=False, limit=_LABEL_LIMIT)
    return tuple(dict.fromkeys(e.id for e in named))


def _in_own_namespaces(kg: KnowledgeGraph, local: str) -> list[str]:
    """``local`` in each namespace of the KG's own prefixes (its files', ``--prefix``; not the
    well-known ones such as ``rdfs:``)."""
    prefixes = getattr(kg, "prefixes", None)
    prefixes = prefixes() if callable(prefixes) else prefixes
    if not isinstance(prefixes, dict):
        return []
    common = set(WELL_KNOWN_PREFIXES.values())
    return [ns + local for ns in dict.fromkeys(prefixes.values()) if ns not in common]


async def _is_entity(kg: KnowledgeGraph, entity_id: str) -> bool:
    try:
        graph = await kg.subgraph(entity_id)
    except (KGQueryError, ValueError):
        return False
    return bool(graph.triples)


async def resolve_in_kg_async(
    kg: KnowledgeGraph, references: Iterable[Reference]
) -> dict[str, str]:
    """Each distinct reference's entity id in ``kg`` (looked up once per text).

    Raises:
        DataError: a reference names no entity, or several (the first such reference met, with
            its file, line and field, and the candidates).
    """
    out: dict[str, str] = {}
    for ref in references:
        if ref.text in out:
            continue
        out[ref.text] = _one(ref, await entity_matches(kg, ref.text), "in the KG")
    return out


resolve_in_kg = blocking(resolve_in_kg_async)


def resolve_in_graphs(ref: Reference, graphs: Sequence[Subgraph]) -> str:
    """The centre id of the entry graph ``ref`` names: its id, else its name (case-insensitive).

    Raises:
        DataError: ``ref`` is the name of several of the graphs' centres, or neither the id nor
            the name of any.
    """
    ids = [g.center.id for g in graphs]
    if ref.text in ids:
        return ref.text
    folded = ref.text.strip().casefold()
    named = tuple(dict.fromkeys(g.center.id for g in graphs if g.center.name.casefold() == folded))
    return _one(ref, named, f"among the entry's graphs ({', '.join(ids)})")


def _one(ref: Reference, found: tuple[str, ...], where: str) -> str:
    if len(found) == 1:
        return found[0]
    if found:
        shown = ", ".join(found[:_SHOWN]) + (", ..." if len(found) > _SHOWN else "")
        message = (
            f"{ref.what} {ref.text!r} is ambiguous: it names {len(found)} entities {where} "
            f"({shown}); give the id of the one meant"
        )
    else:
        message = (
            f"{ref.what} {ref.text!r} names no entity {where}: give an entity id, IRI, short "
            "id or label"
        )
    raise DataError(message, path=ref.path, line=ref.line, field=ref.field)
