"""Score attributed answers one item at a time: parse, citation scores, alignment, [NA].

An item carries everything one answer needs: the question, the answer text, the KG the model was
given (correctness is checked against it) and the gold knowledge. ``kalma score`` builds items from
an answers file; ``kalma run`` builds them from its own generations (with knowledge removed or
graphs replaced by the experiments). Both get the same per-answer record layout, which includes
the answer's citation validity (:mod:`._validity`): its cited ids are looked up in the run's KG
(an :class:`EntityLookup`) once per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import GoldRecord
from citegraph.kalma._rules import KalmaRules
from citegraph.kalma.parse import ParsedAnswer, parse_with
from citegraph.kalma.score._alignment import AnswerAlignment, score_alignment_many_async
from citegraph.kalma.score._citations import AnswerCitationScores, score_citations
from citegraph.kalma.score._config import ScoringOptions
from citegraph.kalma.score._na import AnswerNAScores, score_na_async
from citegraph.kalma.score._validity import (
    NO_KG,
    AnswerValidity,
    EntityLookup,
    answer_validity,
    cited_subjects,
)
from citegraph.kg import Subgraph, Triple
from citegraph.models import NLIModel
from citegraph.runs import blocking

NO_ABSENT = "no absent-knowledge set (gold 'absent' field) for this answer"
NO_GOLD_ENTRY = "no entry for this id in the gold file"


class ScoreItem(BaseModel):
    """One answer with what scoring it needs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    question: str
    answer: str | None = Field(description="The attributed answer; None or '' when empty.")
    graphs: tuple[Subgraph, ...] = Field(description="The KG the answer was generated from.")
    gold: GoldRecord | None = Field(default=None, description="Gold knowledge, when known.")
    gold_given: bool = Field(
        default=False, description="A gold source was given (so a missing entry is reported)."
    )
    retrieved: tuple[Subgraph, ...] | None = Field(
        default=None,
        description="What was retrieved, when it differs from graphs (own-KG scoring: the "
        "answer's 'retrieved' facts, or its 'entities'' graphs): 'outside the retrieved graphs' "
        "is measured against it. None: the graphs.",
    )
    names: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="Subjects the answer writes -> the entity ids a lookup in the whole KG "
        "found for them (own-KG scoring), for the parser's label rule.",
    )
    prefixes: dict[str, str] = Field(
        default_factory=dict,
        description="Prefixes the KG declares (own-KG scoring), for CURIEs of no graph's centre.",
    )
    no_graphs: str | None = Field(
        default=None, description="Why there is no graph, when none (the parse issues say it)."
    )

    @property
    def has_graph(self) -> bool:
        """The question came with at least one KG graph."""
        return bool(self.graphs)


async def score_items_async(
    items: Sequence[ScoreItem],
    config: ScoringOptions,
    model: NLIModel,
    *,
    entities: EntityLookup | None = None,
) -> list[dict[str, Any]]:
    """Score a batch of items (alignment pairs go to the NLI model together).

    ``entities`` looks the cited subject ids up in the run's KG, for the answers' citation
    validity (``not_in_kg``); without it that count is unmeasured, with the reason.
    """
    rules = config.rules
    parsed = [
        parse_with(
            item.answer or "",
            item.graphs,
            rules,
            names=item.names,
            prefixes=item.prefixes,
            no_graphs=item.no_graphs,
        )
        for item in items
    ]
    lookup = entities or EntityLookup.unavailable(NO_KG)
    known = await lookup.known(s for p in parsed for s in cited_subjects(p))
    skip_alignment = [
        rules.skip_unscorable_answers and (not (item.answer or "").strip() or not item.has_graph)
        for item in items
    ]
    alignments = await score_alignment_many_async(
        [None if skip else p for p, skip in zip(parsed, skip_alignment, strict=True)],
        model,
        mode=rules,
        hypothesis=config.hypothesis,
    )
    out = []
    for item, answer, alignment in zip(items, parsed, alignments, strict=True):
        citations = score_citations(
            answer,
            item.graphs,
            item.gold.knowledge if item.gold is not None else None,
            mode=rules,
            normalize=config.normalize,
        )
        na = await _score_na(answer, item, rules, config, model)
        retrieved = item.graphs if item.retrieved is None else item.retrieved
        validity = answer_validity(item.answer or "", answer, retrieved, known)
        out.append(_record(item, answer, citations, alignment, na) | _validity_field(validity))
    return out


score_items = blocking(score_items_async)


async def _score_na(
    answer: ParsedAnswer,
    item: ScoreItem,
    rules: KalmaRules,
    config: ScoringOptions,
    model: NLIModel,
) -> AnswerNAScores | None:
    entry = item.gold
    if entry is None:
        return None
    gold_set = None
    if rules.na_absent_is_uncited_gold:
        # The authors' eval_NA.py: absent = gold (no_round1) facts the answer does not cite.
        absent, gold_set = na_gold_set(entry, rules)
    elif entry.absent is None:
        return None
    else:
        absent = entry.absent
    return await score_na_async(
        answer,
        absent,
        model,
        mode=rules,
        hypothesis=config.hypothesis,
        question=item.question,
        gold_set=gold_set,
    )


def na_gold_set(entry: GoldRecord, rules: KalmaRules) -> tuple[tuple[Triple, ...], str]:
    """The gold facts reference-mode [NA] scoring starts from, and the set's name.

    The authors' ``eval_NA.py`` reads ``gold_used_knowledge_no_round1.json``: the injected facts
    without the round-1 labels. A gold record that has them (``knowledge_injected``, as
    ``kalma build`` writes) gives that set; otherwise the minimum knowledge set ``knowledge``.
    """
    if rules.na_gold_injected_only and entry.knowledge_injected is not None:
        return entry.knowledge_injected, "knowledge_injected"
    return entry.knowledge, "knowledge"


def _validity_field(validity: AnswerValidity) -> dict[str, Any]:
    """The record's ``citation_validity``: the counts and ``citations_per_sentence``."""
    ratio = {"citations_per_sentence": validity.citations_per_sentence}
    return {"citation_validity": validity.model_dump(mode="json") | ratio}


def _record(
    item: ScoreItem,
    answer: ParsedAnswer,
    citations: AnswerCitationScores,
    alignment: AnswerAlignment | None,
    na: AnswerNAScores | None,
) -> dict[str, Any]:
    unmeasured: dict[str, str] = dict(citations.unmeasured)
    missing_entry = item.gold_given and item.gold is None
    if missing_entry:
        unmeasured |= {"precision": NO_GOLD_ENTRY, "recall": NO_GOLD_ENTRY}
    if alignment is None:
        unmeasured["alignment"] = "answer skipped (reference mode: empty answer or no KG graph)"
    elif alignment.unmeasured_reason:
        unmeasured["alignment"] = alignment.unmeasured_reason
    if na is None:
        reason = NO_GOLD_ENTRY if missing_entry else NO_ABSENT
        unmeasured |= {"na_precision": reason, "na_recall": reason}
    else:
        unmeasured |= {f"na_{k}": v for k, v in na.unmeasured.items()}
    return {
        "id": item.id,
        "question": item.question,
        "answer": item.answer,
        "empty_answer": not (item.answer or "").strip(),
        "has_graph": item.has_graph,
        "parsed": answer.model_dump(mode="json"),
        "citations": citations.model_dump(mode="json"),
        "alignment": alignment.model_dump(mode="json") if alignment is not None else None,
        "na": na.model_dump(mode="json") if na is not None else None,
        "scores": {
            "correctness": citations.correctness,
            "precision": citations.precision,
            "recall": citations.recall,
            "alignment": alignment.score if alignment is not None else None,
            "na_precision": na.precision if na is not None else None,
            "na_recall": na.recall if na is not None else None,
        },
        "unmeasured": unmeasured,
        "parse_issues": len(answer.issues),
    }
