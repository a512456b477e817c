"""One item of evolutionary question generation (KaLMA Appendix A.3, Table 18).

Round 1 labels the seed paragraph with facts of the knowledge pool (the two people's one-hop
subgraphs); the labels that are exactly pool facts are the round-1 knowledge. Rounds 2..R each
select one unused pool fact (rarity + coherence, :func:`select_fact`) and ask the model to extend
the paragraph with it; the selected facts are the injected knowledge. Finally the model asks a
general and a specific question whose answer is the paragraph. The minimum knowledge set is the
round-1 knowledge plus the injected facts (the authors' ``with_round1`` gold; injected facts
alone are their ``no_round1`` gold, kept too).

Robustness, recorded per round, never silent:

- a round-1 reply without usable labels keeps the seed paragraph unlabelled;
- an extension that does not start with the earlier paragraph is taken as the new sentence and
  appended when it is short (``fallback: appended``); an empty reply or a rewrite of the whole
  paragraph is replaced by the fact's template sentence with its citation (``fallback:
  template``);
- whether the reply actually cites the injected fact is recorded (``fact_cited``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.kalma.build._prompts import (
    annotate_messages,
    clean_paragraph,
    clean_question,
    extend_messages,
    question_messages,
)
from citegraph.kalma.build._select import (
    CoherenceNorm,
    PerplexityFn,
    RelationCounts,
    candidate_facts,
    select_fact_async,
)
from citegraph.kalma.build._templates import fact_sentence
from citegraph.kalma.constrain import CitationConstraint, CitationsMode
from citegraph.kalma.parse import parse_answer, strip_citations
from citegraph.kg import Subgraph, Triple, with_short_ids
from citegraph.models import ChatMessage, ChatModel, ChatRequest, GenerateConfig
from citegraph.runs import blocking

MAX_SENTENCE_CHARS = 400
"""A reply that does not extend the paragraph is taken as the new sentence up to this length."""


class EvolveConfig(BaseModel):
    """How one item evolves."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rounds: int = Field(default=5, ge=1, description="Rounds in all (round 1 = annotation).")
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="Weight of rarity vs coherence.")
    coherence: CoherenceNorm = Field(
        default="softmax", description="Coherence normalisation: softmax (paper) or minmax."
    )
    generate: GenerateConfig = GenerateConfig(temperature=0.1, max_tokens=512)
    citations: CitationsMode = Field(
        default="free",
        description="'constrained': annotation and extension replies cite only pool facts.",
    )


class Round(BaseModel):
    """What one round did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    fact: Triple | None = Field(default=None, description="The injected fact (rounds >= 2).")
    candidates: tuple[dict[str, Any], ...] = Field(
        default=(), description="Every scored candidate (rounds >= 2), best first."
    )
    reply: str = Field(description="The model's raw reply.")
    paragraph: str = Field(description="The labelled paragraph after this round.")
    fallback: str | None = Field(default=None, description="Why the reply was not used as is.")
    fact_cited: bool | None = Field(default=None, description="The reply cites the fact.")
    labelled: tuple[Triple, ...] = Field(
        default=(), description="Round 1: the pool facts the paragraph was labelled with."
    )


class Evolution(BaseModel):
    """The paragraph's evolution and the questions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rounds: tuple[Round, ...]
    round1_knowledge: tuple[Triple, ...]
    injected: tuple[Triple, ...]
    paragraph: str = Field(description="The final paragraph without labels.")
    general_question: str
    specific_question: str
    stopped_early: str | None = Field(default=None, description="Why fewer rounds ran.")

    @property
    def knowledge(self) -> tuple[Triple, ...]:
        """The minimum knowledge set: round-1 knowledge then injected facts, de-duplicated."""
        return tuple(dict.fromkeys((*self.round1_knowledge, *self.injected)))


async def _ask(
    model: ChatModel,
    messages: list[ChatMessage],
    config: GenerateConfig,
    constraint: CitationConstraint | None = None,
) -> str:
    """The model's reply; under ``constraint``, as its grammar made it (rendered, cut)."""
    if constraint is None:
        generation = await model.generate(ChatRequest(messages=tuple(messages), config=config))
        return generation.text
    return (await constraint.generate(model, messages, config))[1]


def plain(paragraph: str) -> str:
    """The paragraph with its citation brackets removed."""
    return strip_citations(paragraph)


def _cited(paragraph: str, pool: Sequence[Subgraph]) -> list[Triple]:
    parsed = parse_answer(paragraph, pool)
    return [c.triple for c in parsed.kg_citations if c.triple is not None]


async def evolve_async(
    seed: str,
    pool: Sequence[Subgraph],
    model: ChatModel,
    perplexity: PerplexityFn,
    counts: RelationCounts,
    config: EvolveConfig | None = None,
) -> Evolution:
    """Run the rounds and the two questions for one item.

    Args:
        seed: The seed paragraph (human-written, or a template sentence of the connecting fact).
        pool: The knowledge pool: the two people's one-hop subgraphs.
        model: The generating model.
        perplexity: Perplexities of candidate-extended paragraphs (one batched call per round).
        counts: Relation counts over the dataset, for the rarity term.
        config: Rounds, alpha, sampling parameters.

    Raises:
        EndpointError, ModelError: the model failed (the caller records the item as failed).
    """
    config = config or EvolveConfig()
    gen = config.generate
    pool = with_short_ids(pool)  # IRI ids are shown (and read back) by their short ids
    names = {g.center.id: g.center.name for g in pool}
    shown = {g.center.id: g.center.display_id for g in pool}
    pool_facts = {t for g in pool for t in g.triples}
    cites = None if config.citations == "free" else CitationConstraint.for_model(model, pool)

    reply = await _ask(model, annotate_messages(seed, pool), gen, cites)
    labelled_text = clean_paragraph(reply)
    labelled = [t for t in dict.fromkeys(_cited(labelled_text, pool)) if t in pool_facts]
    fallback = None
    if not labelled or not plain(labelled_text).strip():
        labelled_text, fallback = seed, "no usable labels: the seed paragraph is kept unlabelled"
    rounds = [
        Round(
            round=1,
            reply=reply,
            paragraph=labelled_text,
            fallback=fallback,
            labelled=tuple(labelled),
        )
    ]
    paragraph = labelled_text
    injected: list[Triple] = []
    stopped = None
    for number in range(2, config.rounds + 1):
        candidates = candidate_facts(pool, set(labelled) | set(injected))
        if not candidates:
            stopped = f"no unused pool fact left before round {number}"
            break
        selection = await select_fact_async(
            plain(paragraph),
            candidates,
            counts,
            perplexity,
            alpha=config.alpha,
            names=names,
            coherence=config.coherence,
        )
        fact = selection.chosen
        messages = extend_messages(paragraph, fact, names[fact.subject], shown[fact.subject])
        reply = await _ask(model, messages, gen, cites)
        extension = clean_paragraph(reply)
        paragraph, fallback = _extended(paragraph, extension, fact, names, shown[fact.subject])
        injected.append(fact)
        rounds.append(
            Round(
                round=number,
                fact=fact,
                candidates=tuple(c.model_dump(mode="json") for c in selection.candidates),
                reply=reply,
                paragraph=paragraph,
                fallback=fallback,
                fact_cited=fact in _cited(extension, pool),
            )
        )
    final = plain(paragraph)
    general = clean_question(await _ask(model, question_messages(final, "general"), gen))
    specific = clean_question(await _ask(model, question_messages(final, "specific"), gen))
    return Evolution(
        rounds=tuple(rounds),
        round1_knowledge=tuple(labelled),
        injected=tuple(injected),
        paragraph=final,
        general_question=general,
        specific_question=specific,
        stopped_early=stopped,
    )


evolve = blocking(evolve_async)


def _extended(
    previous: str, reply: str, fact: Triple, names: Mapping[str, str], shown_id: str
) -> tuple[str, str | None]:
    """The paragraph after an extension, and the fallback used if the reply was not usable."""
    before, after = plain(previous).strip(), plain(reply).strip()
    head = before[: min(len(before), 40)]
    if after.startswith(head) and len(after) > len(before):
        return reply, None
    if after and len(after) <= MAX_SENTENCE_CHARS:
        return f"{previous} {reply.strip()}", "appended: the reply is taken as the new sentence"
    why = "the reply rewrote the paragraph" if after else "the reply was empty"
    sentence = fact_sentence(fact, names[fact.subject])
    cite = f"[qid: {shown_id}, {fact.relation}: {fact.value}]"
    return f"{previous} {sentence.rstrip('.')} {cite}.", f"template: {why}"
