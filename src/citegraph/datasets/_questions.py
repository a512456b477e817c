"""Your own questions (``kalma run --questions questions.jsonl --kg kg.ttl``).

One JSON object per line::

    {"id": "warsaw-river", "question": "Which river flows through Warsaw?",
     "entities": ["geo:Warsaw"], "gold": [["geo:Warsaw", "located on river", "Vistula"]]}

- ``id`` (required): your own id, any non-empty string, unique in the file;
- ``question`` (required): the question, a non-empty string;
- ``entities`` (optional): the entities the question is about (ids, IRIs, short ids or labels of
  the KG): their one-hop graphs are the question's KG context, instead of retrieving them from
  the question (NER, label lookup, re-ranking);
- ``gold`` (optional): the question's minimum knowledge set, ``[subject, relation, value]``
  facts (subjects as ids, IRIs, short ids or labels), for precision and recall; ``absent``
  (optional): facts removed from the KG the model saw, for [NA] precision and recall.

Every line is checked when the file is indexed (:func:`index_questions`): a malformed line stops
the run before any model call, naming the file, line and field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets._answers import GoldRecord, _entities, _require_str, _triples
from citegraph.errors import DataError
from citegraph.io import JsonlIndex, JsonlRules

_NO_QUESTIONS = (
    'no questions: the file is empty or blank (expected one {"id": ..., "question": ...} JSON '
    "object per line)"
)


class QuestionRecord(BaseModel):
    """One of your own questions, as ``questions.jsonl`` gives it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    index: int = Field(default=0, description="Zero-based position among the file's questions.")
    question: str
    entities: tuple[str, ...] | None = Field(
        default=None, description="The entities the question is about, when given."
    )
    gold: GoldRecord | None = Field(default=None, description="Its gold facts, when given.")
    line: int = Field(description="Line in the file, for error messages.")

    @property
    def graphs(self) -> tuple[()]:
        """No graph comes with the question: its KG context is retrieved (or its entities')."""
        return ()


class QuestionsFile:
    """``questions.jsonl``, checked line by line when opened (see the module docstring); the
    questions are read again when they are answered. Offers what ``kalma run`` reads of a
    benchmark split: ``ids``, ``index_of``, ``has_graph`` and ``samples``."""

    def __init__(self, path: str | Path) -> None:
        """Check every line of ``path``.

        Raises:
            DataError: a line is malformed, an id repeats, or the file holds no question
                (names the file, line and field).
        """
        self.index: JsonlIndex[QuestionRecord] = JsonlIndex(path, _QUESTION_RULES)
        self.path = self.index.path

    def __len__(self) -> int:
        return len(self.index)

    @property
    def ids(self) -> list[str]:
        """The question ids, in file order."""
        return list(self.index.ids)

    def index_of(self, sample_id: str) -> int | None:
        """The position of ``sample_id`` in the file, or None when it has no such question."""
        return self.index.position(sample_id)

    def has_graph(self, sample_id: str) -> bool:
        """Every question of your own may have a KG context (it is retrieved when answered)."""
        return self.index.position(sample_id) is not None

    def samples(self, sample_ids: Sequence[str]) -> list[QuestionRecord]:
        """The questions of ``sample_ids`` (in that order), each with its position.

        Raises:
            DataError: an id is not in the file, or the file changed since it was checked.
        """
        positions = []
        for sid in sample_ids:
            position = self.index.position(sid)
            if position is None:
                raise DataError(f"no question with id {sid!r}", path=self.path, field="id")
            positions.append(position)
        records = self.index.read(positions)
        return [r.model_copy(update={"index": p}) for r, p in zip(records, positions, strict=True)]


def _id(record: QuestionRecord) -> str:
    return record.id


_KNOWN = frozenset({"id", "question", "entities", "gold", "absent"})


def _question(obj: dict[str, Any], path: Path, lineno: int) -> QuestionRecord:
    sid = _require_str(obj, "id", path, lineno)
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataError(
            "missing or not a non-empty string", path=path, line=lineno, field="question"
        )
    unknown = sorted(set(obj) - _KNOWN)
    if unknown:
        raise DataError(
            f"unknown field (a question line holds {', '.join(sorted(_KNOWN))})",
            path=path,
            line=lineno,
            field=unknown[0],
        )
    gold = None
    if obj.get("gold") is not None or obj.get("absent") is not None:
        knowledge = _triples(obj.get("gold") or [], path, lineno, "gold")
        absent = obj.get("absent")
        gold = GoldRecord(
            id=sid,
            knowledge=knowledge,
            absent=None if absent is None else _triples(absent, path, lineno, "absent"),
        )
    return QuestionRecord(
        id=sid,
        question=question.strip(),
        entities=_entities(obj, path, lineno),
        gold=gold,
        line=lineno,
    )


#: How a questions file is read (:class:`~citegraph.io.JsonlIndex`).
_QUESTION_RULES: JsonlRules[QuestionRecord] = JsonlRules(_question, _id, empty=_NO_QUESTIONS)
