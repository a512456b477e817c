"""Readers for the scoring inputs: ``answers.jsonl`` and ``gold.jsonl``.

``answers.jsonl``: one ``{"id": "specific-0", "answer": "..."}`` per line; ``question`` is optional.
``answer`` may be ``""`` or ``null`` for an empty generation: it is scored as the chosen mode says,
never dropped. A line whose model call failed (``"status": "failed"``, as ``kalma run`` writes it,
with its ``error`` and ``error_type``) is no empty answer: it is read with its ``error`` (and
``error_type`` when given) and scored as a failed item, in every mode. An answer may hold at most
:data:`MAX_ANSWER_CHARS` characters (1 MB of text) unless the reader is given a higher
``max_answer_chars``; a longer line than :func:`max_line_bytes` is refused without being read whole
(a 200 MB answer would otherwise take gigabytes to score). Answers over your own KG (``kalma score
--kg``) carry your own ids (any non-empty string, unique), their ``question``, and optionally
``entities``: the entities the question is about (ids, IRIs, short ids or labels), whose one-hop
graphs are then used instead of retrieving them from the question; and optionally ``retrieved``:
what the answering system itself retrieved, as ``[subject, relation, value]`` facts and/or entity
references (an entity stands for its one-hop graph), against which "outside the retrieved
graphs" is then measured.

``gold.jsonl``: one ``{"id": "...", "knowledge": [["Q206534", "place of birth", "Newark"], ...]}``
per line: the question's minimum knowledge set. An optional ``"absent"`` list of triples in the
same form is the absent-knowledge ground truth of the conscious-incompetence setting (the facts
removed from the KG the model saw); [NA] recall and precision use it. An optional
``"knowledge_injected"`` list (``kalma build`` writes it) is the injected facts alone, without
the round-1 labels: the authors' no_round1 gold, which reference-mode [NA] scoring uses.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import DataError
from citegraph.io import JsonlIndex, JsonlRules, iter_unique
from citegraph.kg import Triple

#: The most characters an answer may hold by default (1 MB of text; ``kalma score
#: --max-answer-chars`` raises it).
MAX_ANSWER_CHARS = 1_000_000

_CAP_HINT = "; --max-answer-chars (max_answer_chars=) raises the cap"


def max_line_bytes(max_answer_chars: int) -> int:
    """The longest line of ``answers.jsonl`` read for answers of at most ``max_answer_chars``
    characters: 6 bytes a character (JSON's ``\\uXXXX`` escape) plus 1 MiB for the other
    fields."""
    return 6 * max_answer_chars + 2**20


class AnswerRecord(BaseModel):
    """One answer to score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    answer: str | None = Field(description="The attributed answer; None for an empty generation.")
    question: str | None = None
    entities: tuple[str, ...] | None = Field(
        default=None,
        description="The entities the question is about (ids, IRIs, short ids or labels), when "
        "given: their graphs are used instead of retrieval (own-KG scoring).",
    )
    retrieved: tuple[str | tuple[str, str, str], ...] | None = Field(
        default=None,
        description="What the answering system retrieved, when given: [subject, relation, "
        "value] facts and entity references (own-KG scoring measures 'outside the retrieved "
        "graphs' against exactly these).",
    )
    line: int = Field(description="Line in the answers file, for error messages.")
    error: str | None = Field(
        default=None,
        description="Why the answer's model call failed (a line with status 'failed'): the "
        "answer is a failed item, never scored as an empty answer.",
    )
    error_type: str | None = Field(
        default=None,
        description="The type of that failure, when the line gives it (``error_type``, as "
        "``kalma run`` writes it): the scored record keeps it.",
    )


class GoldRecord(BaseModel):
    """The gold knowledge of one question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    knowledge: tuple[Triple, ...] = Field(description="The minimum knowledge set.")
    absent: tuple[Triple, ...] | None = Field(
        default=None, description="Facts removed from the KG the model saw (for [NA] metrics)."
    )
    knowledge_injected: tuple[Triple, ...] | None = Field(
        default=None,
        description="The injected facts alone (the authors' no_round1 gold), when the file has "
        "them.",
    )


_NO_ANSWERS = (
    'no answers: the file is empty or blank (expected one {"id": ..., "answer": ...} '
    "JSON object per line)"
)
_NO_GOLD = (
    'no gold records: the file is empty or blank (expected one {"id": ..., '
    '"knowledge": [[subject, relation, value], ...]} JSON object per line)'
)


def read_answers(
    path: str | Path, *, max_answer_chars: int = MAX_ANSWER_CHARS
) -> list[AnswerRecord]:
    """Read ``answers.jsonl``; ids must be unique.

    Args:
        path: The file.
        max_answer_chars: The most characters an answer may hold.

    Raises:
        DataError: a line is malformed, an id repeats, or an answer is over the cap (names
            file, line and field), or the file holds no answer (empty or blank lines only).
    """
    records = iter_unique(path, _answers_rules(max_answer_chars))
    return [record for _, _, record in records]


def read_gold(path: str | Path) -> dict[str, GoldRecord]:
    """Read ``gold.jsonl`` into a dict by id.

    Raises:
        DataError: a line is malformed or an id repeats (names file, line and field), or the
            file holds no record (empty or blank lines only).
    """
    return {r.id: r for _, _, r in iter_unique(path, _GOLD_RULES)}


def index_answers(
    path: str | Path, *, max_answer_chars: int = MAX_ANSWER_CHARS
) -> JsonlIndex[AnswerRecord]:
    """``answers.jsonl`` checked as :func:`read_answers` does, holding where each answer is
    rather than the answers (read again with :meth:`~citegraph.io.JsonlIndex.read`).

    Raises:
        DataError: as :func:`read_answers`.
    """
    return JsonlIndex(path, _answers_rules(max_answer_chars))


def index_gold(path: str | Path) -> JsonlIndex[GoldRecord]:
    """``gold.jsonl`` checked as :func:`read_gold` does, holding where each record is.

    Raises:
        DataError: as :func:`read_gold`.
    """
    return JsonlIndex(path, _GOLD_RULES)


def _id(record: AnswerRecord | GoldRecord) -> str:
    return record.id


def _answer(
    obj: dict[str, Any], path: Path, lineno: int, *, max_chars: int = MAX_ANSWER_CHARS
) -> AnswerRecord:
    sid = _require_str(obj, "id", path, lineno)
    if "answer" not in obj:
        raise DataError("missing field", path=path, line=lineno, field="answer")
    answer = obj["answer"]
    if answer is not None and not isinstance(answer, str):
        raise DataError("must be a string or null", path=path, line=lineno, field="answer")
    if answer is not None and len(answer) > max_chars:
        raise DataError(
            f"{len(answer):,} characters, over the cap of {max_chars:,} per answer{_CAP_HINT}",
            path=path,
            line=lineno,
            field="answer",
        )
    question = obj.get("question")
    if question is not None and not isinstance(question, str):
        raise DataError("must be a string", path=path, line=lineno, field="question")
    error = error_type = None
    if obj.get("status") == "failed":
        why = obj.get("error") or obj.get("empty_reason")
        error = str(why) if why else "the answer's line says status 'failed' and gives no error"
        error_type = obj.get("error_type")
        if error_type is not None and not isinstance(error_type, str):
            raise DataError("must be a string", path=path, line=lineno, field="error_type")
    return AnswerRecord(
        id=sid,
        answer=answer,
        question=question,
        entities=_entities(obj, path, lineno),
        retrieved=_retrieved(obj, path, lineno),
        line=lineno,
        error=error,
        error_type=error_type or None,
    )


def _entities(obj: dict[str, Any], path: Path, lineno: int) -> tuple[str, ...] | None:
    entities = obj.get("entities")
    if entities is None:
        return None
    if not (
        isinstance(entities, list)
        and entities
        and all(isinstance(e, str) and e.strip() for e in entities)
    ):
        raise DataError(
            "must be a non-empty list of entity ids, IRIs, short ids or labels (strings)",
            path=path,
            line=lineno,
            field="entities",
        )
    return tuple(e.strip() for e in entities)


def _retrieved(
    obj: dict[str, Any], path: Path, lineno: int
) -> tuple[str | tuple[str, str, str], ...] | None:
    items = obj.get("retrieved")
    if items is None:
        return None
    if not isinstance(items, list):
        raise DataError(
            "must be a list of [subject, relation, value] facts and entity references",
            path=path,
            line=lineno,
            field="retrieved",
        )
    out: list[str | tuple[str, str, str]] = []
    for k, item in enumerate(items):
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
        elif (
            isinstance(item, list)
            and len(item) == 3
            and all(isinstance(x, str) and x.strip() for x in item)
        ):
            out.append((item[0].strip(), item[1].strip(), item[2].strip()))
        else:
            raise DataError(
                f"item {k} must be an entity reference (a non-empty string) or a "
                f"[subject, relation, value] list of 3 non-empty strings, not {item!r:.80}",
                path=path,
                line=lineno,
                field="retrieved",
            )
    return tuple(out)


def _gold(obj: dict[str, Any], path: Path, lineno: int) -> GoldRecord:
    sid = _require_str(obj, "id", path, lineno)
    if "knowledge" not in obj:
        raise DataError("missing field", path=path, line=lineno, field="knowledge")
    knowledge = _triples(obj["knowledge"], path, lineno, "knowledge")
    optional = {
        field: _triples(obj[field], path, lineno, field)
        for field in ("absent", "knowledge_injected")
        if obj.get(field) is not None
    }
    return GoldRecord(id=sid, knowledge=knowledge, **optional)


def _require_str(obj: dict[str, Any], key: str, path: str | Path, lineno: int) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise DataError("missing or not a non-empty string", path=path, line=lineno, field=key)
    return value


def _triples(items: object, path: str | Path, lineno: int, field: str) -> tuple[Triple, ...]:
    if not isinstance(items, list):
        raise DataError(
            "must be a list of [subject, relation, value]", path=path, line=lineno, field=field
        )
    triples = []
    for k, item in enumerate(items):
        if not (
            isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)
        ):
            raise DataError(
                f"item {k} must be [subject, relation, value] strings, got {item!r}",
                path=path,
                line=lineno,
                field=field,
            )
        triples.append(Triple.from_list(item))
    return tuple(triples)


def _answers_rules(max_answer_chars: int) -> JsonlRules[AnswerRecord]:
    """How an answers file is read, for :func:`iter_unique` and :class:`JsonlIndex`: the
    parser, the id, the empty-file message, the line cap and its hint."""
    return JsonlRules(
        partial(_answer, max_chars=max_answer_chars),
        _id,
        empty=_NO_ANSWERS,
        max_line_bytes=max_line_bytes(max_answer_chars),
        cap_hint=_CAP_HINT,
    )


#: How a gold file is read (no line cap: gold records are the user's small knowledge sets).
_GOLD_RULES: JsonlRules[GoldRecord] = JsonlRules(_gold, _id, empty=_NO_GOLD)
