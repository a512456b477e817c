"""Wikidata SPARQL (WikiWebQuestions, QALD) to :class:`LogicalQuery`, for the supported shapes.

Supported: ``SELECT [DISTINCT] ?x WHERE { ... }`` whose body is plain ``wdt:`` triple patterns
between ``wd:`` entities and variables, written with ``.``, ``;`` and ``,``, forming a tree:
``wd:E wdt:P ?x.`` (single), ``?x wdt:P wd:E.`` (inverse single), ``wd:E wdt:P ?y. ?y wdt:P2
?x.`` (path), ``?x wdt:P wd:E; wdt:P2 wd:E2.`` (tree) and their combinations. The selected
variable becomes the answer ``?a``; other variables become ``?v1``, ``?v2``... in order of
appearance.

Anything else is skipped with a reason; the first that applies, in this order:

==============================  ====================================================
reason                          what triggers it
==============================  ====================================================
``not a SELECT query``          no ``SELECT ... WHERE { ... }``
``aggregate``                   ``COUNT`` or another expression in the projection
``qualifier (p:/ps:/pq:)``      a statement, statement-value or qualifier property
``property path``               ``/``, ``*``, ``+``, ``|``, ``^`` or ``!`` in a pattern
``FILTER``, ``UNION``, ...      that keyword (also ``SERVICE``, ``OPTIONAL``, ``MINUS``,
                                ``VALUES``, ``BIND``, ``GRAPH``, a nested group)
``ORDER BY / LIMIT``            a solution modifier after the body
``several answer variables``    more than one projected variable, or ``*``
``literal in pattern``          a string or number term
``unsupported term``            an IRI outside ``wd:`` / ``wdt:``, or the keyword ``a``
``answer not in the patterns``  the projected variable is not used
``patterns not a tree``         a cycle or a disconnected pattern
==============================  ====================================================

:func:`read_wikiwebquestions` reads WikiWebQuestions files with this parser; it also skips
items whose ``results`` hold a literal (``literal answer``), a non-Wikidata IRI (``non-entity
answer``) or nothing (``no answer``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from citegraph.caqa.queries._kgqa import KGQASample, KGQASet
from citegraph.caqa.queries._query import LogicalQuery, QueryEdge
from citegraph.errors import DataError
from citegraph.io import load_json
from citegraph.kg import WIKIDATA_DIRECT, WIKIDATA_ENTITY, is_qid

WIKIDATA_PREFIXES = {
    "wd": WIKIDATA_ENTITY,
    "wdt": WIKIDATA_DIRECT,
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
}
#: ``p:``, ``ps:`` and ``pq:`` all live under this namespace; only ``wdt:`` under it is allowed.
_STATEMENT_NAMESPACE = WIKIDATA_PREFIXES["p"]
_KEYWORDS = ("FILTER", "UNION", "SERVICE", "OPTIONAL", "MINUS", "VALUES", "BIND", "GRAPH")

_PREFIX = re.compile(r"PREFIX\s+([A-Za-z_][\w-]*)?:\s*<([^<>\s]*)>", re.IGNORECASE)
_QUERY = re.compile(r"^\s*SELECT\s+(.*?)\s*WHERE\s*\{(.*)\}\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL)
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<iri><[^<>"\s]*>)
    | (?P<var>[?$]\w+)
    | (?P<literal>"(?:[^"\\]|\\.)*"(?:@[A-Za-z-]+|\^\^(?:<[^<>\s]*>|[A-Za-z_][\w-]*:[\w-]*))?
        |'(?:[^'\\]|\\.)*'(?:@[A-Za-z-]+|\^\^(?:<[^<>\s]*>|[A-Za-z_][\w-]*:[\w-]*))?
        |[+-]?\d+(?:\.\d+)?(?![\w:]))
    | (?P<pname>(?:[A-Za-z_][\w-]*)?:[\w-]*)
    | (?P<word>[A-Za-z]\w*)
    | (?P<punct>\S)
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class SparqlParse:
    """The result of :func:`parse_sparql`: a query, or the reason it is not supported."""

    query: LogicalQuery | None
    skipped: str | None = None
    answer_variable: str | None = None
    """The projected variable's name in the SPARQL text (``x`` for ``?x``), for reading
    ``results`` bindings."""


class _Unsupported(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _tokens(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(body):
        match = _TOKEN.match(body, pos)
        if match is None or match.end() == pos:  # only trailing whitespace is left
            break
        kind = match.lastgroup or "punct"
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _resolve(kind: str, text: str, prefixes: dict[str, str]) -> str | None:
    """The full IRI of an ``iri`` or ``pname`` token (``None`` for an unknown prefix)."""
    if kind == "iri":
        return text[1:-1]
    prefix, _, local = text.partition(":")
    base = prefixes.get(prefix)
    return None if base is None else base + local


def _check_body(tokens: list[tuple[str, str]], prefixes: dict[str, str]) -> None:
    iris = [_resolve(k, t, prefixes) for k, t in tokens if k in ("iri", "pname")]
    if any(
        i and i.startswith(_STATEMENT_NAMESPACE) and not i.startswith(WIKIDATA_DIRECT) for i in iris
    ):
        raise _Unsupported("qualifier (p:/ps:/pq:)")
    words = [t.upper() for k, t in tokens if k == "word"]
    puncts = [t for k, t in tokens if k == "punct"]
    cut = next((i for i, (k, t) in enumerate(tokens) if t.upper() == "FILTER"), len(tokens))
    if any(t in "/*+|^!" for k, t in tokens[:cut] if k == "punct"):  # not FILTER's operators
        raise _Unsupported("property path")
    for keyword in _KEYWORDS:
        if keyword in words:
            raise _Unsupported(keyword)
    if "{" in puncts or "}" in puncts:
        raise _Unsupported("nested group")


class _Patterns:
    """A cursor over body tokens producing ``(subject, predicate, object)`` term triples."""

    def __init__(self, tokens: list[tuple[str, str]], prefixes: dict[str, str]) -> None:
        self.tokens, self.prefixes, self.pos = tokens, prefixes, 0

    def _next(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise _Unsupported("incomplete pattern")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def _peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def _term(self, *, predicate: bool) -> str:
        kind, text = self._next()
        if kind == "var":
            if predicate:
                raise _Unsupported("variable predicate")
            return "?" + text[1:]
        if kind == "literal":
            raise _Unsupported("literal in pattern")
        iri = _resolve(kind, text, self.prefixes) if kind in ("iri", "pname") else None
        if iri is None:
            raise _Unsupported("unsupported term")
        if predicate:
            pid = iri[len(WIKIDATA_DIRECT) :] if iri.startswith(WIKIDATA_DIRECT) else ""
            if not re.fullmatch(r"P[1-9]\d*", pid):
                raise _Unsupported("unsupported term")
            return pid
        qid = iri[len(WIKIDATA_ENTITY) :] if iri.startswith(WIKIDATA_ENTITY) else ""
        if not is_qid(qid):
            raise _Unsupported("unsupported term")
        return qid

    def triples(self) -> list[tuple[str, str, str]]:
        out: list[tuple[str, str, str]] = []
        while self.pos < len(self.tokens):
            subject = self._term(predicate=False)
            while True:
                predicate = self._term(predicate=True)
                while True:
                    out.append((subject, predicate, self._term(predicate=False)))
                    if self._peek() != ",":
                        break
                    self.pos += 1
                if self._peek() != ";":
                    break
                self.pos += 1
                if self._peek() in (".", ";", None):  # a trailing ';'
                    break
            while self._peek() in (".", ";"):
                self.pos += 1
        return out


def parse_sparql(text: str) -> SparqlParse:
    """Parse a Wikidata ``SELECT`` query of a supported shape (see the module docstring).

    Returns:
        The query (answer ``?a``), or ``query=None`` and the reason it was skipped.
    """
    prefixes = dict(WIKIDATA_PREFIXES)
    prefixes.update({(m.group(1) or ""): m.group(2) for m in _PREFIX.finditer(text)})
    match = _QUERY.match(_PREFIX.sub(" ", text))
    if match is None:
        return SparqlParse(None, "not a SELECT query")
    projection, body, tail = match.groups()
    try:
        if "(" in projection:
            raise _Unsupported("aggregate")
        tokens = _tokens(body)
        _check_body(tokens, prefixes)
        if tail:
            raise _Unsupported("ORDER BY / LIMIT")
        selected = re.sub(r"(?i)^(DISTINCT|REDUCED)\s+", "", projection).split()
        if len(selected) != 1 or not re.fullmatch(r"[?$]\w+", selected[0]):
            raise _Unsupported("several answer variables")
        answer = "?" + selected[0][1:]
        triples = _Patterns(tokens, prefixes).triples()
    except _Unsupported as exc:
        return SparqlParse(None, exc.reason)
    if not any(answer in (s, o) for s, _, o in triples):
        return SparqlParse(None, "answer not in the patterns")
    names = {answer: "?a"}
    for s, _, o in triples:
        for term in (s, o):
            if term.startswith("?") and term not in names:
                names[term] = f"?v{len(names)}"
    edges = tuple(
        QueryEdge(subject=names.get(s, s), relation=p, object=names.get(o, o))
        for s, p, o in triples
    )
    try:
        query = LogicalQuery(edges=edges)
    except ValidationError:
        return SparqlParse(None, "patterns not a tree")
    return SparqlParse(query, answer_variable=answer[1:])


def _result_answers(results: Any, variable: str, path: Path, index: int) -> tuple[str, ...] | str:
    """Answer QIDs from SPARQL JSON result bindings, or the reason to skip."""
    if not isinstance(results, list):
        raise DataError("expected a list of bindings", path=path, field=f"[{index}].results")
    answers: list[str] = []
    for binding in results:
        term = binding.get(variable) if isinstance(binding, dict) else None
        if not isinstance(term, dict):
            continue
        value = str(term.get("value", ""))
        if term.get("type") != "uri":
            return "literal answer"
        if not (value.startswith(WIKIDATA_ENTITY) and is_qid(value[len(WIKIDATA_ENTITY) :])):
            return "non-entity answer"
        answers.append(value[len(WIKIDATA_ENTITY) :])
    return tuple(dict.fromkeys(answers)) if answers else "no answer"


def read_wikiwebquestions(path: str | Path, *, kg: str | None = None) -> KGQASet:
    """WikiWebQuestions items (``id``, ``utterance``, ``sparql``, optional ``results``).

    The SPARQL body becomes a :class:`LogicalQuery` when its shape is supported
    (:func:`~citegraph.caqa.queries._kgqa_sparql.parse_sparql`); otherwise the item is skipped under
    the parser's reason. Answers come from ``results`` when present (empty otherwise).

    Args:
        path: ``dev.json`` / ``train.json`` or the derived ``*_grounded_in_codex_s.json``.
        kg: The KG of the ids (default ``codex-s`` for the derived file, else ``wikidata``).
    """
    path = Path(path)
    kg = kg or ("codex-s" if "codex_s" in path.name else "wikidata")
    items = load_json(path)
    if not isinstance(items, list):
        raise DataError("expected a JSON list of questions", path=path)
    samples, skipped = [], Counter[str]()
    for index, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("sparql"), str)
            or "id" not in item
        ):
            raise DataError(
                "expected an object with 'id' and 'sparql'", path=path, field=f"[{index}]"
            )
        parsed = parse_sparql(item["sparql"])
        if parsed.query is None or parsed.answer_variable is None:
            skipped[parsed.skipped or "unsupported SPARQL shape"] += 1
            continue
        answers: tuple[str, ...] | str = ()
        if "results" in item:
            answers = _result_answers(item["results"], parsed.answer_variable, path, index)
        if isinstance(answers, str):
            skipped[answers] += 1
            continue
        samples.append(
            KGQASample(
                id=f"wwq:{item['id']}",
                question=item.get("utterance"),
                query=parsed.query,
                answers=answers,
                source="wikiwebquestions",
                kg=kg,
            )
        )
    return KGQASet(name="wikiwebquestions", kg=kg, samples=samples, skipped=dict(skipped))
