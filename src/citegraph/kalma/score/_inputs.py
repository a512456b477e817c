"""The checks ``kalma score`` makes on its input files before scoring, and the warnings they give.

No input hazard is silent: each is either a :class:`~citegraph.errors.DataError` naming the file,
line and field, or a warning counted in ``metrics.json`` under ``warnings`` (kind -> ``n``, the
first ids, the reason) that the CLI prints:

- ``question_mismatch`` (dataset mode): an answer's ``question`` is not its entry's question
  (compared after case and whitespace folding); the answer is scored against the entry's graphs.
- ``gold_subject_label`` (dataset mode): a gold fact's subject is the name of one of the entry's
  graphs rather than its id; it is taken as that id. A name shared by several of the entry's
  graphs, or a subject that is neither an id nor a name of them, is a DataError.
- ``gold_subject_outside_graphs`` (dataset mode): a gold fact's subject is an entity id (a QID or
  an IRI) of none of the entry's graphs; kept as given, so no citation of the graphs can match it
  and it counts against recall.
- ``gold_unmatched``: gold records for ids that have no answer (not used). When no gold id has
  an answer at all, it is a DataError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from citegraph.datasets import AnswerRecord, GoldRecord, KalmaSplit
from citegraph.errors import DataError
from citegraph.io import JsonlIndex
from citegraph.kalma.score._resolve import Reference, resolve_in_graphs
from citegraph.kg import Triple, is_iri, is_qid

#: Warning kind -> what it means (``metrics.json`` ``warnings.<kind>.reason``).
WARNINGS = {
    "question_mismatch": "answer's question differs from its dataset entry's question (scored "
    "against the entry's graphs)",
    "gold_subject_label": "gold subject given as a label, taken as the id of the entry graph "
    "of that name",
    "gold_subject_outside_graphs": "gold subject is an entity id of none of the entry's graphs "
    "(kept; no citation of the graphs can match it, so it counts against recall)",
    "gold_unmatched": "gold record for an id that has no answer (not used)",
}
#: Ids a warning lists.
FIRST_IDS = 5
#: Records read per chunk when a whole file is checked.
_CHUNK = 256
_GOLD_FIELDS = ("knowledge", "absent", "knowledge_injected")
_SPACES = re.compile(r"\s+")

T = TypeVar("T")

#: Gold id -> {subject as written: entity id}, for the subjects that are not ids.
SubjectMap = dict[str, dict[str, str]]


class InputWarnings:
    """Warnings found in the input files: per kind, the ids concerned (in file order)."""

    def __init__(self) -> None:
        self._ids: dict[str, list[str]] = {}

    def add(self, kind: str, sid: str) -> None:
        """Note a warning of ``kind`` (a key of :data:`WARNINGS`) about ``sid``."""
        ids = self._ids.setdefault(kind, [])
        if not ids or ids[-1] != sid:
            ids.append(sid)

    def as_json(self) -> dict[str, dict[str, Any]]:
        """``{kind: {"n", "ids" (the first few), "reason"}}`` for ``run.json`` notes."""
        return {
            kind: {"n": len(ids), "ids": ids[:FIRST_IDS], "reason": WARNINGS[kind]}
            for kind, ids in self._ids.items()
        }


def chunks(index: JsonlIndex[T]) -> Iterator[list[T]]:
    """Every record of ``index`` in file order, a chunk at a time."""
    for start in range(0, len(index), _CHUNK):
        yield index.read(range(start, min(start + _CHUNK, len(index))))


def same_question(given: str, expected: str) -> bool:
    """Whether two questions are the same after case and whitespace folding (and without
    BioKaLMA's ``question:`` prefix, which its loader strips)."""
    return _fold(given) == _fold(expected)


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold().removeprefix("question:").lstrip()


def check_dataset_answers(
    answers: JsonlIndex[AnswerRecord], split: KalmaSplit, warnings: InputWarnings
) -> None:
    """Every answer id is in the split; a ``question`` that is not its entry's is a warning.

    Raises:
        DataError: an id is not in the split, or an answer gives ``entities`` (they are read
            over your own KG only); names the file, line and field.
    """
    for position, sid in enumerate(answers.ids):
        if split.index_of(sid) is None:
            hint = f"ids of this split run from {split.split}-0 to {split.split}-{len(split) - 1}"
            raise DataError(
                f"id {sid!r} is not in BioKaLMA's {split.split} split ({hint}); to score "
                "answers over your own KG, pass --kg",
                path=answers.path,
                line=answers.line(position),
                field="id",
            )
    for records in chunks(answers):
        for record in records:
            if record.entities is not None:
                raise DataError(
                    "'entities' choose graphs from your own KG (--kg); over a dataset each "
                    "answer is scored against its entry's graphs",
                    path=answers.path,
                    line=record.line,
                    field="entities",
                )
        asked = [r for r in records if r.question is not None]
        samples = split.samples([r.id for r in asked])
        for record, sample in zip(asked, samples, strict=True):
            assert record.question is not None
            if not same_question(record.question, sample.question):
                warnings.add("question_mismatch", record.id)


def check_gold_ids(
    gold: JsonlIndex[GoldRecord], answers: JsonlIndex[AnswerRecord], warnings: InputWarnings
) -> None:
    """Gold records whose id has no answer are a warning; when none has one, an error.

    Raises:
        DataError: no gold id is an answer id (names the gold file's first line).
    """
    unmatched = [sid for sid in gold.ids if answers.position(sid) is None]
    if len(unmatched) == len(gold):
        raise DataError(
            f"none of the {len(gold)} gold ids is the id of an answer (gold ids {_first(gold.ids)}"
            f"; answer ids {_first(answers.ids)})",
            path=gold.path,
            line=gold.line(0),
            field="id",
        )
    for sid in unmatched:
        warnings.add("gold_unmatched", sid)


def _first(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids[:3]) + (", ..." if len(ids) > 3 else "")


def gold_references(
    gold: JsonlIndex[GoldRecord], position: int, record: GoldRecord
) -> Iterator[Reference]:
    """The subjects of a gold record's facts, each with where it was read."""
    for field in _GOLD_FIELDS:
        for k, triple in enumerate(getattr(record, field) or ()):
            yield Reference(
                text=triple.subject,
                path=gold.path,
                line=gold.line(position),
                field=field,
                what=f"gold item {k} subject",
            )


def resolve_dataset_gold(
    gold: JsonlIndex[GoldRecord], split: KalmaSplit, warnings: InputWarnings
) -> SubjectMap:
    """The gold subjects given as names of their entry's graphs, with the ids they stand for.

    Only gold records of ids in the split whose entry has graphs are looked at.

    Raises:
        DataError: a subject is the name of several of the entry's graphs, or neither an
            entity id nor the name of any (names the file, line and field).
    """
    out: SubjectMap = {}
    for start in range(0, len(gold), _CHUNK):
        positions = range(start, min(start + _CHUNK, len(gold)))
        records = gold.read(positions)
        known = [(p, r) for p, r in zip(positions, records, strict=True) if split.has_graph(r.id)]
        samples = split.samples([r.id for _, r in known])
        for (position, record), sample in zip(known, samples, strict=True):
            ids = {g.center.id for g in sample.graphs}
            for ref in gold_references(gold, position, record):
                if ref.text in ids:
                    continue
                if is_qid(ref.text) or is_iri(ref.text):
                    warnings.add("gold_subject_outside_graphs", record.id)
                    continue
                out.setdefault(record.id, {})[ref.text] = resolve_in_graphs(ref, sample.graphs)
                warnings.add("gold_subject_label", record.id)
    return out


def with_subjects(record: GoldRecord, subjects: dict[str, str] | None) -> GoldRecord:
    """``record`` with its facts' subjects replaced by the ids ``subjects`` maps them to."""
    if not subjects:
        return record

    def renamed(triples: tuple[Triple, ...] | None) -> tuple[Triple, ...] | None:
        if triples is None:
            return None
        return tuple(
            t.model_copy(update={"subject": subjects[t.subject]}) if t.subject in subjects else t
            for t in triples
        )

    update = {field: renamed(getattr(record, field)) for field in _GOLD_FIELDS}
    return record.model_copy(update=update)
