"""The reference parser: the KaLMA authors' ``extract_citations`` and sentence split, exactly.

A literal transcription of lixinze777/Knowledge-aware-Language-Model-Attribution
(``auto_eval/eval.py``, ``eval_recall.py``, ``ablation/eval_NA.py``: citations;
``auto_eval/eval_relevance.py``: sentences and plain text), bugs included, so numbers can be
compared with those of the original scripts:

- brackets are ``re.findall(r'\\[.*?\\]')``: non-greedy, no nesting, no line breaks inside;
- only the exact string ``[NA]`` is NA (``[ NA ]``, ``[N/A]`` are not, and an NA inside a
  multi-fact bracket is not counted);
- the QID is the text between ``'['`` and the first ``','`` (``"qid: Q1"`` for ``[qid: Q1, ...]``,
  the whole bracket minus ``'['`` when there is no comma);
- relation and value come from splitting at ``": "`` and ``rsplit(", ", 1)``: values with ``", "``
  are read right, values with ``": "`` are cut wrongly, and a first segment without ``", "``
  (``[name: X]``) gives an empty property, whose fact is dropped;
- entity names without a colon (``[Q1, Stephen Crane, movement: X]``) are ignored;
- sentences: ``re.split(r'(?<=[^A-Z].[.?]) +(?=[A-Z])', answer)``; plain text:
  ``re.sub(r"[\\[].*?[\\]]", "", sent).replace("  ", " ").replace(" .", ".")``.

One documented extension, for KGs whose ids are not QIDs (the authors only had Wikidata): when
graphs are given and the qid string, without a ``qid:`` / ``id:`` lead, is not a QID but names a
centre (its full IRI, its short id such as ``ex:MarieCurie``, or its unique local name) or is an
IRI written in full, the subject is that full id. A qid string that is a QID is kept verbatim,
so ``[qid: Q1, ...]`` still gives the subject ``"qid: Q1"`` as in the original.

The authors read citations from the whole answer (correctness, recall, [NA]) but from each
sentence for alignment. Here citations are read from the whole answer and each goes to the
sentence holding its ``'['``. The reference split can cut inside a bracket (a value such as
``Pieter Cornelisz Hooft (1581-1647). High bailiff of Muiden, ...``); then ``eval_relevance.py``
would not see that citation, and a :class:`ParseIssue` says so. Brackets that yield nothing are
also listed as issues (the original drops them silently); issues never change the citations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citegraph.kalma.parse._graphs import GraphIndex
from citegraph.kalma.parse._types import Citation, ParsedAnswer, ParseIssue, Sentence
from citegraph.kg import Subgraph, Triple

#: The ``parser`` field of answers read by :func:`parse_answer_reference`.
REFERENCE_PARSER = "reference"

_BRACKET = re.compile(r"\[.*?\]")  # original: re.findall('\[.*?\]',answer)
_SENTENCE_SEP = re.compile(r"(?<=[^A-Z].[.?]) +(?=[A-Z])")
_PLAIN_BRACKET = re.compile(r"[\[].*?[\]]")
#: A qid string that is a QID, led or not by ``qid`` / ``id`` (the authors' reading is kept).
_QID_FORM = re.compile(r"\s*(?:q?id\s*[:=]?\s*)?q[1-9][0-9]*\s*", re.IGNORECASE)


def reference_triples(citation: str) -> list[list[str]]:
    """The ``[qid, property, value]`` lists the original code reads from one non-NA bracket.

    Transcribed line by line from ``extract_citations`` (auto_eval/eval.py)::

        qid = citation.split(',')[0][1:]
        items = citation.split(": ")
        property = ""
        value = ""
        for i in range(len(items)):
            if i == 0:
                try:
                    property = items[i].rsplit(", ", 1)[1]
                except:
                    property = ""
            elif i == len(items)-1:
                value = items[i][:-1]
                if property != "":
                    generated_citations.append([qid, property, value])
            else:
                value = items[i].rsplit(", ", 1)[0]
                if property != "":
                    generated_citations.append([qid, property, value])
                try:
                    property = items[i].rsplit(", ", 1)[1]
                except:
                    property = ""
    """
    out: list[list[str]] = []
    qid = citation.split(",")[0][1:]
    items = citation.split(": ")
    prop = ""
    value = ""
    for i in range(len(items)):
        if i == 0:
            try:
                prop = items[i].rsplit(", ", 1)[1]
            except IndexError:
                prop = ""
        elif i == len(items) - 1:
            value = items[i][:-1]
            if prop != "":
                out.append([qid, prop, value])
        else:
            value = items[i].rsplit(", ", 1)[0]
            if prop != "":
                out.append([qid, prop, value])
            try:
                prop = items[i].rsplit(", ", 1)[1]
            except IndexError:
                prop = ""
    return out


def reference_sentences(answer: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each piece of ``re.split(r'(?<=[^A-Z].[.?]) +(?=[A-Z])', answer)``."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for sep in _SENTENCE_SEP.finditer(answer):
        spans.append((pos, sep.start()))
        pos = sep.end()
    spans.append((pos, len(answer)))
    return spans


def reference_plain(sentence: str) -> str:
    """``re.sub(r"[\\[].*?[\\]]", "", sent).replace("  ", " ").replace(" .", ".")``."""
    return _PLAIN_BRACKET.sub("", sentence).replace("  ", " ").replace(" .", ".")


def reference_subject(qid: str, index: GraphIndex) -> str:
    """The subject of a reference citation: the authors' qid string, or, for an id that is not
    a QID (the extension in the module docstring), the full id it names."""
    if _QID_FORM.fullmatch(qid) or index.empty:
        return qid
    return index.subject_of(qid) or qid


def parse_answer_reference(answer: str, graphs: Sequence[Subgraph] = ()) -> ParsedAnswer:
    """Read an answer exactly as the KaLMA authors' evaluation scripts do.

    Args:
        answer: The model's answer, citations included.
        graphs: The retrieved graphs. Used only to map a subject that is not a QID (an IRI, a
            short id such as ``ex:MarieCurie``) to its full id; QIDs are read as the authors do.

    Returns:
        Sentences from the authors' split, with their plain text, and the citations their
        ``extract_citations`` reads (``[NA]`` as ``kind="na"``), with ``parser="reference"``.

    Example:
        >>> parsed = parse_answer_reference("Born in Rome [qid: Q1, place of birth: Rome].")
        >>> [c.triple.key for c in parsed.kg_citations]
        [('qid: Q1', 'place of birth', 'Rome')]
    """
    index = GraphIndex(graphs)
    citations: list[Citation] = []
    issues: list[ParseIssue] = []
    for match in _BRACKET.finditer(answer):
        citation = match.group(0)
        if citation == "[NA]":
            citations.append(Citation(kind="na", bracket=citation, start=match.start()))
            continue
        triples = reference_triples(citation)
        if not triples:
            issues.append(
                ParseIssue(
                    bracket=citation,
                    start=match.start(),
                    reason="reference parser reads nothing here (not '[NA]', no 'property: value')",
                )
            )
        for qid, prop, value in triples:
            triple = Triple(subject=reference_subject(qid, index), relation=prop, value=value)
            citations.append(
                Citation(kind="kg", triple=triple, bracket=citation, start=match.start())
            )

    sentences: list[Sentence] = []
    pending = 0
    for start, end in reference_sentences(answer):
        own: list[Citation] = []
        while pending < len(citations) and citations[pending].start < end:
            cit = citations[pending]
            if cit.start + len(cit.bracket) > end and (not own or own[-1].start != cit.start):
                issues.append(
                    ParseIssue(
                        bracket=cit.bracket,
                        start=cit.start,
                        reason="the reference sentence split cuts this bracket; "
                        "eval_relevance.py would not read it",
                    )
                )
            own.append(cit)
            pending += 1
        sent = answer[start:end]
        sentences.append(Sentence(text=sent, plain=reference_plain(sent), citations=tuple(own)))
    issues.sort(key=lambda issue: issue.start)
    return ParsedAnswer(sentences=tuple(sentences), issues=tuple(issues), parser=REFERENCE_PARSER)
