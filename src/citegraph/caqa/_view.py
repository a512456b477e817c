"""How CAQA runs are shown: the pieces both stages share, and the ``caqa build`` presenter.

A CAQA sample is a question, an answer statement and a citation written from a KG subgraph (the
citation subgraph, §4.2.2). :func:`facts_table` shows that subgraph (labels, ids in the
tooltips), :func:`fact_rows_of` reads it from a judge record or a built sample.
:class:`CaqaBuildPresenter` shows one ``caqa build`` record (one KGQA question and the samples it
gave, one per category); the ``caqa judge`` presenter is in :mod:`citegraph.caqa.judge._view`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from citegraph.caqa._types import StructuredAttribution
from citegraph.io import json_text
from citegraph.runs import (
    Block,
    FieldsBlock,
    Presenter,
    RawBlock,
    Record,
    SampleSummary,
    Segment,
    TableBlock,
    field_text,
)

#: How a fact row is marked: the citation's own facts, or facts removed from it.
FactMark = Literal["cited", "absent", "gold", "neutral"]

#: The columns of a citation-subgraph table and of the ``facts`` export rows.
FACT_KEYS = ("subject", "relation", "object", "subject_label", "relation_label", "object_label")
#: The columns of a ``caqa build`` run's ``caqa_samples`` export table.
BUILT_COLUMNS = ("caqa_id", "label", "complexity", "question", "answer", "citation")


def fact_rows_of(sample: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """The citation subgraph of a judge record (its ``subgraph``) or of a built sample (its
    ``attribution``), one flat row per fact; ``None`` when there is none."""
    rows = sample.get("subgraph")
    if isinstance(rows, list):
        return [{k: str(row.get(k, "")) for k in FACT_KEYS} for row in rows]
    attribution = sample.get("attribution")
    if isinstance(attribution, Mapping):
        return StructuredAttribution.model_validate(attribution).fact_rows()
    return None


def _fact_cells(row: Mapping[str, str]) -> list[Segment]:
    return [
        Segment(text=row[f"{part}_label"], tip=row[part])
        for part in ("subject", "relation", "object")
    ]


def facts_table(
    title: str,
    rows: Sequence[Mapping[str, str]],
    *,
    mark: FactMark | None = "cited",
    extra: Sequence[tuple[Mapping[str, str], FactMark]] = (),
    note: str | None = None,
) -> TableBlock:
    """A subgraph as a table: subject · relation · object by label, the ids in the tooltips.

    Args:
        title: The block title.
        rows: The facts (:data:`FACT_KEYS`).
        mark: The mark of each of ``rows``.
        extra: More facts after them, each with its own mark (removed facts: ``absent``).
        note: Shown under the table.
    """
    every = [(row, mark) for row in rows] + list(extra)
    return TableBlock(
        title=title,
        columns=["subject", "relation", "object"],
        rows=[_fact_cells(row) for row, _ in every],
        row_marks=[m for _, m in every],
        note=note,
    )


def fact_export_rows(sample_id: str, rows: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """The ``facts`` export rows of one sample: its id, then the fact's ids and labels."""
    return [{"sample_id": sample_id} | {k: row[k] for k in FACT_KEYS} for row in rows]


def _query_rows(query: Any, labels: Mapping[str, str]) -> list[list[Segment]]:
    edges = query.get("edges", []) if isinstance(query, Mapping) else []
    return [
        [
            Segment(text=labels.get(str(edge.get(p)), str(edge.get(p))), tip=str(edge.get(p)))
            for p in ("subject", "relation", "object")
        ]
        for edge in edges
        if isinstance(edge, Mapping)
    ]


def _samples_of(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    samples = record.get("samples")
    return [s for s in samples if isinstance(s, Mapping)] if isinstance(samples, list) else []


def _sample_blocks(sample: Mapping[str, Any]) -> list[Block]:
    category = str(sample.get("label"))
    blocks: list[Block] = [
        FieldsBlock(
            title=f"Sample: {category}",
            fields=[
                ("id", field_text(sample.get("id"))),
                ("question", field_text(sample.get("question"))),
                ("answer statement", field_text(sample.get("answer"))),
                ("citation", field_text(sample.get("citation"))),
                ("category", category),
                ("complexity", field_text(sample.get("complexity"))),
                ("text source", field_text(sample.get("text_source"))),
            ],
        )
    ]
    rows = fact_rows_of(sample)
    if rows is None:
        return blocks
    attribution = sample.get("attribution")
    attribution = attribution if isinstance(attribution, Mapping) else {}
    removed = StructuredAttribution.model_validate(
        dict(attribution) | {"facts": attribution.get("removed", [])}
    ).fact_rows()
    notes = [str(attribution.get("note") or "")]
    if removed:
        notes.append("absent rows: facts removed from the supportive subgraph")
    replaced = attribution.get("replaced")
    if isinstance(replaced, Mapping) and replaced:
        labels = attribution.get("labels", {})
        notes.append(
            "answers replaced: "
            + ", ".join(f"{labels.get(a, a)} -> {labels.get(b, b)}" for a, b in replaced.items())
        )
    blocks.append(
        facts_table(
            f"Citation subgraph: {category}",
            rows,
            extra=[(row, "absent") for row in removed],
            note="; ".join(n for n in notes if n) or None,
        )
    )
    return blocks


class CaqaBuildPresenter(Presenter):
    """A ``caqa build`` record: one KGQA question, the query it was extended to and the CAQA
    samples it gave (one per category, each with its citation subgraph), or why it gave none."""

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        """Title the question; tags ``failed``, ``skipped``, ``extension:<how>``,
        ``complexity:<level>``, ``category:<label>`` per sample built; score ``samples``."""
        status = str(record.get("status") or "ok")
        samples = _samples_of(record)
        tags = [status] if status in ("failed", "skipped") else []
        if record.get("extension"):
            tags.append(f"extension:{record['extension']}")
        levels = {str(s.get("complexity")) for s in samples if s.get("complexity")}
        tags += [f"complexity:{c}" for c in sorted(levels)]
        tags += [f"category:{s.get('label')}" for s in samples]
        scores: dict[str, float | None] = {}
        if status == "ok":
            scores["samples"] = float(len(samples))
        title = record.get("question") or record.get("id")
        return SampleSummary(
            id=str(record.get("id")), title=str(title), status=status, scores=scores, tags=tags
        )

    @classmethod
    def sample(cls, record: Record, info: Mapping[str, Any]) -> list[Block]:
        """The question and its query, then each sample with its citation subgraph, the raw
        query and the JSON record."""
        samples = _samples_of(record)
        unavailable = record.get("unavailable")
        fields = [
            ("question", field_text(record.get("question"))),
            ("source", field_text(record.get("source"))),
            ("status", field_text(record.get("status"))),
        ]
        for key in ("reason", "error"):
            if record.get(key):
                fields.append((key, field_text(record.get(key))))
        fields += [
            ("extension", field_text(record.get("extension"))),
            ("extension note", field_text(record.get("extension_note"))),
            ("answers", field_text(samples[0].get("answer_names") if samples else None)),
            ("complexity", field_text(samples[0].get("complexity") if samples else None)),
        ]
        if isinstance(unavailable, Mapping):
            fields += [(f"no {k}", str(v)) for k, v in unavailable.items()]
        blocks: list[Block] = [FieldsBlock(title="Question", fields=fields)]
        labels: dict[str, str] = {}
        for sample in samples:
            attribution = sample.get("attribution")
            if isinstance(attribution, Mapping):
                labels |= attribution.get("labels", {})
        if record.get("query") is not None:
            blocks.append(
                TableBlock(
                    title="Query (extended)",
                    columns=["subject", "relation", "object"],
                    rows=_query_rows(record["query"], labels),
                    note=f"operator {field_text(record['query'].get('operator'))}, answer "
                    f"{field_text(record['query'].get('answer'))}",
                )
            )
        for sample in samples:
            blocks += _sample_blocks(sample)
        if record.get("query") is not None:
            query = {"query": record.get("query"), "original_query": record.get("original_query")}
            blocks.append(RawBlock(title="Query (JSON)", text=json_text(query, indent=2)))
        blocks.append(RawBlock(title="JSON record", text=json_text(record, indent=2)))
        return blocks

    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        """``caqa_samples``: one row per CAQA sample built (``caqa_id`` its id); ``facts``: one
        row per fact of each sample's citation subgraph (``caqa_id`` the CAQA sample it belongs
        to). ``sample_id`` is the build record's id (the KGQA question), as in every table."""
        rows, facts = [], []
        for sample in _samples_of(record):
            caqa_id = str(sample.get("id"))
            rows.append(
                {"caqa_id": caqa_id} | {k: sample.get(k) for k in BUILT_COLUMNS if k != "caqa_id"}
            )
            facts += [
                {"caqa_id": caqa_id} | {k: row[k] for k in FACT_KEYS}
                for row in fact_rows_of(sample) or []
            ]
        return {"caqa_samples": rows, "facts": facts}

    @classmethod
    def export_schema(cls) -> dict[str, dict[str, str]]:
        """``caqa_samples`` and ``facts``: every column a string."""
        return {
            "caqa_samples": dict.fromkeys(BUILT_COLUMNS, "string"),
            "facts": dict.fromkeys(("caqa_id", *FACT_KEYS), "string"),
        }
