"""Typed records of a parsed attributed answer.

An answer is a list of :class:`Sentence`; each sentence carries its :class:`Citation` list. A
citation is either a KG triple (``kind="kg"``) or the ``[NA]`` marker (``kind="na"``): needed
knowledge that is missing from the KG ("conscious incompetence"). Problems found while parsing
(a bracket that cannot be read, a value that cannot be resolved) are :class:`ParseIssue` records
on the answer; they never raise.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.kg import Triple


class Citation(BaseModel):
    """One citation found in an answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["kg", "na"] = Field(description="'kg' for a KG triple, 'na' for [NA].")
    triple: Triple | None = Field(default=None, description="The cited fact when kind == 'kg'.")
    bracket: str = Field(description="The bracket text the citation came from, verbatim.")
    start: int = Field(description="Offset of the bracket's '[' in the answer.")


class ParseIssue(BaseModel):
    """A bracket or part of one that could not be read as a citation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bracket: str = Field(description="The bracket text, verbatim.")
    start: int = Field(description="Offset of the bracket's '[' in the answer.")
    reason: str = Field(description="Why it could not be read, in plain words.")


class Sentence(BaseModel):
    """One sentence of an answer and the citations attached to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The sentence as written, brackets included.")
    plain: str = Field(description="The sentence with every bracket removed and spaces tidied.")
    citations: tuple[Citation, ...] = ()

    @property
    def kg_citations(self) -> list[Citation]:
        """The triple citations (not [NA])."""
        return [c for c in self.citations if c.kind == "kg"]

    @property
    def has_na(self) -> bool:
        """Whether the sentence carries an [NA] marker."""
        return any(c.kind == "na" for c in self.citations)


class ParsedAnswer(BaseModel):
    """An answer split into sentences with citations, plus the parse issues found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sentences: tuple[Sentence, ...] = ()
    issues: tuple[ParseIssue, ...] = ()
    parser: str = Field(
        description="Which parser produced this: 'paper' or 'reference', with version."
    )

    @property
    def citations(self) -> list[Citation]:
        """All citations in order, [NA] included."""
        return [c for s in self.sentences for c in s.citations]

    @property
    def kg_citations(self) -> list[Citation]:
        """All triple citations in order (duplicates kept: each occurrence is one citation)."""
        return [c for s in self.sentences for c in s.citations if c.kind == "kg"]
