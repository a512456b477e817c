"""The paper parser: an attributed answer -> sentences with their KG citations and [NA] marks.

This is citegraph's default reading of KaLMA answers (paper §2.1, §3.3 and the Table 13
demonstration): every sentence may cite zero or more KG triples and carry ``[NA]`` marks. It
accepts every citation format the paper and the authors' prompts use, and is tolerant where the
authors' ``extract_citations`` is not (see :func:`parse_answer_reference` for an exact copy of
that one):

- several facts per bracket (``[Q206534, place of birth: Newark, place of death: Badenweiler]``),
  one citation each; ``[qid: Q212657, ...]``; an entity name without a colon as a label
  (``[Q1, Stephen Crane, movement: X]``); several brackets per sentence;
- ``[NA]``, ``[ NA ]``, ``[N/A]``, ``[na]``, and NA inside a multi-fact bracket;
- values with commas and with ``": "``; ambiguities are settled against the retrieved graphs when
  given, and by a documented default rule otherwise (:mod:`._segment`);
- a bracket without a QID whose facts point to one subject among the graphs;
- whitespace inside relations and values is normalised (case is kept: metrics compare exactly).

Unreadable brackets become :class:`ParseIssue` records; parsing never raises on a string.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citegraph.kalma._rules import KalmaRules
from citegraph.kalma.parse._bracket import read_bracket
from citegraph.kalma.parse._brackets import find_brackets, remove_spans, tidy_plain
from citegraph.kalma.parse._graphs import GraphIndex
from citegraph.kalma.parse._reference import parse_answer_reference
from citegraph.kalma.parse._sentences import sentence_spans
from citegraph.kalma.parse._types import Citation, ParsedAnswer, ParseIssue, Sentence
from citegraph.kg import Subgraph

#: The ``parser`` field of answers read by :func:`parse_answer`.
PAPER_PARSER = "paper-v1"


def parse_answer(
    answer: str,
    graphs: Sequence[Subgraph] = (),
    *,
    names: Mapping[str, Sequence[str]] | None = None,
    prefixes: Mapping[str, str] | None = None,
    no_graphs: str | None = None,
) -> ParsedAnswer:
    """Split an attributed answer into sentences and read its citations (the paper's reading).

    Args:
        answer: The model's answer, citations included.
        graphs: The subgraphs retrieved for the question. Optional; when given they settle
            ambiguous brackets (which comma separates facts, which colon separates relation and
            value), supply the subject of a bracket without a QID, and give matching facts the
            graph's exact spelling (up to whitespace).
        names: Subjects written in the answer (labels, local names) -> the entity ids a lookup
            in the whole KG found for them (``kalma score --kg``): a label names those of the
            graphs' centres when no centre has it as its name.
        prefixes: Prefixes the KG declares (name -> namespace IRI), so a CURIE of one names
            its entity even when no graph's centre shows that prefix.
        no_graphs: Why no graph was given, said by the issue of a bracket whose subject the
            graphs would have settled (default: "no graphs were given").

    Returns:
        The sentences with their citations (in order of appearance) and the parse issues, with
        ``parser="paper-v1"``.

    Example:
        >>> parsed = parse_answer("He was born in Newark. [Q206534, place of birth: Newark]")
        >>> [c.triple.key for c in parsed.kg_citations]
        [('Q206534', 'place of birth', 'Newark')]
        >>> parsed.sentences[0].plain
        'He was born in Newark.'
    """
    index = GraphIndex(graphs, names, prefixes=prefixes, no_graphs=no_graphs)
    spans = find_brackets(answer)
    citations: list[Citation] = []
    issues: list[ParseIssue] = []
    for span in spans:
        if span.closed:
            found, problems = read_bracket(answer[span.start : span.end], span.start, index)
            citations.extend(found)
            issues.extend(problems)
        else:
            issues.append(
                ParseIssue(
                    bracket=answer[span.start : span.end],
                    start=span.start,
                    reason="unclosed bracket: no ']' after this '['",
                )
            )

    sentences: list[Sentence] = []
    pending = iter(citations)
    nxt = next(pending, None)
    for start, end in sentence_spans(answer, spans):
        own: list[Citation] = []
        while nxt is not None and nxt.start < end:
            own.append(nxt)
            nxt = next(pending, None)
        sentences.append(
            Sentence(
                text=answer[start:end],
                plain=tidy_plain(remove_spans(answer, spans, start, end)),
                citations=tuple(own),
            )
        )
    return ParsedAnswer(sentences=tuple(sentences), issues=tuple(issues), parser=PAPER_PARSER)


def parse_with(
    answer: str,
    graphs: Sequence[Subgraph],
    rules: KalmaRules,
    *,
    names: Mapping[str, Sequence[str]] | None = None,
    prefixes: Mapping[str, str] | None = None,
    no_graphs: str | None = None,
) -> ParsedAnswer:
    """Parse with the paper parser or, when ``rules`` say so, the authors' reference regex
    (which reads QIDs only, so ``names``, ``prefixes`` and ``no_graphs`` are the paper
    parser's)."""
    if rules.reference_parser:
        return parse_answer_reference(answer, graphs)
    return parse_answer(answer, graphs, names=names, prefixes=prefixes, no_graphs=no_graphs)
