"""The fields of a KaLMA sample page that say how its answer was made and found: the model's
generation (``kalma run``), how the question's graphs were retrieved (``kalma run --retrieval
ner``, your own questions, ``kalma score --kg``) and the text-quality judge's scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.kalma.view._ids import id_text, record_short_ids
from citegraph.runs import FieldsBlock, Record


def yes_no(value: Any) -> str:
    """``yes`` / ``no``, or ``unknown`` for None."""
    return "unknown" if value is None else ("yes" if value else "no")


def generation_fields(record: Record) -> FieldsBlock | None:
    """Model, finish reason, usage, latency, prompt version, cache, attempts (``kalma run``)."""
    gen = record.get("generation")
    fields: list[tuple[str, str]] = []
    if isinstance(gen, Mapping):
        usage = gen.get("usage") or {}
        fields += [
            ("model", str(gen.get("model"))),
            ("finish_reason", str(gen.get("finish_reason"))),
            (
                "usage",
                f"{usage.get('prompt_tokens')} prompt + {usage.get('completion_tokens')} "
                "completion tokens",
            ),
            ("latency", "—" if gen.get("latency_s") is None else f"{gen['latency_s']:.2f} s"),
            ("cached", yes_no(gen.get("cached"))),
            ("attempts", str(gen.get("attempts"))),
        ]
    for key in ("prompt_version", "status", "empty_reason"):
        if record.get(key):
            fields.append((key, str(record[key])))
    if record.get("replaced_graphs"):
        fields.append(("replaced graphs (ablation)", _ids(record, record["replaced_graphs"])))
    return FieldsBlock(title="Generation", fields=fields) if fields else None


def _ids(record: Record, values: Sequence[Any]) -> str:
    short_ids = record_short_ids(record)
    return ", ".join(id_text(str(v), short_ids) for v in values) or "—"


#: How a record's retrieved set was found (its ``retrieval.source``).
RETRIEVAL_SOURCES = {
    "ner": "NER over the question, label lookup, re-ranking",
    "entities": "the answer's or question's 'entities'",
    "retrieved": "the answer's 'retrieved' field (what its own system retrieved)",
}


def retrieval_fields(record: Record) -> FieldsBlock | None:
    """How the question's graphs were found (``kalma run --retrieval ner``, your own questions,
    ``kalma score --kg``): the retrieved graphs, where each graph scored against came from
    (retrieval, ``entities``, ``retrieved``, or named by a citation), the mentions NER found,
    and "retrieval found no entity" when nothing was found."""
    retrieval = record.get("retrieval")
    if not isinstance(retrieval, Mapping):
        return None
    fields: list[tuple[str, str]] = []
    source = retrieval.get("source")
    if source is not None:
        fields.append(("retrieved by", RETRIEVAL_SOURCES.get(str(source), str(source))))
    fields.append(("retrieved graphs", _ids(record, retrieval.get("qids") or [])))
    if "gold_qids" in retrieval:
        fields.append(("gold graphs", _ids(record, retrieval.get("gold_qids") or [])))
    if "mentions" in retrieval:
        fields.append(("NER mentions", ", ".join(map(str, retrieval["mentions"] or [])) or "—"))
    graphs = retrieval.get("graphs")
    if isinstance(graphs, Mapping) and graphs:
        fields.append(
            (
                "graphs scored against",
                "; ".join(
                    f"{_ids(record, [centre])} ({', '.join(map(str, origins))})"
                    for centre, origins in graphs.items()
                ),
            )
        )
    if retrieval.get("found_none"):
        fields.append(("found", str(retrieval["found_none"])))
    return FieldsBlock(title="Retrieval", fields=fields)


def text_quality_fields(record: Record) -> FieldsBlock | None:
    """The judge's score per criterion, or why it is unmeasured."""
    quality = record.get("text_quality")
    if not isinstance(quality, Mapping):
        return None
    fields = [("judge", str(quality.get("judge")))]
    for name, verdict in (quality.get("scores") or {}).items():
        score = verdict.get("score")
        text = f"{score} / 5" if score is not None else f"unmeasured: {verdict.get('reason')}"
        if verdict.get("defaulted"):
            text += " (default: the judge's reply had no score)"
        fields.append((str(name), text))
    return FieldsBlock(title="Text quality", fields=fields)
