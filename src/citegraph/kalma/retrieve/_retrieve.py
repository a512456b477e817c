"""KaLMA baseline retrieval (paper §3.1) and re-ranking (§3.2) over any KnowledgeGraph.

For a question:

1. **NER**: find the named entities (:mod:`citegraph.kalma.retrieve._ner`; spaCy by default).
2. **Lookup**: per mention, the KG entities whose label is the mention
   (``kg.find_entities``; case-insensitive by default), at most ``candidates_limit``. The NER type
   is a filter (paper: "person" matches Wikidata's "human"), through ``type_map``; a mention whose
   label is not in the map is looked up without a type. The filter is **lenient**: an entity
   whose types are unknown (``Entity.types`` empty, e.g. a KG without 'instance of' facts) passes;
   an entity with known types passes when one of them is the wanted type (compared
   case-insensitively).
3. **Re-rank**: fetch each candidate's one-hop subgraph and keep the one with the most neighbour
   values that occur in the question as exact, case-sensitive substrings (the authors'
   ``v in question``; see :func:`rerank`). Ties go to the first candidate in the KG's order
   (``find_entities`` order: by QID number in both built-in backends), as the authors'
   ``overlap > highest`` loop does.
4. The chosen graphs, one per resolved mention, de-duplicated by centre id, in mention order.

The authors' code differs in ways offered as options (:meth:`RetrievalConfig.reference` sets all
of them): ``person_only`` (every mention must be a human, whatever its NER label),
``drop_single_token_names`` (graphs found for a name without a space are dropped) and
``case_sensitive`` (their SPARQL matched ``'NAME'@en`` exactly). Their overlap counted the graph's
``name`` value too; that value is the same for every candidate of an exact lookup, so leaving it
out (as here) does not change their choice.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, KGQueryError
from citegraph.kalma.retrieve._config import RetrievalConfig
from citegraph.kalma.retrieve._ner import EntityRecognizer, Mention, capitalised_ner, spacy_ner
from citegraph.kg import Entity, KnowledgeGraph, Subgraph
from citegraph.runs import blocking

SINGLE_TOKEN = "name has no space (drop_single_token_names)"
_QID = re.compile(r"Q[0-9]+")


class Candidate(BaseModel):
    """An entity considered for a mention, with its re-ranking score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity: Entity
    score: int | None = Field(
        description="Neighbour values found in the question; None if its subgraph failed."
    )
    matched: tuple[str, ...] = Field(default=(), description="The values found, in graph order.")
    error: str | None = Field(default=None, description="Why the subgraph could not be read.")


class MentionResult(BaseModel):
    """What retrieval did with one mention."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mention: Mention
    type_filter: str | None = Field(description="The KG type the candidates had to have.")
    candidates: tuple[Candidate, ...] = Field(description="Candidates in the KG's order.")
    chosen: str | None = Field(default=None, description="Id of the chosen entity.")
    reason: str | None = Field(default=None, description="Why no entity was chosen.")


class Unresolved(BaseModel):
    """A mention for which no graph was retrieved, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mention: Mention
    reason: str


class Retrieval(BaseModel):
    """The retrieval result of one question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    mentions: tuple[Mention, ...] = Field(description="Cleaned NER mentions, in question order.")
    results: tuple[MentionResult, ...] = Field(description="One per mention, same order.")
    graphs: tuple[Subgraph, ...] = Field(
        description="Chosen one-hop graphs, de-duplicated by centre id, in mention order."
    )
    unresolved: tuple[Unresolved, ...] = Field(description="Mentions without a graph.")

    @property
    def qids(self) -> list[str]:
        """Centre ids of the retrieved graphs."""
        return [g.center.id for g in self.graphs]

    def ner_fields(self) -> dict[str, list[Any]]:
        """What a record keeps of NER: its ``mentions`` and the ``unresolved`` ones, why."""
        return {
            "mentions": [m.text for m in self.mentions],
            "unresolved": [
                {"mention": u.mention.text, "reason": u.reason} for u in self.unresolved
            ],
        }


# ---------------------------------------------------------------- re-ranking (§3.2)
def matched_values(question: str, subgraph: Subgraph) -> list[str]:
    """Values of ``subgraph``'s triples that occur in ``question`` (exact, case-sensitive).

    One entry per triple, so a value held by two relations counts twice (as the authors'
    ``for v in graph.values()``); empty values and the centre's own name are left out.
    """
    name = subgraph.center.name
    return [
        t.value for t in subgraph.triples if t.value and t.value != name and t.value in question
    ]


def rerank(question: str, subgraphs: Sequence[Subgraph]) -> list[tuple[Subgraph, int]]:
    """Score candidate graphs by neighbour-value overlap with the question, best first.

    Args:
        question: The question text.
        subgraphs: The candidates' one-hop graphs, in the KG's order.

    Returns:
        ``(subgraph, score)`` sorted by score, highest first; the sort is stable, so on a tie
        the earlier candidate stays first (it is the one chosen).
    """
    scored = [(g, len(matched_values(question, g))) for g in subgraphs]
    return sorted(scored, key=lambda pair: -pair[1])


# ---------------------------------------------------------------- lookup (§3.1)
def type_matches(entity: Entity, wanted: str | None) -> bool:
    """Lenient type filter: no wanted type, no known type, or a known type equal to ``wanted``."""
    if wanted is None or not entity.types:
        return True
    folded = wanted.casefold()
    return any(t.casefold() == folded for t in entity.types)


def wanted_type(mention: Mention, config: RetrievalConfig) -> str | None:
    """The KG type a mention's candidates must have, or ``None`` for no filter."""
    if config.person_only:
        return config.type_map.get("PERSON", "human")
    return config.type_map.get(mention.label)


def _kg_order(entity: Entity) -> tuple[int, int, str]:
    if _QID.fullmatch(entity.id):
        return (0, int(entity.id[1:]), "")
    return (1, 0, entity.id)


async def find_candidates_async(
    kg: KnowledgeGraph, name: str, wanted: str | None, config: RetrievalConfig
) -> tuple[list[Entity], int]:
    """Entities labelled ``name`` that pass the lenient type filter, in the KG's order.

    One untyped lookup, filtered here (so entities without types pass). When it comes back full,
    entities of the wanted type may lie past the limit, so a second lookup with the KG's own type
    filter adds them; the union is ordered by id (QID number), the built-in backends' order.

    Returns:
        The candidates (at most ``candidates_limit``) and how many entities the first lookup
        found that the type filter removed.
    """
    limit = config.candidates_limit
    found = await kg.find_entities(name, case_sensitive=config.case_sensitive, limit=limit)
    kept = [e for e in found if type_matches(e, wanted)]
    if wanted is not None and len(found) >= limit:
        typed = await kg.find_entities(
            name, type=wanted, case_sensitive=config.case_sensitive, limit=limit
        )
        by_id = {e.id: e for e in kept}
        for entity in typed:
            by_id.setdefault(entity.id, entity)
        kept = sorted(by_id.values(), key=_kg_order)
    return kept[:limit], sum(1 for e in found if not type_matches(e, wanted))


find_candidates = blocking(find_candidates_async)


async def _score(
    kg: KnowledgeGraph, question: str, entity: Entity
) -> tuple[Candidate, Subgraph | None]:
    try:
        graph = await kg.subgraph(entity.id)
    except KGQueryError as exc:
        return Candidate(entity=entity, score=None, error=str(exc)), None
    matched = matched_values(question, graph)
    return Candidate(entity=entity, score=len(matched), matched=tuple(matched)), graph


async def resolve_mention(
    question: str, mention: Mention, kg: KnowledgeGraph, config: RetrievalConfig
) -> tuple[MentionResult, Subgraph | None]:
    """Look a mention up, re-rank its candidates and return the decision with the chosen graph."""
    wanted = wanted_type(mention, config)
    if config.drop_single_token_names and " " not in mention.text:
        dropped = MentionResult(
            mention=mention, type_filter=wanted, candidates=(), reason=SINGLE_TOKEN
        )
        return dropped, None
    entities, n_filtered = await find_candidates_async(kg, mention.text, wanted, config)
    scored = await asyncio.gather(*(_score(kg, question, e) for e in entities))
    candidates = tuple(c for c, _ in scored)
    graphs = [g for _, g in scored if g is not None]
    if graphs:
        best, _ = rerank(question, graphs)[0]
        result = MentionResult(
            mention=mention, type_filter=wanted, candidates=candidates, chosen=best.center.id
        )
        return result, best
    if candidates:
        reason = "no candidate subgraph could be read"
    elif n_filtered:
        reason = f"{n_filtered} entities named {mention.text!r}, none of type {wanted!r}"
    else:
        reason = f"no entity named {mention.text!r} in the KG"
    result = MentionResult(
        mention=mention, type_filter=wanted, candidates=candidates, reason=reason
    )
    return result, None


async def retrieve_mentions(
    question: str, mentions: Sequence[Mention], kg: KnowledgeGraph, config: RetrievalConfig
) -> Retrieval:
    """Retrieval for mentions already found (the NER step done elsewhere)."""
    resolved = await asyncio.gather(*(resolve_mention(question, m, kg, config) for m in mentions))
    graphs: dict[str, Subgraph] = {}
    for _, graph in resolved:
        if graph is not None:
            graphs.setdefault(graph.center.id, graph)
    results = tuple(r for r, _ in resolved)
    return Retrieval(
        question=question,
        mentions=tuple(mentions),
        results=results,
        graphs=tuple(graphs.values()),
        unresolved=tuple(
            Unresolved(mention=r.mention, reason=r.reason) for r in results if r.reason is not None
        ),
    )


def make_recognizer(config: RetrievalConfig) -> EntityRecognizer:
    """The recognizer ``config.ner`` names (spaCy pipelines are cached per process)."""
    if config.ner == "capitalised":
        return capitalised_ner()
    return spacy_ner(config.spacy_model)


async def retrieve_async(
    question: str,
    kg: KnowledgeGraph,
    config: RetrievalConfig | None = None,
    *,
    ner: EntityRecognizer | None = None,
) -> Retrieval:
    """Retrieve the one-hop graphs of the entities a question mentions (KaLMA §3.1-3.2).

    Args:
        question: The question.
        kg: Any :class:`~citegraph.kg.KnowledgeGraph` (embedded store or SPARQL endpoint).
        config: Options; default :class:`RetrievalConfig` (the paper's behaviour).
        ner: A recognizer to use instead of the one ``config.ner`` names.

    Returns:
        The mentions, per mention the candidates with their scores, the chosen graphs and the
        unresolved mentions with their reasons.

    Raises:
        MissingDependency: ``config.ner == "spacy"`` and spaCy or its pipeline is missing.
        EndpointError: a remote KG failed (after its client's retries).
    """
    config = config or RetrievalConfig()
    recognizer = ner if ner is not None else make_recognizer(config)
    return await retrieve_mentions(question, recognizer(question), kg, config)


retrieve = blocking(retrieve_async)


Progress = Callable[[int, int], None]


class Retriever:
    """A reusable retrieval stage: holds the config and the recognizer (built on first use).

    Example:
        >>> retriever = Retriever(RetrievalConfig(ner="capitalised"))
        >>> results = await retriever.retrieve_many(questions, kg)  # doctest: +SKIP
    """

    def __init__(
        self, config: RetrievalConfig | None = None, *, ner: EntityRecognizer | None = None
    ) -> None:
        self.config = config or RetrievalConfig()
        self._ner = ner

    @property
    def ner(self) -> EntityRecognizer:
        """The recognizer (loaded on first access)."""
        if self._ner is None:
            self._ner = make_recognizer(self.config)
        return self._ner

    async def __call__(self, question: str, kg: KnowledgeGraph) -> Retrieval:
        """Retrieval for one question (see :func:`retrieve`)."""
        return await retrieve_mentions(question, self.ner(question), kg, self.config)

    async def retrieve_many(
        self,
        questions: Sequence[str],
        kg: KnowledgeGraph,
        *,
        concurrency: int = 8,
        progress: Progress | None = None,
    ) -> list[Retrieval]:
        """Retrieval for many questions, in order, at most ``concurrency`` at a time.

        NER runs first over all questions (batched when the recognizer has ``batch``).
        ``progress(done, total)`` is called as questions finish.

        Raises:
            ConfigError: ``concurrency`` is below 1.
        """
        if concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
        batch = getattr(self.ner, "batch", None)
        mentions = batch(list(questions)) if batch else [self.ner(q) for q in questions]
        semaphore = asyncio.Semaphore(concurrency)
        done = 0

        async def one(question: str, found: list[Mention]) -> Retrieval:
            nonlocal done
            async with semaphore:
                result = await retrieve_mentions(question, found, kg, self.config)
            done += 1
            if progress is not None:
                progress(done, len(questions))
            return result

        return list(
            await asyncio.gather(*(one(q, m) for q, m in zip(questions, mentions, strict=True)))
        )


async def retrieve_many_async(
    questions: Sequence[str],
    kg: KnowledgeGraph,
    config: RetrievalConfig | None = None,
    *,
    ner: EntityRecognizer | None = None,
    concurrency: int = 8,
    progress: Progress | None = None,
) -> list[Retrieval]:
    """:func:`retrieve` over many questions (see :meth:`Retriever.retrieve_many`)."""
    retriever = Retriever(config, ner=ner)
    return await retriever.retrieve_many(questions, kg, concurrency=concurrency, progress=progress)


retrieve_many = blocking(retrieve_many_async)
