"""CAQA's inputs (§4.1): logical queries, KGQA questions, and their grounding in a KG.

:class:`LogicalQuery` (single, path, tree, union shapes) and its SPARQL; :class:`CaqaKG`, the
id-level view of an embedded KG that grounds queries; KGQA readers (GrailQA, SimpleQuestions-WD,
WikiWebQuestions, PathQuestion) and the named sets :func:`load_kgqa` reads; queries sampled from
a KG (:func:`sample_queries`); and what a set of facts derives (:func:`answers_over`).
"""

from citegraph.caqa._types import QUERY_SHAPES, SHAPE_COMPLEXITY, QueryShape
from citegraph.caqa.queries._check import answers_over, supports
from citegraph.caqa.queries._graph import CaqaKG, Grounding
from citegraph.caqa.queries._kgqa import (
    KGQASample,
    KGQASet,
    read_grailqa,
    read_pathquestion,
    read_simplequestions_wd,
)
from citegraph.caqa.queries._kgqa_sets import KGQA_SETS, ground_set, load_kgqa
from citegraph.caqa.queries._kgqa_sparql import SparqlParse, parse_sparql, read_wikiwebquestions
from citegraph.caqa.queries._query import (
    LogicalQuery,
    QueryEdge,
    is_variable,
    path_query,
    single,
    tree_query,
    union_query,
)
from citegraph.caqa.queries._sampler import sample_queries

__all__ = [
    "KGQA_SETS",
    "QUERY_SHAPES",
    "SHAPE_COMPLEXITY",
    "CaqaKG",
    "Grounding",
    "KGQASample",
    "KGQASet",
    "LogicalQuery",
    "QueryEdge",
    "QueryShape",
    "SparqlParse",
    "answers_over",
    "ground_set",
    "is_variable",
    "load_kgqa",
    "parse_sparql",
    "path_query",
    "read_grailqa",
    "read_pathquestion",
    "read_simplequestions_wd",
    "read_wikiwebquestions",
    "sample_queries",
    "single",
    "supports",
    "tree_query",
    "union_query",
]
