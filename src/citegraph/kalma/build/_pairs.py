"""Person selection for ``kalma build`` (KaLMA paper, Appendix A.1).

A benchmark item starts from two people and the relation between them, ``<William Shakespeare,
spouse, Anne Hathaway>``, optionally with a paragraph about them (the paper took these from the
human-annotated set of a biographical relation-extraction database). Pairs come from a CSV file
(:func:`read_pairs_csv`) or are sampled from the KG itself (:func:`sample_pairs`). The paper keeps
a pair only when both names are complete (:func:`is_complete_name`, :func:`filter_complete`).
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, DataError
from citegraph.io import read_csv_file
from citegraph.kalma.build._links import connected_pairs, fold_relation
from citegraph.kalma.retrieve import type_matches
from citegraph.kg import Entity, OxigraphKG, Subgraph, Triple

#: Person-to-person relations used to sample pairs, as Wikidata English labels. BioKaLMA's KG
#: connects people by father, child, spouse, mother, relative, cohabitant, professional or
#: sports partner, student, student of, influenced by (in that order of frequency); CoDEx uses
#: child, spouse, sibling, unmarried partner, influenced by. The rest are Wikidata's other
#: human-to-human relations of family, partnership, teaching and influence ("cohabitant" and
#: "partner" are older labels of P451 "unmarried partner"; "partner in business or sport" is the
#: current label of P1327). Left out: relations whose value is often not a person (succeeds,
#: owned by, named after, head of state) and "killed by".
PERSON_RELATIONS: tuple[str, ...] = (
    "father",
    "mother",
    "child",
    "spouse",
    "sibling",
    "relative",
    "cohabitant",
    "unmarried partner",
    "partner",
    "professional or sports partner",
    "partner in business or sport",
    "godparent",
    "student of",
    "student",
    "doctoral advisor",
    "doctoral student",
    "influenced by",
)
#: Source of a pair sampled from the KG.
KG_SAMPLE = "kg-sample"
#: The person type: candidates must be of this type when their types are known.
PERSON_TYPE = "human"
#: At most this many same-named candidates are considered per name.
CANDIDATE_LIMIT = 50


class PersonPair(BaseModel):
    """Two people and the relation between them: ``name_a --relation--> name_b``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name_a: str = Field(description="The first person's name, e.g. 'William Shakespeare'.")
    relation: str = Field(description="The relation label, e.g. 'spouse'.")
    name_b: str = Field(description="The second person's name, e.g. 'Anne Hathaway'.")
    paragraph: str | None = Field(default=None, description="Seed paragraph, if given.")
    source: str = Field(description="'csv:<path>:<line>' or 'kg-sample'.")
    qid_a: str | None = Field(default=None, description="Known id of person a (KG samples).")
    qid_b: str | None = Field(default=None, description="Known id of person b (KG samples).")


class DroppedPair(NamedTuple):
    """A pair left out by :func:`filter_complete`, and why."""

    pair: PersonPair
    reason: str


# ---------------------------------------------------------------- the pairs file
_COLUMNS = {"name1": "name1", "head": "name1", "relation": "relation", "name2": "name2",
            "tail": "name2", "paragraph": "paragraph", "text": "paragraph"}  # fmt: skip
_REQUIRED = ("name1", "relation", "name2")


def read_pairs_csv(path: str | Path) -> list[PersonPair]:
    """Read person pairs from a CSV file with a header row.

    Columns: ``name1,relation,name2`` and optionally ``paragraph`` (aliases ``head``, ``tail``,
    ``text``; compared case-insensitively; other columns are ignored). Cells are stripped; an
    empty paragraph is ``None``. Blank lines are skipped. A quoted cell may span lines; a pair's
    line is the line its record starts on.

    Raises:
        DataNotFoundError: the file does not exist.
        DataError: no header, a required column missing or given twice, a record with more
            cells than the header or a missing cell, an empty name or relation; the message
            names the file, the line and the field.
    """
    return read_csv_file(path, _read_rows, what="pairs file")


def _read_rows(lines: Iterable[str], path: Path) -> list[PersonPair]:
    reader = csv.reader(lines)
    columns: dict[str, int] | None = None
    width = 0
    pairs: list[PersonPair] = []
    next_line = 1
    for row in reader:
        line, next_line = next_line, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        if columns is None:
            columns, width = _header(row, path, line), len(row)
            continue
        if any(cell.strip() for cell in row[width:]):
            raise DataError(f"{len(row)} cells, the header has {width}", path=path, line=line)
        cells = {}
        for field, index in columns.items():
            if index >= len(row):
                raise DataError("missing cell", path=path, line=line, field=field)
            cells[field] = row[index].strip()
        for field in _REQUIRED:
            if not cells[field]:
                raise DataError("empty cell", path=path, line=line, field=field)
        pairs.append(
            PersonPair(
                name_a=cells["name1"],
                relation=cells["relation"],
                name_b=cells["name2"],
                paragraph=cells.get("paragraph") or None,
                source=f"csv:{path}:{line}",
            )
        )
    if columns is None:
        raise DataError("empty file: expected a header name1,relation,name2[,paragraph]", path=path)
    return pairs


def _header(row: list[str], path: Path, line: int) -> dict[str, int]:
    columns: dict[str, int] = {}
    for index, cell in enumerate(row):
        field = _COLUMNS.get(cell.strip().casefold())
        if field is None:
            continue
        if field in columns:
            raise DataError("column given twice (or with its alias)", path=path, line=line,
                            field=cell.strip())  # fmt: skip
        columns[field] = index
    for field in _REQUIRED:
        if field not in columns:
            raise DataError(
                "the header lacks this column (expected name1,relation,name2[,paragraph] or "
                "head,relation,tail[,text])", path=path, line=line, field=field,
            )  # fmt: skip
    return columns


# ---------------------------------------------------------------- complete names
#: Titles that may precede a name (compared case-folded, a final "." removed); dropped only at
#: the start, so "Stephen King" and "Yves Saint Laurent" keep their parts.
TITLES = frozenset((
    "sir", "dame", "lord", "lady", "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor",
    "rev", "reverend", "fr", "st", "saint", "king", "queen", "prince", "princess", "pope",
    "emperor", "empress", "duke", "duchess", "count", "countess", "baron", "baroness", "hon",
    "capt", "col", "gen", "lt", "sgt",
))  # fmt: skip
#: Suffixes that may follow a name (case-folded, final "." removed); dropped only at the end.
SUFFIXES = frozenset(("jr", "sr", "junior", "senior", "esq", "phd", "md"))
#: Regnal and generational numbers, never name parts (compared exactly: "Liv" is a name).
ROMAN_NUMERALS = frozenset((
    "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV", "XVI",
))  # fmt: skip
#: Lower-case particles that are not name parts by themselves ("van" in "Ludwig van Beethoven").
PARTICLES = frozenset((
    "of", "the", "de", "da", "di", "do", "du", "del", "della", "der", "den", "van", "von", "la",
    "le", "bin", "ibn", "al",
))  # fmt: skip
_INITIALS = re.compile(r"[^\W\d_]\.?|(?:[^\W\d_]\.){2,}[^\W\d_]?\.?")
_PUNCT = ",;:()[]\"'"


def _bare(token: str) -> str:
    return token.casefold().rstrip(".")


def name_parts(name: str) -> list[str]:
    """The tokens of ``name`` that count as name parts under :func:`is_complete_name`."""
    tokens = [t.strip(_PUNCT) for t in name.split()]
    tokens = [t for t in tokens if any(ch.isalpha() for ch in t)]
    while tokens and _bare(tokens[0]) in TITLES:
        tokens.pop(0)
    while tokens and _bare(tokens[-1]) in SUFFIXES:
        tokens.pop()
    return [
        t
        for t in tokens
        if not _INITIALS.fullmatch(t) and t not in PARTICLES and t not in ROMAN_NUMERALS
    ]


def is_complete_name(name: str) -> bool:
    """Whether ``name`` has at least a given name and a family name (Appendix A.1).

    The rule: split on whitespace, strip surrounding punctuation (not dots) and drop tokens
    without a letter; drop leading titles (:data:`TITLES`: ``Sir``, ``Dr.``, ``King``...) and
    trailing suffixes (:data:`SUFFIXES`: ``Jr.``, ``Sr``...); then initials (``J``, ``J.``,
    ``J.R.R.``), Roman numerals (:data:`ROMAN_NUMERALS`: ``II``, ``III``...) and lower-case
    particles (:data:`PARTICLES`: ``van``, ``de``, ``of``...) are not name parts. A name is
    complete with two or more name parts, unless it is an epithet name, one with the word ``the``
    ("Catherine the Great").
    Hyphenated parts count once ("Jean-Paul Sartre" is complete; "J. R. R. Tolkien",
    "Queen Elizabeth II" and "Plato" are not). Names written without spaces (many Chinese and
    Japanese names in their own script) are one token and so incomplete; romanised "Sima Yi"
    (family + given name) is complete.
    """
    if any(_bare(token) == "the" for token in name.split()):
        return False
    return len(name_parts(name)) >= 2


def filter_complete(pairs: Sequence[PersonPair]) -> tuple[list[PersonPair], list[DroppedPair]]:
    """Split pairs into those whose two names are complete and those left out (with why)."""
    kept: list[PersonPair] = []
    dropped: list[DroppedPair] = []
    for pair in pairs:
        names = (("name_a", pair.name_a), ("name_b", pair.name_b))
        bad = [f"{field} {name!r}" for field, name in names if not is_complete_name(name)]
        if bad:
            dropped.append(DroppedPair(pair, "incomplete name: " + ", ".join(bad)))
        else:
            kept.append(pair)
    return kept, dropped


# ---------------------------------------------------------------- sampling from the KG
def sample_pairs(
    kg: OxigraphKG, n: int, *, seed: int = 0, relations: Sequence[str] = PERSON_RELATIONS
) -> list[PersonPair]:
    """Sample ``n`` pairs of people connected by a person-to-person relation in ``kg``.

    Candidates: every fact ``a --r--> v`` of an entity ``a`` (in id order) with ``r`` in
    ``relations`` whose value is another entity ``b`` of the KG: ``v``'s id (entity values) or
    every entity labelled ``v`` exactly (label values, as in BioKaLMA). A candidate is kept when
    both names are complete, both people are humans (when their types are known), and
    disambiguation (A.2) of its names would choose exactly ``a`` and ``b``; one candidate per
    unordered pair and relation (the first in id order). The candidates are shuffled with
    ``random.Random(seed)`` and the first ``n`` returned, so a larger ``n`` extends a smaller
    one's list.

    Returns:
        At most ``n`` pairs (fewer when the KG has fewer), oriented as the fact (``name_a`` is
        its subject), with ``source='kg-sample'`` and the two ids.

    Raises:
        ConfigError: ``n`` is below 1.
    """
    if n < 1:
        raise ConfigError(f"the number of pairs to sample must be >= 1, got {n}")
    candidates = person_pair_candidates(kg, relations)
    random.Random(seed).shuffle(candidates)
    return candidates[:n]


def person_pair_candidates(
    kg: OxigraphKG, relations: Sequence[str] = PERSON_RELATIONS
) -> list[PersonPair]:
    """Every pair :func:`sample_pairs` may return, in id order (see there for the rules)."""
    graphs: dict[str, Subgraph] = {}
    found: dict[str, list[Entity]] = {}

    def graph(entity_id: str) -> Subgraph:
        if entity_id not in graphs:
            graphs[entity_id] = kg.subgraph_sync(entity_id)
        return graphs[entity_id]

    def named(name: str) -> list[Entity]:
        if name not in found:
            people = kg.find_entities_sync(name, case_sensitive=False, limit=CANDIDATE_LIMIT)
            found[name] = [e for e in people if type_matches(e, PERSON_TYPE)]
        return found[name]

    def resolves_to(pair: PersonPair) -> bool:
        found_a, found_b = named(pair.name_a), named(pair.name_b)
        graphs = {e.id: graph(e.id) for e in [*found_a, *found_b]}
        links = connected_pairs(pair.relation, found_a, found_b, graphs)
        return [(c.a, c.b) for c in links] == [(pair.qid_a, pair.qid_b)]

    out: list[PersonPair] = []
    seen: set[tuple[frozenset[str], str]] = set()
    for a_id in kg.entity_ids_sync():
        a = kg.entity_sync(a_id)
        if a is None or not type_matches(a, PERSON_TYPE) or not is_complete_name(a.name):
            continue
        for relation in relations:
            for fact in kg.facts_sync(a_id, relation):
                for b in _value_entities(kg, fact):
                    key = (frozenset((a.id, b.id)), fold_relation(relation))
                    if b.id == a.id or key in seen:
                        continue
                    seen.add(key)
                    if not type_matches(b, PERSON_TYPE) or not is_complete_name(b.name):
                        continue
                    if not graph(b.id).triples:  # a value without facts of its own
                        continue
                    pair = PersonPair(name_a=a.name, relation=fact.relation, name_b=b.name,
                                      source=KG_SAMPLE, qid_a=a.id, qid_b=b.id)  # fmt: skip
                    if resolves_to(pair):
                        out.append(pair)
    return out


def _value_entities(kg: OxigraphKG, fact: Triple) -> list[Entity]:
    if fact.value_id:
        entity = kg.entity_sync(fact.value_id)
        return [] if entity is None else [entity]
    return kg.find_entities_sync(fact.value, limit=CANDIDATE_LIMIT)
