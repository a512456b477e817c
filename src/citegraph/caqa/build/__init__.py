"""Building a CAQA benchmark (§4.2): query extension, the four structured attributions, text,
splits; :func:`build_caqa` runs it all as the ``caqa.build`` task.

:func:`extend_query` (Table 3) -> :func:`structured_attributions` (supportive, insufficient,
contradictory, irrelevant subgraphs) -> a :class:`Textualiser` (templates, or an LLM with Tables
8-10) -> train / dev / test by question (:func:`assign_splits`) and Table 4 (:func:`statistics`).
"""

from citegraph.caqa._types import Extension
from citegraph.caqa.build._extend import (
    ExtendedQuery,
    UnionPartners,
    allowed_extensions,
    extend_query,
)
from citegraph.caqa.build._perturb import (
    AttributionSet,
    structured_attributions,
    subject_entities,
)
from citegraph.caqa.build._splits import (
    SPLITS,
    assign_splits,
    render_split_report,
    render_statistics,
    split_counts,
    split_report,
    statistics,
)
from citegraph.caqa.build._task import (
    CaqaBuildConfig,
    CaqaBuildResult,
    CaqaBuildTask,
    build_caqa,
    build_caqa_async,
)
from citegraph.caqa.build._text import (
    TEMPLATE_VERSION,
    answer_statement,
    extend_question,
    question_from_query,
    verbalise_facts,
)
from citegraph.caqa.build._textualisers import (
    BUILD_PROMPT_VERSION,
    EmptyTextError,
    LLMTextualiser,
    TemplateTextualiser,
    Textualiser,
    render_logical_form,
    render_subgraph,
)

__all__ = [
    "BUILD_PROMPT_VERSION",
    "SPLITS",
    "TEMPLATE_VERSION",
    "AttributionSet",
    "CaqaBuildConfig",
    "CaqaBuildResult",
    "CaqaBuildTask",
    "EmptyTextError",
    "ExtendedQuery",
    "Extension",
    "LLMTextualiser",
    "TemplateTextualiser",
    "Textualiser",
    "UnionPartners",
    "allowed_extensions",
    "answer_statement",
    "assign_splits",
    "build_caqa",
    "build_caqa_async",
    "extend_query",
    "extend_question",
    "question_from_query",
    "render_logical_form",
    "render_split_report",
    "render_statistics",
    "render_subgraph",
    "split_counts",
    "split_report",
    "statistics",
    "structured_attributions",
    "subject_entities",
    "verbalise_facts",
]
