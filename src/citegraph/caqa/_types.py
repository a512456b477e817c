"""CAQA's shared vocabulary: attribution categories, complexity types, facts and samples.

The paper (§3.2-3.3) labels a (question, answer statement, citation) triple with one of four
attribution **categories** and one of four **complexity** types. The complexity type follows from
the shape of the (extended) logical query the sample was built from (§4.2.1):

=================  ==================  ===========
query shape        complexity          paper code
=================  ==================  ===========
``single``         ``single``          S. / I
``union``          ``union``           U. / II
``tree``           ``intersection``    I. / III
``path``           ``concatenation``   C. / IV
=================  ==================  ===========

Human-labelled sets such as AttributionBench only say *attributable or not*; they use the
binary label set (``supportive`` / ``unsupported``), and any four-way label collapses onto it
with :func:`to_binary`.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Category = Literal["supportive", "insufficient", "contradictory", "irrelevant"]
#: The four categories, in the paper's order (Tables 5 and 7 columns).
CATEGORIES: tuple[Category, ...] = get_args(Category)

BinaryLabel = Literal["supportive", "unsupported"]
#: The two labels of the binary setting (AutoIS, AttributionBench).
BINARY_LABELS: tuple[BinaryLabel, ...] = get_args(BinaryLabel)

#: Any gold or predicted label of a sample.
Label = Literal["supportive", "insufficient", "contradictory", "irrelevant", "unsupported"]

Complexity = Literal["single", "union", "intersection", "concatenation"]
#: The four complexity types, in the paper's order (Table 6 columns are S., C., I., U.).
COMPLEXITIES: tuple[Complexity, ...] = get_args(Complexity)

QueryShape = Literal["single", "path", "tree", "union"]
QUERY_SHAPES: tuple[QueryShape, ...] = get_args(QueryShape)

#: Which complexity type a query of each shape yields (§4.2.1, last paragraph).
SHAPE_COMPLEXITY: dict[QueryShape, Complexity] = {
    "single": "single",
    "union": "union",
    "tree": "intersection",
    "path": "concatenation",
}

Extension = Literal["none", "union", "intersection-attach", "intersection-branch"]
"""How the original query was extended (§4.2.1, Table 3): not at all, by union over same-name
subject entities, by attaching a new fact to a subject entity (first intersection way: the shape
is kept), or by adding a new branch ``(e, r, ?a)`` that meets the answer (second way: tree)."""


def to_binary(label: str) -> BinaryLabel:
    """Collapse a four-way label to the binary setting: supportive stays, the rest are
    ``unsupported`` (as the authors' 2-class prompt does)."""
    return "supportive" if label == "supportive" else "unsupported"


class Fact(BaseModel):
    """One KG fact by ids: ``subject --relation--> object``.

    Ids are the KG's own: Wikidata QIDs / PIDs for CoDEx-S and Wikidata, Freebase mids and
    dotted relation names for GrailQA, entity and relation names for PathQuestion.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str
    relation: str
    object: str

    def as_tuple(self) -> tuple[str, str, str]:
        """``(subject, relation, object)``."""
        return (self.subject, self.relation, self.object)

    @classmethod
    def of(cls, subject: str, relation: str, obj: str) -> Fact:
        """Shorthand constructor."""
        return cls(subject=subject, relation=relation, object=obj)


class StructuredAttribution(BaseModel):
    """A category's evidence subgraph (§4.2.2) before it is turned into text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: Category
    facts: tuple[Fact, ...] = Field(description="The citation's facts, in a stable order.")
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="English labels of the ids in ``facts``.",
    )
    answers: tuple[str, ...] = Field(
        default=(),
        description="Answer entity ids the statement asserts. For a contradictory attribution "
        "these are the original answers; ``replaced`` says what each was swapped for.",
    )
    replaced: dict[str, str] = Field(
        default_factory=dict,
        description="Contradictory only: original answer id -> the same-type non-answer id that "
        "took its place in ``facts`` (every answer is replaced, each by a different entity).",
    )
    removed: tuple[Fact, ...] = Field(
        default=(), description="Insufficient only: the facts deleted from the supportive subgraph."
    )
    note: str = Field(default="", description="How this attribution was made (rule, choices).")

    def fact_rows(self) -> list[dict[str, str]]:
        """The citation's facts, one flat row each: the ids and their English labels
        (``subject_label``...; an id without a label is its own label)."""
        labels = self.labels
        return [
            {
                "subject": fact.subject,
                "relation": fact.relation,
                "object": fact.object,
                "subject_label": labels.get(fact.subject, fact.subject),
                "relation_label": labels.get(fact.relation, fact.relation),
                "object_label": labels.get(fact.object, fact.object),
            }
            for fact in self.facts
        ]


class CaqaSample(BaseModel):
    """One benchmark sample: is ``citation`` supportive, insufficient, contradictory or
    irrelevant to ``answer`` (a statement answering ``question``)?

    Built samples carry their provenance (query, extension, subgraph); samples read from
    human-labelled sets (AttributionBench) only have the text fields, the gold ``label`` and
    ``source``.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    answer: str = Field(description="The answer statement (a sentence), not just the entity.")
    citation: str = Field(description="The citation text the evaluator judges.")
    label: Label = Field(description="Gold category (four-way) or binary label.")
    complexity: Complexity | None = Field(
        default=None, description="Attribution complexity (None for human-labelled sets)."
    )
    source: str = Field(description="Origin of the question: 'grailqa', 'attributionbench', ...")
    group: str = Field(
        default="",
        description="Samples built from one KGQA question share a group; splits never cut a group.",
    )
    split: str | None = None
    human_label: Label | None = Field(
        default=None, description="A human annotator's label, when one exists (§6.3)."
    )
    original_question: str | None = None
    answer_entities: tuple[str, ...] = ()
    answer_names: tuple[str, ...] = ()
    query: dict | None = Field(default=None, description="The extended logical query (JSON form).")
    original_query: dict | None = None
    extension: Extension | None = None
    attribution: StructuredAttribution | None = None
    text_source: str | None = Field(
        default=None, description="'caqa-template-v1' or 'llm:<model>:<prompt version>'."
    )
