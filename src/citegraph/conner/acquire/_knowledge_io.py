"""Knowledge on disk: the records ``conner generate`` / ``retrieve`` / ``select`` write, and the
inputs ``conner score`` reads.

A *knowledge run* is a run directory (``run.json``, ``samples.jsonl``) whose records are
``{"id", "status", "text", "source", ...}``: ``status`` is ``"ok"`` or ``"failed"`` (a model
call failed; the record holds ``error`` and the sample is retried on resume). Generated records
also keep ``raw`` (the model's text before cleaning), ``prompt_version``, ``demonstrations``,
``finish_reason`` and ``generation``, what the model reported of its reply as ``kalma run``
records it (:func:`~citegraph.models.chat.generation_record`: model, finish_reason, usage,
cached, attempts, latency_s and, for a local model's reply, ``batch_size``: how many prompts
shared its ``generate`` call; none for a reply from the response cache).

:func:`read_knowledge` accepts, for ``conner score``:

- ``gold``: each sample's gold knowledge (the NQ gold passage, the WoW gold knowledge sentence);
  a WoW turn whose gold is ``no_passages_used`` has no knowledge to score;
- a knowledge run directory (its newest record per id);
- a JSONL file of ``{"id": ..., "text": ...}`` lines (``source`` optional, default the file
  name), e.g. knowledge produced by another system.

A sample with no knowledge (a failed or absent record, an empty generation) maps to the reason,
which every metric then reports as its unmeasured reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner._types import Knowledge
from citegraph.conner.acquire._generate import GeneratedKnowledge
from citegraph.datasets import NO_PASSAGE, ConnerSample, ConnerTask, WowSplit, load_conner
from citegraph.errors import DataError, DataNotFoundError
from citegraph.io import iter_jsonl
from citegraph.runs import FAILED, SAMPLES_FILE, sha256_file

__all__ = [
    "GOLD",
    "KnowledgeInput",
    "TaskChoice",
    "generated_record",
    "knowledge_error_types",
    "knowledge_record",
    "load_task",
    "read_knowledge",
]

#: The ``read_knowledge`` spec for the task's own gold knowledge.
GOLD = "gold"

#: Per sample id: the knowledge, or why there is none.
KnowledgeInput = dict[str, Knowledge | str]


class TaskChoice(BaseModel):
    """The task and (for WoW) test split a run works on: the base of the ``conner`` configs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: ConnerTask = Field(default="nq", description="The task: nq or wow.")
    split: WowSplit = Field(default="seen", description="WoW test split.")


def load_task(task: ConnerTask, split: WowSplit, data_dir: str | Path | None) -> list[ConnerSample]:
    """The task's test items (``split`` applies to WoW only)."""
    return load_conner(task, data_dir, split=split if task == "wow" else None)


def knowledge_record(
    knowledge: Knowledge, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``samples.jsonl`` record of one piece of knowledge (``status`` ok), with ``extra``
    fields after the four common ones."""
    return {
        "id": knowledge.id,
        "status": "ok",
        "text": knowledge.text,
        "source": knowledge.source,
    } | dict(extra or {})


def generated_record(item: GeneratedKnowledge, source: str) -> dict[str, Any]:
    """The record of one generation: its knowledge, or ``status`` failed with the error (and
    its ``error_type``)."""
    extra: dict[str, Any] = {
        "raw": item.raw_text,
        "prompt_version": item.prompt_version,
        "demonstrations": list(item.demonstrations),
        "finish_reason": item.finish_reason,
    }
    if item.generation is not None:  # as kalma run records it (batch_size of a local model)
        extra["generation"] = item.generation
    if item.knowledge is not None:
        return knowledge_record(item.knowledge, extra)
    failed = {"id": item.id, "status": FAILED, "text": None, "source": source, "error": item.error}
    return failed | ({"error_type": item.error_type} if item.error_type is not None else {})


def _gold(samples: Sequence[ConnerSample]) -> KnowledgeInput:
    out: KnowledgeInput = {}
    for s in samples:
        text = s.gold_knowledge.strip()
        if not text or text == NO_PASSAGE:
            out[s.id] = f"the gold has no knowledge for this item ({NO_PASSAGE})"
        else:
            out[s.id] = Knowledge(id=s.id, text=text, source=GOLD)
    return out


def _field(obj: dict[str, Any], name: str, path: Path, line: int, *, optional: bool = False) -> Any:
    value = obj.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise DataError(f"field {name!r} must be a string, got {value!r:.60}", path=path, line=line)
    return value


def _records(path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """Each id's record and its line. A later record of an id replaces only a failed one (a
    run directory's retry); a second record of an id that has one is refused, as every task's
    input reader does."""
    latest: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, obj in iter_jsonl(path):
        key = _field(obj, "id", path, line)
        if not key.strip():
            raise DataError("empty id", path=path, line=line, field="id")
        first = latest.get(key)
        if first is not None and first[1].get("status") != FAILED:
            raise DataError(
                f"duplicate id {key!r:.80} (first on line {first[0]})",
                path=path,
                line=line,
                field="id",
            )
        latest[key] = (line, obj)
    return latest


def _from_records(
    path: Path, samples: Sequence[ConnerSample], default_source: str
) -> KnowledgeInput:
    latest = _records(path)
    if not latest:
        raise DataError(
            'no knowledge records: the file is empty or blank (expected {"id": ..., "text": ...} '
            "JSON objects, one per line)",
            path=path,
        )
    wanted = {s.id for s in samples}
    if latest and not wanted & set(latest):
        raise DataError(
            f"none of its {len(latest)} ids (e.g. {next(iter(latest))!r}) is a sample of this "
            f"task (e.g. {samples[0].id!r}); is --task or --split right?",
            path=path,
        )
    out: KnowledgeInput = {}
    for s in samples:
        if s.id not in latest:
            out[s.id] = f"no knowledge for this id in {path}"
            continue
        line, obj = latest[s.id]
        if obj.get("status") == FAILED:
            out[s.id] = f"knowledge generation failed: {obj.get('error') or 'unknown error'}"
            continue
        text = _field(obj, "text", path, line)
        source = _field(obj, "source", path, line, optional=True) or default_source
        out[s.id] = Knowledge(id=s.id, text=text, source=source)
    return out


def read_knowledge(spec: str, samples: Sequence[ConnerSample]) -> tuple[KnowledgeInput, str]:
    """The knowledge to score for each of ``samples``, and the input's fingerprint.

    Args:
        spec: ``"gold"``, a knowledge run directory, or a JSONL file (see the module docstring).
        samples: The task's samples (ids not among them are ignored).

    Returns:
        ``(id -> Knowledge or reason, fingerprint)``; the fingerprint is ``"gold"`` or the
        SHA-256 of the file read.

    Raises:
        DataNotFoundError: The path does not exist (or the directory has no ``samples.jsonl``).
        DataError: A record lacks ``id`` / ``text`` (names the file and line), no id matches, or
            the file holds no record.
    """
    if spec == GOLD:
        return _gold(samples), GOLD
    path = _records_file(spec)
    return _from_records(path, samples, default_source=f"file:{path.name}"), sha256_file(path)


def knowledge_error_types(spec: str) -> dict[str, str]:
    """Per id, the ``error_type`` of its knowledge record when that record (the newest of the
    id, the one :func:`read_knowledge` reads) failed and stores the class of its error: why
    the item has no knowledge. Empty for ``"gold"``.

    Raises:
        DataNotFoundError, DataError: As :func:`read_knowledge`.
    """
    if spec == GOLD:
        return {}
    records = _records(_records_file(spec))
    return {
        key: typed
        for key, (_, obj) in records.items()
        if obj.get("status") == FAILED and isinstance(typed := obj.get("error_type"), str)
    }


def _records_file(spec: str) -> Path:
    """The JSONL file a knowledge spec other than gold names (a run's ``samples.jsonl``)."""
    path = Path(spec)
    if path.is_dir():
        path = path / SAMPLES_FILE
        if not path.is_file():
            raise DataNotFoundError(
                "not a knowledge run (no samples.jsonl); pass 'gold', a run directory from "
                "'conner generate' / 'retrieve' / 'select', or a JSONL file of {id, text}",
                path=path.parent,
            )
    elif not path.is_file():
        raise DataNotFoundError(
            "knowledge not found (pass 'gold', a knowledge run directory or a JSONL file)",
            path=path,
        )
    return path
