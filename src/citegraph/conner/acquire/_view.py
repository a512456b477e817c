"""How a knowledge run (``conner generate`` / ``retrieve`` / ``select``) is shown: each item's
knowledge text, its plain fields (source, prompt version, the selected candidate's quality...)
and the raw model output. Model text stays plain strings; the renderers escape it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citegraph.conner._format import number, shorten
from citegraph.io import json_text
from citegraph.runs import (
    Block,
    FieldsBlock,
    Presenter,
    RawBlock,
    Record,
    SampleSummary,
    Segment,
    TextBlock,
    field_text,
)

__all__ = ["KnowledgePresenter"]


class KnowledgePresenter(Presenter):
    """A knowledge record: ``{id, status, text, source, ...}`` (see ``knowledge_record``)."""

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        """Title: the knowledge text (shortened) or the id; score: ``quality`` when selected."""
        status = str(record.get("status") or "ok")
        text = record.get("text")
        scores = {"quality": number(record["quality"])} if "quality" in record else {}
        tags = ["failed"] if status == "failed" else []
        if isinstance(text, str) and not text.strip() and status != "failed":
            tags.append("empty")
        title = shorten(text) if isinstance(text, str) and text.strip() else str(record.get("id"))
        return SampleSummary(
            id=str(record.get("id")), title=title, status=status, scores=scores, tags=tags
        )

    @classmethod
    def sample(cls, record: Record, info: Mapping[str, Any]) -> list[Block]:
        """The knowledge (one paragraph per line), the plain fields, the raw output, the record."""
        blocks: list[Block] = []
        text = record.get("text")
        if isinstance(text, str):
            lines = [line for line in text.splitlines() if line.strip()] or [text]
            blocks.append(
                TextBlock(title="Knowledge", paragraphs=[[Segment(text=line)] for line in lines])
            )
        fields = [
            (str(k), field_text(v))
            for k, v in record.items()
            if k not in ("text", "raw") and (isinstance(v, str | int | float | bool) or v is None)
        ]
        blocks.append(FieldsBlock(title="Record", fields=fields))
        if isinstance(record.get("raw"), str):
            blocks.append(RawBlock(title="Raw model output", text=record["raw"]))
        blocks.append(RawBlock(title="JSON record", text=json_text(record, indent=2)))
        return blocks
