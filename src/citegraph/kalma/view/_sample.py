"""The blocks of one KaLMA sample's page: the answer with its citations marked by verdict, the KG
the model was given, the sentence-citation alignment, scores, generation metadata, raw text.

Everything is rebuilt from the record alone (``kalma run`` and ``kalma score`` share the layout;
``kalma run`` adds ``kg_triples``, the facts its prompt held). Model text is kept verbatim: the
answer is only cut into segments, never rewritten or escaped (the renderers escape).

Entity ids that are IRIs are shown by their short id with the full IRI beside it
(:mod:`citegraph.kalma.view._ids`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from citegraph.io import json_text
from citegraph.kalma.view._ids import (
    TripleKey,
    id_segment,
    record_short_ids,
    triple_key,
    triple_text,
)
from citegraph.kalma.view._run_fields import (
    generation_fields,
    retrieval_fields,
    text_quality_fields,
    yes_no,
)
from citegraph.kalma.view._validity import validity_fields
from citegraph.runs import (
    Block,
    FieldsBlock,
    Mark,
    RawBlock,
    Record,
    Segment,
    TableBlock,
    TextBlock,
)

#: What a citation's colour says in an answer.
CITATION_LEGEND: list[tuple[Mark, str]] = [
    ("correct", "in the KG"),
    ("wrong", "not in the KG"),
    ("na", "[NA]"),
    ("malformed", "malformed"),
]


def percent(value: Any) -> str:
    """A proportion as ``33.3%``; ``—`` for None."""
    return "—" if not isinstance(value, int | float) else f"{100 * value:.1f}%"


class CitationRef:
    """One citation of the answer with its verdict and alignment pair (if any)."""

    def __init__(
        self,
        sentence: int,
        index: int,
        citation: Mapping[str, Any],
        verdict: Mapping[str, Any] | None,
        pair: Mapping[str, Any] | None,
        na_pairs: Sequence[Mapping[str, Any]] = (),
        short_ids: Mapping[str, str] | None = None,
    ) -> None:
        self.na_pairs = na_pairs
        self.short_ids = short_ids or {}
        self.sentence = sentence
        self.index = index
        self.citation = citation
        self.verdict = verdict
        self.pair = pair

    @property
    def kind(self) -> str:
        """``kg`` or ``na``."""
        return str(self.citation.get("kind"))

    def tip(self) -> str:
        """One line: the triple and its verdicts, or what [NA] means."""
        if self.kind == "na":
            lines = ["[NA]: knowledge missing from the KG"]
            lines += [
                f"entails absent fact {triple_text(p.get('triple') or {}, self.short_ids)}: "
                f"{yes_no(p.get('entailed'))}"
                for p in self.na_pairs
            ]
            return "\n".join(lines)
        triple = self.citation.get("triple") or {}
        verdict = self.verdict or {}
        parts = [
            f"in the KG: {yes_no(verdict.get('correct'))}",
            f"in gold: {yes_no(verdict.get('in_gold'))}",
            f"precise: {yes_no(verdict.get('precise'))}",
            "aligned (NLI): " + (yes_no(self.pair.get("entailed")) if self.pair else "not checked"),
        ]
        return f"{triple_text(triple, self.short_ids)} — " + "; ".join(parts)


def citation_refs(record: Record) -> list[CitationRef]:
    """Every citation of the parsed answer, in order, with its verdict and alignment pair."""
    parsed = record.get("parsed") or {}
    verdicts = list((record.get("citations") or {}).get("verdicts") or [])
    pairs = {
        (p.get("sentence_index"), p.get("citation_index")): p
        for p in (record.get("alignment") or {}).get("pairs") or []
    }
    na_pairs: dict[int, list[Mapping[str, Any]]] = {}
    for p in (record.get("na") or {}).get("pairs") or []:
        na_pairs.setdefault(int(p.get("sentence_index", -1)), []).append(p)
    short_ids = record_short_ids(record)
    out: list[CitationRef] = []
    kg_seen = 0
    for i, sentence in enumerate(parsed.get("sentences") or []):
        for j, citation in enumerate(sentence.get("citations") or []):
            verdict = None
            if citation.get("kind") == "kg":
                verdict = verdicts[kg_seen] if kg_seen < len(verdicts) else None
                kg_seen += 1
            found = pairs.get((i, j))
            out.append(CitationRef(i, j, citation, verdict, found, na_pairs.get(i, []), short_ids))
    return out


def _span_mark(refs: Sequence[CitationRef], issues: Sequence[Mapping[str, Any]]) -> Mark:
    kg = [r for r in refs if r.kind == "kg"]
    if any((r.verdict or {}).get("correct") is False for r in kg):
        return "wrong"
    if issues:
        return "malformed"
    if kg:
        return "correct" if all(r.verdict is not None for r in kg) else "unknown"
    return "na" if refs else "malformed"


def answer_paragraphs(record: Record) -> list[list[Segment]]:
    """The answer cut into segments, one per citation bracket (marked ``correct`` / ``wrong`` /
    ``na`` / ``malformed``, tooltip = the cited triples and their verdicts) and plain text
    between them; one paragraph per line. Joining each paragraph's texts and the paragraphs
    with ``\\n`` gives the answer back exactly.

    A bracket holding several facts is one segment (the record keeps the bracket, not each
    fact's offsets): it is ``wrong`` when any of its facts is not in the KG, and its tooltip has
    one line per fact.
    """
    answer = record.get("answer")
    if not isinstance(answer, str):
        reason = record.get("empty_reason") or "no answer"
        return [[Segment(text=f"(no answer: {reason})", mark="unknown")]]
    spans: dict[int, tuple[str, list[CitationRef], list[Mapping[str, Any]]]] = {}
    for ref in citation_refs(record):
        start, bracket = ref.citation.get("start"), ref.citation.get("bracket")
        if isinstance(start, int) and isinstance(bracket, str):
            spans.setdefault(start, (bracket, [], []))[1].append(ref)
    for issue in (record.get("parsed") or {}).get("issues") or []:
        start, bracket = issue.get("start"), issue.get("bracket")
        if isinstance(start, int) and isinstance(bracket, str):
            spans.setdefault(start, (bracket, [], []))[2].append(issue)
    paragraphs: list[list[Segment]] = [[]]
    pos = 0
    for start in sorted(spans):
        bracket, refs, issues = spans[start]
        end = start + len(bracket)
        if start < pos or answer[start:end] != bracket or "\n" in bracket:
            continue  # overlapping or not where the record says: leave the text unmarked
        _add_plain(paragraphs, answer[pos:start])
        tips = [r.tip() for r in refs] + [f"malformed: {i.get('reason')}" for i in issues]
        paragraphs[-1].append(
            Segment(text=bracket, mark=_span_mark(refs, issues), tip="\n".join(tips))
        )
        pos = end
    _add_plain(paragraphs, answer[pos:])
    return paragraphs


def _add_plain(paragraphs: list[list[Segment]], text: str) -> None:
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if n:
            paragraphs.append([])
        if line:
            paragraphs[-1].append(Segment(text=line))


def prompted(record: Record, info: Mapping[str, Any] | None = None) -> bool:
    """Whether this run prompted the model for the answer (``kalma run``) rather than scored an
    answer made elsewhere (``kalma score``): ``run.json``'s task when ``info`` names one, else
    whether the record has the generation fields only ``kalma run`` writes."""
    task = (info or {}).get("task")
    if isinstance(task, str) and task:
        return task == "kalma.run"
    return "prompt_version" in record or "generation" in record


def kg_table(record: Record, was_prompted: bool | None = None) -> TableBlock:
    """The facts the model was given (``kalma run``: ``kg_triples`` / ``kg_given``), or for
    ``kalma score`` the facts of the graphs the answer was scored against (``kg_triples``,
    own-KG scoring) or else those the record knows to be in the KG; plus gold and absent facts.

    Only a prompted answer's table says facts were removed before prompting, and only when
    the record lists removed facts (``removed``); ``kalma score``'s absent facts are the gold
    file's ``absent`` field. ``was_prompted`` defaults to :func:`prompted` of the record.
    """
    if was_prompted is None:
        was_prompted = prompted(record)
    given = record.get("kg_triples")
    if given is None and record.get("kg_given") is not None:
        given = [
            dict(zip(("subject", "relation", "value"), t, strict=False)) for t in record["kg_given"]
        ]
    short_ids = record_short_ids(record)
    labels: dict[str, str] = {}
    rows: dict[TripleKey, dict[str, Any]] = {}

    def add(triple: Mapping[str, Any] | Sequence[Any], **flags: bool) -> None:
        key = triple_key(triple)
        if isinstance(triple, Mapping) and triple.get("subject_label"):
            labels.setdefault(key[0], str(triple["subject_label"]))
        row = rows.setdefault(
            key, {"given": False, "cited": False, "gold": False, "absent": False, "removed": False}
        )
        for name, flag in flags.items():
            row[name] = row[name] or flag

    for triple in given or []:
        add(triple, given=True)
    citations = record.get("citations") or {}
    for verdict in citations.get("verdicts") or []:
        if verdict.get("correct"):
            add(verdict["triple"], cited=True, gold=bool(verdict.get("in_gold")))
        elif verdict.get("in_gold"):
            add(verdict["triple"], gold=True)
    for triple in citations.get("gold_missed") or []:
        add(triple, gold=True)
    removed = list(record.get("removed") or []) if was_prompted else []
    for triple in removed:
        add(triple, absent=True, removed=True)
    for triple in (record.get("na") or {}).get("absent") or []:
        add(triple, absent=True)
    for (subject, relation, value), row in rows.items():
        if relation == "name" and row["given"]:
            labels.setdefault(subject, value)
    table_rows: list[list[Segment]] = []
    marks: list[Mark | None] = []
    for (subject, relation, value), row in rows.items():
        status = [
            name
            for name, on in (
                ("given", row["given"]),
                ("cited", row["cited"]),
                ("gold", row["gold"]),
            )
            if on
        ]
        if row["absent"]:
            status.append("absent (removed)" if row["removed"] else "absent")
        mark: Mark | None = (
            "absent"
            if row["absent"]
            else "cited"
            if row["cited"]
            else "gold"
            if row["gold"]
            else None
        )
        table_rows.append(
            [
                Segment(text=labels.get(subject, short_ids.get(subject, subject))),
                Segment(text=relation),
                Segment(text=value),
                id_segment(subject, short_ids),
                Segment(text=", ".join(status)),
            ]
        )
        marks.append(mark)
    if given is not None and was_prompted:
        title = "KG given to the model"
        note = (
            "The facts the prompt held; the absent facts were removed before prompting."
            if removed
            else "The facts the prompt held (no knowledge was removed)."
        )
    elif given is not None:
        title = "KG facts the answer was scored against"
        note = (
            "kalma score scores answers made elsewhere: nothing was prompted here. Shown: the "
            "facts of the graphs this answer was scored against, cited, gold and absent facts "
            "(absent: the gold file's 'absent' field)."
        )
    else:
        title = "KG facts: cited, gold and absent"
        note = (
            "The record holds no copy of the KG; shown: the cited facts found in it, gold "
            "facts and absent facts."
        )
    return TableBlock(
        title=title,
        columns=["subject", "relation", "value", "id" if short_ids else "QID", "status"],
        rows=table_rows,
        row_marks=marks,
        note=note,
    )


def alignment_table(record: Record) -> TableBlock | None:
    """One row per sentence-citation pair: premise, hypothesis, entailed, source."""
    return _entailment_table(
        "Sentence alignment",
        ["sentence", "citation", "premise", "hypothesis", "entailed", "source"],
        (record.get("alignment") or {}).get("pairs") or [],
        lambda p: [
            Segment(text=str(p.get("sentence_index"))),
            Segment(text=str(p.get("citation_index"))),
            Segment(text=str(p.get("premise"))),
            Segment(
                text=str(p.get("hypothesis")),
                tip=triple_text(p.get("triple") or {}, record_short_ids(record)),
            ),
        ],
        lambda p: [Segment(text=str(p.get("source") or ""))],
    )


def na_table(record: Record) -> TableBlock | None:
    """One row per [NA] sentence and absent fact: does the sentence entail the fact?"""
    return _entailment_table(
        "[NA] sentences against absent facts",
        ["sentence", "premise", "absent fact", "entailed"],
        (record.get("na") or {}).get("pairs") or [],
        lambda p: [
            Segment(text=str(p.get("sentence_index"))),
            Segment(text=str(p.get("premise"))),
            Segment(text=triple_text(p.get("triple") or {}, record_short_ids(record))),
        ],
        lambda p: [],
    )


def _entailment_table(
    title: str,
    columns: list[str],
    pairs: Sequence[Mapping[str, Any]],
    before: Callable[[Mapping[str, Any]], list[Segment]],
    after: Callable[[Mapping[str, Any]], list[Segment]],
) -> TableBlock | None:
    """One row per NLI pair: ``before`` cells, the entailed verdict (marked), ``after`` cells;
    each row marked by its verdict. None without pairs."""
    if not pairs:
        return None
    rows: list[list[Segment]] = []
    marks: list[Mark | None] = []
    for p in pairs:
        mark: Mark = "correct" if p.get("entailed") else "wrong"
        rows.append([*before(p), Segment(text=yes_no(p.get("entailed")), mark=mark), *after(p)])
        marks.append(mark)
    return TableBlock(title=title, columns=columns, rows=rows, row_marks=marks)


#: Why a citation score is unmeasured when the record names no reason: its ratio is 0 / 0.
NO_CITATIONS = "no citations (the answer cites no KG triple: 0 / 0)"
EMPTY_GOLD = "empty gold set (0 / 0)"


def unmeasured_reason(record: Record, name: str) -> str:
    """Why score ``name`` of ``record`` is unmeasured: the recorded reason, else the 0 / 0 its
    counts show (a zero-citation answer's correctness and precision, an empty gold set's
    recall), else "no reason recorded"."""
    given = (record.get("unmeasured") or {}).get(name)
    if given:
        return str(given)
    citations = record.get("citations") or {}
    if name in ("correctness", "precision") and citations.get("n_citations") == 0:
        return NO_CITATIONS
    if name == "recall" and citations.get("n_gold") == 0:
        return EMPTY_GOLD
    return "no reason recorded"


def scores_fields(record: Record) -> FieldsBlock:
    """The citation counts, each score or why it is unmeasured, parse issues, and the [NA]
    edge-case fields."""
    fields = []
    citations = record.get("citations") or {}
    if isinstance(citations.get("n_citations"), int):
        n = citations["n_citations"]
        correct = citations.get("n_correct")
        fields.append(
            (
                "citations",
                f"{n} ({correct} in the KG)" if n else "0 (the answer cites no KG triple)",
            )
        )
    for name, value in (record.get("scores") or {}).items():
        text = (
            percent(value)
            if value is not None
            else f"unmeasured: {unmeasured_reason(record, name)}"
        )
        fields.append((str(name), text))
    parsed = record.get("parsed") or {}
    for issue in parsed.get("issues") or []:
        fields.append(("parse issue", f"{issue.get('bracket')}: {issue.get('reason')}"))
    na = record.get("na") or {}
    if na.get("edge_case"):
        fields.append(("[NA] edge case (§4.5) sentences", ", ".join(map(str, na["edge_case"]))))
    if na.get("edge_check"):
        fields.append(("[NA] edge case decided by", str(na["edge_check"])))
    if na.get("gold_set"):
        fields.append(("[NA] gold set", str(na["gold_set"])))
    if record.get("removal_note"):
        fields.append(("knowledge removal", str(record["removal_note"])))
    return FieldsBlock(title="Scores", fields=fields)


def sample_blocks(record: Record, info: Mapping[str, Any] | None = None) -> list[Block]:
    """Every block of a KaLMA sample's page, in reading order (``info``: the run's
    ``run.json``, which says whether the run prompted a model: :func:`prompted`)."""
    blocks: list[Block | None] = [
        TextBlock(title="Answer", paragraphs=answer_paragraphs(record), legend=CITATION_LEGEND),
        kg_table(record, prompted(record, info)),
        alignment_table(record),
        na_table(record),
        scores_fields(record),
        validity_fields(record),
        generation_fields(record),
        retrieval_fields(record),
        text_quality_fields(record),
        RawBlock(title="Raw model output", text=str(record.get("answer") or ""), open=False),
        RawBlock(title="JSON record", text=json_text(record, indent=2)),
    ]
    return [b for b in blocks if b is not None]
