"""The work on one ``kalma run`` question: context, experiments, answer, scores, judge.

KG context (the dataset's graphs, or citegraph's retrieval over ``--kg``) -> the conscious
incompetence experiment (gold facts removed from that context) -> the prompt and the model's
answer -> the same per-answer scores as ``kalma score`` (correctness against the KG the model was
given) -> the optional text-quality judge. The result is the question's ``samples.jsonl`` line;
a failed model call gives ``status: failed`` with the model's failure reason in ``error`` (its
type in ``error_type``), and no scores: it is never scored as an empty answer (tried again on
resume).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from citegraph.datasets import BioKaLMASample, GoldRecord, QuestionRecord
from citegraph.kalma.generate import AttributedAnswer, flatten_kg, generate_answer_async
from citegraph.kalma.retrieve import Retriever
from citegraph.kalma.run._ablations import remove_knowledge
from citegraph.kalma.run._config import KalmaRunConfig
from citegraph.kalma.score import (
    EntityLookup,
    ScoreItem,
    judge_text_quality_async,
    score_items_async,
)
from citegraph.kg import KnowledgeGraph, Subgraph, with_short_ids
from citegraph.models import ChatModel, NLIModel
from citegraph.models.chat import generation_record
from citegraph.runs import FAILED


class RunModels(BaseModel):
    """The models and KG one ``kalma run`` works with, opened once."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    answerer: ChatModel
    nli: NLIModel
    judge: ChatModel | None
    kg: KnowledgeGraph | None
    kg_identity: str | None
    retriever: Retriever | None
    entities: EntityLookup | None = None  # where cited ids are looked up (citation validity)
    entity_ids: dict[str, str] = {}  # your own questions' entities -> their ids in kg


async def answer_and_score(
    sample: BioKaLMASample | QuestionRecord,
    config: KalmaRunConfig,
    models: RunModels,
    *,
    graphs: tuple[Subgraph, ...],
    gold: Mapping[str, GoldRecord] | None,
    judged: set[str] | None,
) -> dict[str, Any]:
    """The record of one question (``graphs``: its dataset context, ablation applied)."""
    record: dict[str, Any] = {"id": sample.id, "index": sample.index}
    if isinstance(sample, QuestionRecord):
        assert models.kg is not None and models.retriever is not None
        graphs, record["retrieval"] = await _own_context(sample, models)
    elif models.retriever is not None and models.kg is not None:
        retrieval = await models.retriever(sample.question, models.kg)
        graphs = tuple(retrieval.graphs)
        record["retrieval"] = {
            "qids": [g.center.id for g in graphs],
            "gold_qids": [g.center.id for g in sample.graphs],
            "mentions": [m.text for m in retrieval.mentions],
        }
    if config.retrieval_accuracy < 100:
        own = {g.center.id for g in sample.graphs}
        record["replaced_graphs"] = [g.center.id for g in graphs if g.center.id not in own]
    entry = gold.get(sample.id) if gold is not None else None
    if config.remove_knowledge and entry is not None:
        removal = remove_knowledge(
            graphs,
            entry.knowledge,
            config.remove_knowledge,
            strategy=config.remove_strategy,
            seed=config.seed,
            sample_id=sample.id,
        )
        graphs = tuple(removal.graphs)
        entry = entry.model_copy(update={"absent": tuple(removal.removed)})
        record["removed"] = [t.as_list() for t in removal.removed]
        record["removal_note"] = removal.reason
    answer = await generate_answer_async(
        sample.question,
        graphs,
        models.answerer,
        config=config.generate_config(),
        prompt_version=config.prompt,
        split=config.split,
        citations=config.citations,
    )
    if answer.error:  # failed is not zero: no answer came, so nothing is scored
        record |= {"question": sample.question, "error": answer.error}
        if answer.error_type is not None:  # what the exit status is read from
            record["error_type"] = answer.error_type
    else:
        item = ScoreItem(
            id=sample.id,
            question=sample.question,
            answer=answer.text,
            graphs=graphs,
            gold=entry,
            gold_given=gold is not None,
        )
        [scored] = await score_items_async(
            [item], config.score_config(), models.nli, entities=models.entities
        )
        record |= scored
    record |= _generation_fields(answer)
    record["graph_qids"] = [g.center.id for g in graphs]
    shown = {g.center.id: g.center.display_id for g in with_short_ids(graphs)}
    if any(short != full for full, short in shown.items()):  # IRI ids: what the prompt showed
        record["short_ids"] = {full: short for full, short in shown.items() if short != full}
    record["kg_given"] = [t.as_list() for g in graphs for t in g.triples]
    record["kg_triples"] = prompt_triples(graphs, answer.prompt_version)
    if models.judge is not None and not answer.error and (judged is None or sample.id in judged):
        quality = await judge_text_quality_async(
            sample.question,
            flatten_kg(graphs, config.prompt),
            answer.text,
            models.judge,
            mode=config.rules,
            replies=config.resolved_judge_replies(config.text_quality),
        )
        record["text_quality"] = quality.model_dump(mode="json")
    return record


async def _own_context(
    sample: QuestionRecord, models: RunModels
) -> tuple[tuple[Subgraph, ...], dict[str, Any]]:
    """Your own question's KG context: its ``entities``' one-hop graphs, else what the
    retriever finds for it (NER, label lookup, re-ranking); and how it was found."""
    assert models.kg is not None and models.retriever is not None
    if sample.entities:
        ids = list(dict.fromkeys(models.entity_ids[text] for text in sample.entities))
        graphs = tuple([await models.kg.subgraph(i) for i in ids])
        return graphs, {"source": "entities", "entities": list(sample.entities), "qids": ids}
    retrieval = await models.retriever(sample.question, models.kg)
    graphs = tuple(retrieval.graphs)
    info = {"source": "ner", "qids": retrieval.qids, **retrieval.ner_fields()}
    if not graphs:
        info["found_none"] = "retrieval found no entity"
    return graphs, info


def prompt_triples(graphs: Sequence[Subgraph], version: str) -> list[dict[str, Any]]:
    """The facts the prompt showed the model (knowledge removal applied), with their subject's
    name, so a run's viewer needs no dataset lookup.

    Each graph's ``name`` facts are left out (the prompt names the entity once, from its centre);
    ``kalma-code-v1`` shows one value per relation (:meth:`Subgraph.as_dict`), so later values of
    a relation are left out there too.
    """
    out = []
    for graph in graphs:
        seen: set[str] = set()
        for triple in graph.triples:
            if triple.relation == "name" or triple.relation in seen:
                continue
            if version == "kalma-code-v1":
                seen.add(triple.relation)
            label = triple.subject_label
            if label is None and triple.subject == graph.center.id:
                label = graph.center.name
            row = triple.model_dump(mode="json", exclude_none=True)
            out.append(row | ({"subject_label": label} if label else {}))
    return out


def _generation_fields(answer: AttributedAnswer) -> dict[str, Any]:
    gen = answer.generation
    fields = {
        "status": FAILED if answer.error else "ok",
        "empty_reason": answer.empty_reason,
        "prompt_version": answer.prompt_version,
        "generation": None if gen is None else generation_record(gen),
    }
    if answer.constraint is not None:  # the record's "citations" are its scores: a key apart
        fields["constraint"] = answer.constraint
    return fields
