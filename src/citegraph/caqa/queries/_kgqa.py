"""KGQA questions with logical queries (§4.1): the inputs of the CAQA builder.

Each reader turns one dataset's files into :class:`KGQASample` records (question, answer ids,
:class:`LogicalQuery`) and counts what it skipped, by reason:

* :func:`read_grailqa`: GrailQA ``graph_query`` (Freebase; ``kgqa_tog/grailqa.json``).
* :func:`read_simplequestions_wd`: SimpleQuestions mapped to Wikidata (the raw 4-column files,
  or the derived TSV with a header).
* :func:`~citegraph.caqa.queries._kgqa_sparql.read_wikiwebquestions`: WikiWebQuestions' Wikidata
  SPARQL (in :mod:`citegraph.caqa.queries._kgqa_sparql`, with the supported shapes).
* :func:`read_pathquestion`: PathQuestion lines ``question <TAB> answer(a1/a2/) <TAB> path``.

:func:`~citegraph.caqa.queries._kgqa_sets.load_kgqa` reads a named set from the data directory;
:func:`~citegraph.caqa.queries._kgqa_sets.ground_set` keeps the samples whose query has answers
in a local KG. Ids are stable strings: ``grailqa:<qid>``, ``sqwd-codex-s:<line>``, ``wwq:<id>``,
``pq2h:<line>`` (1-based line numbers of the file).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citegraph.caqa.queries._query import LogicalQuery, QueryEdge, path_query, single
from citegraph.errors import DataError
from citegraph.io import load_json
from citegraph.kg import is_qid


class KGQASample(BaseModel):
    """One KGQA question: its logical query and answer entity ids."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable id: '<set prefix>:<qid or line>'.")
    question: str | None = Field(description="The question; None for queries sampled from a KG.")
    query: LogicalQuery = Field(description="The logical query; its answer variable is '?a'.")
    answers: tuple[str, ...] = Field(
        description="Answer entity ids (empty when the dataset gives none: ground them)."
    )
    source: str = Field(description="'grailqa', 'simplequestions-wd', 'pathquestion', 'sample'...")
    kg: str = Field(description="The KG the ids belong to, as an open_kg spec ('codex-s'...).")
    level: str | None = Field(default=None, description="GrailQA generalisation level.")


class KGQASet(BaseModel):
    """The samples read from one KGQA set, and how many were skipped for which reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The set's name ('grailqa', 'pathquestion-2h'...).")
    kg: str = Field(description="The KG its ids belong to (an open_kg spec).")
    samples: list[KGQASample]
    skipped: dict[str, int] = Field(description="Reason -> number of questions skipped.")


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# ---------------------------------------------------------------------------------- GrailQA
def _objects(value: Any) -> list[dict[str, Any]] | None:
    """``value`` when it is a list of JSON objects, else ``None``."""
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return value
    return None


def _grailqa_query(item: dict[str, Any], path: Path, index: int) -> LogicalQuery | str:
    """The query of a GrailQA item, or the reason it is skipped."""
    graph = item.get("graph_query")
    graph = graph if isinstance(graph, dict) else {}
    nodes, edges = _objects(graph.get("nodes")), _objects(graph.get("edges"))
    answers = _objects(item.get("answer") or [])
    if nodes is None or edges is None or answers is None:
        msg = "expected graph_query.nodes, graph_query.edges and answer: lists of objects"
        raise DataError(msg, path=path, field=f"[{index}]")
    functions = [item.get("function", "none")] + [n.get("function", "none") for n in nodes]
    if other := [f for f in functions if f not in ("none", None)]:
        return f"function {other[0]}"
    if any(n.get("node_type") == "literal" for n in nodes):
        return "literal node"
    if any(a.get("answer_type") != "Entity" or "answer_argument" not in a for a in answers):
        return "literal answer"
    terms: dict[Any, str] = {}
    answer_types: tuple[str, ...] = ()
    for node in sorted(nodes, key=lambda n: n.get("nid", 0)):
        kind, node_id = node.get("node_type"), node.get("id")
        if not isinstance(node_id, str) or "nid" not in node:
            raise DataError("a node needs 'nid' and 'id'", path=path, field=f"[{index}]")
        if kind == "class" and node.get("question_node") == 1:
            terms[node["nid"]], answer_types = "?a", (node_id,)
        elif kind == "class":
            terms[node["nid"]] = f"?v{sum(t.startswith('?v') for t in terms.values()) + 1}"
        elif kind == "entity":
            terms[node["nid"]] = node_id
        else:
            return f"node type {kind}"
    if not answer_types:
        return "no answer node"
    try:
        query_edges = tuple(
            QueryEdge(subject=terms[e["start"]], relation=e["relation"], object=terms[e["end"]])
            for e in edges
        )
    except (KeyError, TypeError, ValidationError) as exc:
        raise DataError(f"bad edge: {exc}", path=path, field=f"[{index}]") from exc
    try:
        return LogicalQuery(edges=query_edges, answer_types=answer_types)
    except ValidationError:
        return "unsupported query graph"


def read_grailqa(path: str | Path, *, kg: str = "grailqa-mini") -> KGQASet:
    """GrailQA questions (a JSON list with ``graph_query``) as samples.

    The class node with ``question_node == 1`` is the answer ``?a`` (its class becomes
    ``answer_types``); other class nodes are variables (their class is not kept: a
    :class:`LogicalQuery` constrains the answer's type only), entity nodes are constants, and
    each edge is the pattern ``start --relation--> end``. Skipped: questions with a function
    other than ``none`` (``"function count"``...), literal nodes, literal answers.

    Raises:
        DataError: not a list of objects, or a graph query without lists of node, edge and
            answer objects.
    """
    path = Path(path)
    items = load_json(path)
    if not isinstance(items, list):
        raise DataError("expected a JSON list of GrailQA questions", path=path)
    samples, skipped = [], Counter[str]()
    for index, item in enumerate(items):
        if not isinstance(item, dict) or "qid" not in item:
            raise DataError("expected an object with 'qid'", path=path, field=f"[{index}]")
        query = _grailqa_query(item, path, index)
        if isinstance(query, str):
            skipped[query] += 1
            continue
        answers = [a["answer_argument"] for a in item.get("answer") or []]
        samples.append(
            KGQASample(
                id=f"grailqa:{item['qid']}",
                question=item.get("question"),
                query=query,
                answers=_dedupe(answers),
                source="grailqa",
                kg=kg,
                level=item.get("level"),
            )
        )
    return KGQASet(name="grailqa", kg=kg, samples=samples, skipped=dict(skipped))


# ------------------------------------------------------------------------- SimpleQuestions
def _sq_tag(path: Path) -> tuple[str, str]:
    """``(id prefix, default kg)`` from a SimpleQuestions file name."""
    stem = path.stem
    if "grounded_in_" in stem:
        kg = stem.split("grounded_in_", 1)[1].replace("_", "-")
        return f"sqwd-{kg}", kg
    return f"sqwd-{stem.removeprefix('annotated_wd_data_')}", "wikidata"


def _tsv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    columns = ["subject", "property", "object", "question"]
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            fields = raw.rstrip("\r\n").split("\t")
            if lineno == 1 and "subject" in fields and "property" in fields:
                columns = fields
                continue
            if not raw.strip():
                continue
            if len(fields) != len(columns):
                msg = f"expected {len(columns)} tab-separated fields, got {len(fields)}"
                raise DataError(msg, path=path, line=lineno)
            yield lineno, dict(zip(columns, fields, strict=True))


def read_simplequestions_wd(path: str | Path, *, kg: str | None = None) -> KGQASet:
    """SimpleQuestions over Wikidata: ``subject, property, object, question`` per line.

    A ``P`` property gives ``(subject, P, ?a)``; an ``R`` property is the inverse, so
    ``Q6607 R1303 Q238795`` gives ``(?a, P1303, Q6607)``. The answer is always the object
    column. Raw files have 4 columns and no header; the derived TSV has a header row.

    Args:
        path: The file.
        kg: The KG the ids belong to (default: ``codex-s`` / ``codex-m`` for the derived
            files, from their name, else ``wikidata``).

    Raises:
        DataError: a line with the wrong number of fields or a bad id (file and line named).
    """
    path = Path(path)
    prefix, default_kg = _sq_tag(path)
    kg = kg or default_kg
    samples = []
    for lineno, row in _tsv_rows(path):
        subject, prop, obj = row.get("subject", ""), row.get("property", ""), row.get("object", "")
        for field, value in (("subject", subject), ("object", obj)):
            if not is_qid(value):
                raise DataError(
                    f"expected a QID, got {value!r}", path=path, line=lineno, field=field
                )
        if not re.fullmatch(r"[PR][1-9]\d*", prop):
            raise DataError(f"expected P.. or R.., got {prop!r}", path=path, line=lineno)
        pid = "P" + prop[1:]
        query = single(subject, pid, "?a") if prop[0] == "P" else single("?a", pid, subject)
        question = (row.get("question") or "").strip() or None
        samples.append(
            KGQASample(
                id=f"{prefix}:{lineno}",
                question=question,
                query=query,
                answers=(obj,),
                source="simplequestions-wd",
                kg=kg,
            )
        )
    return KGQASet(name=prefix, kg=kg, samples=samples, skipped={})


# ---------------------------------------------------------------------------- PathQuestion
PQ_FILES = {"PQ-2H": "2h", "PQ-3H": "3h", "PQL-2H": "pql2", "PQL-3H": "pql3"}


def _answer_set(text: str, path: Path, line: int) -> tuple[str, tuple[str, ...]]:
    """``united_kingdom(united_kingdom/)`` -> the answer and the answer set. Names may contain
    parentheses (``PG_(USA)(PG_(USA)/)``): the set starts at the first ``(`` after which the
    answer is one of the ``/``-separated names."""
    if text.endswith(")"):
        for i, char in enumerate(text):
            if char == "(" and i > 0:
                options = _dedupe([a for a in text[i + 1 : -1].split("/") if a])
                if text[:i] in options:
                    return text[:i], options
    raise DataError(f"expected 'answer(a1/a2/)', got {text!r}", path=path, line=line)


def read_pathquestion(path: str | Path, *, kg: str | None = None) -> KGQASet:
    """PathQuestion (``PQ-2H.txt``, ``PQ-3H.txt``, ``PQL-2H.txt``, ``PQL-3H.txt``).

    Each line ``question <TAB> answer(a1/a2/) <TAB> s#r1#e1#r2#answer[#<end>#answer]`` gives the
    path query ``[s, r1, ?v1, r2, ?a]`` with the answer set as answers.

    Args:
        path: The file.
        kg: The KG of the ids (default ``pathquestion-2h`` etc., from the file name).

    Raises:
        DataError: a malformed line (file and line named), or a path that ends outside the
            answer set.
    """
    path = Path(path)
    tag = PQ_FILES.get(path.stem, path.stem.lower())
    kg = kg or f"pathquestion-{tag}"
    prefix = "pq" + tag if tag in ("2h", "3h") else tag
    samples = []
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            fields = [f.strip() for f in raw.rstrip("\r\n").split("\t") if f.strip()]
            if not fields:
                continue
            if len(fields) != 3:
                msg = f"expected 'question<TAB>answer(set)<TAB>path', got {len(fields)} fields"
                raise DataError(msg, path=path, line=lineno)
            _, answers = _answer_set(fields[1], path, lineno)
            parts = fields[2].split("#")
            if "<end>" in parts:
                parts = parts[: parts.index("<end>")]
            if len(parts) < 3 or len(parts) % 2 == 0 or not all(parts):
                raise DataError("expected a path 's#r1#e1#...#answer'", path=path, line=lineno)
            if parts[-1] not in answers:
                msg = f"the path ends at {parts[-1]!r}, outside the answer set"
                raise DataError(msg, path=path, line=lineno)
            samples.append(
                KGQASample(
                    id=f"{prefix}:{lineno}",
                    question=fields[0],
                    query=path_query(parts[0], parts[1::2]),
                    answers=answers,
                    source="pathquestion",
                    kg=kg,
                )
            )
    return KGQASet(name=f"pathquestion-{tag}", kg=kg, samples=samples, skipped={})
