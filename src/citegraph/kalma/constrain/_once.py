"""Each retrieved fact cited at most once per constrained answer.

A fixed grammar holds one half: within a bracket, an entity's facts are listed in the prompt's
order, so none twice, and the two entity groups of a bracket name different entities
(:func:`~citegraph.kalma.constrain.citation_grammar`, in all three forms). Across brackets, "not
cited before in this answer" is not context-free; two mechanisms hold it:

- **in decoding** (``logits`` mode: ``hf/...``, ``local``, ``mock``): :class:`OncePerAnswer` is
  the grammar's :class:`~citegraph.models.GrammarUpdate`. Each time a citation closes, the
  grammar is made again without the facts cited so far (the reply so far as a literal prefix,
  then the language after a citation), so a token that would cite a fact again is never allowed;
- **after the reply** (servers: ``vllm-grammar``, ``gbnf``, ``json-schema``, which receive a
  fixed grammar): :func:`drop_repeats` removes each repeated citation from the reply's text,
  and the record counts them (``constraint.repeats_removed``). In every mode the text a
  constrained run records, parses and scores cites no triple twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from citegraph.kalma.constrain._choices import CitationChoices
from citegraph.kalma.constrain._forms import lark_form
from citegraph.kalma.parse import Citation, find_brackets, parse_answer

__all__ = ["OncePerAnswer", "drop_repeats"]


@dataclass(frozen=True, slots=True)
class OncePerAnswer:
    """The citation grammar's update: after each closed citation, the grammar of the rest of
    the reply without the facts the reply has cited (a :class:`~citegraph.models.GrammarUpdate`).
    """

    name: ClassVar[str] = "kalma-each-fact-once-v1"
    trigger: ClassVar[str] = "]"
    choices: CitationChoices

    def __call__(self, reply: str) -> str | None:
        """The Lark grammar of ``reply`` from its last closed citation on, with the facts cited
        so far left out; None while a citation is open or nothing has been cited."""
        spans = find_brackets(reply)
        if not spans or not all(s.closed for s in spans):
            return None
        done = reply[: spans[-1].end]
        used = cited_facts(done, self.choices)
        if not used:
            return None
        return lark_form(self.choices.remaining(used), done=done)


def cited_facts(text: str, choices: CitationChoices) -> set[tuple[str, str]]:
    """The ``(entity id, fact)`` choices ``text`` cites (as the paper parser reads it)."""
    found = (choices.fact_of(c.triple) for c in parse_answer(text, choices.graphs).kg_citations
             if c.triple is not None)  # fmt: skip
    return {f for f in found if f is not None}


def drop_repeats(text: str, choices: CitationChoices) -> tuple[str, int]:
    """``text`` with every citation of a fact cited before in it removed, and how many were.

    A bracket is rewritten from its remaining facts (:meth:`CitationChoices.bracket`), or
    removed with the space before it when none remain. Only brackets the grammar could have
    written are rewritten: every citation in it a choice, read without a parse issue;
    another bracket (``[NA]``, or a reply that ignored the grammar) is left as it is.

    Example:
        With ``Q1``'s facts ``a: b`` and ``c: d``, ``"X [Q1, a: b]. Y [Q1, a: b, c: d]. Z
        [Q1, c: d]."`` becomes ``("X [Q1, a: b]. Y [Q1, c: d]. Z.", 2)``.
    """
    parsed = parse_answer(text, choices.graphs)
    spans = {s.start: s for s in find_brackets(text) if s.closed}
    unread = {issue.start for issue in parsed.issues}
    brackets: dict[int, list[Citation]] = {}
    for citation in parsed.citations:
        brackets.setdefault(citation.start, []).append(citation)
    seen: set[tuple[str, str]] = set()
    edits: list[tuple[int, int, str]] = []
    removed = 0
    for start, cited in sorted(brackets.items()):
        facts = [choices.fact_of(c.triple) if c.triple is not None else None for c in cited]
        known = [f for f in facts if f is not None]
        if len(known) < len(facts) or start in unread or start not in spans:
            seen.update(known)
            continue
        kept = []
        for fact in known:
            if fact not in seen:
                kept.append(fact)
                seen.add(fact)
        if len(kept) < len(known):
            removed += len(known) - len(kept)
            edits.append((start, spans[start].end, choices.bracket(kept) if kept else ""))
    for start, end, bracket in reversed(edits):
        head = text[:start] if bracket else text[:start].rstrip(" ")
        text = head + bracket + text[end:]
    return text, removed
