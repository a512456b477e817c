"""One KGQA question -> up to four CAQA samples (one per category), with their provenance.

Steps (§4.2): ground the original query; extend it (:func:`extend_query`, Table 3); derive the
structured attributions (:func:`structured_attributions`, §4.2.2); write the question (extended
when the query was), the answer statement and one citation per category with a textualiser
(template or LLM, §4.2.3). Randomness comes from ``Random(f"{seed}:{item id}")``, so an item's
samples do not depend on which other items are built, or in which order.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import Any

from citegraph.caqa._types import CATEGORIES, CaqaSample, Category
from citegraph.caqa.build._extend import UnionPartners, extend_query
from citegraph.caqa.build._perturb import structured_attributions
from citegraph.caqa.build._textualisers import Textualiser
from citegraph.caqa.queries import CaqaKG, KGQASample
from citegraph.errors import EndpointError, MissingDependency, ModelError
from citegraph.runs import FAILED, error_fields


def group_of(item: KGQASample) -> str:
    """The split group of a question: a hash of its original query and answers, so paraphrases
    of one query (PathQuestion) never straddle two splits."""
    key = json.dumps(
        [item.query.to_json(), sorted(item.answers)], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _label_ids(*queries: Any, facts: Sequence[Any] = ()) -> list[str]:
    ids: list[str] = []
    for query in queries:
        ids.extend(query.entities)
        ids.extend(query.relations)
        ids.extend(query.answer_types)
    for fact in facts:
        ids.extend(fact.as_tuple())
    return ids


async def build_item(
    item: KGQASample,
    kg: CaqaKG,
    textualiser: Textualiser,
    *,
    seed: int,
    max_answers: int,
    max_facts: int,
    union_partners: UnionPartners = "same-name",
    categories: Sequence[Category] = CATEGORIES,
) -> dict[str, Any]:
    """The run record of one KGQA question (``status`` ok, skipped or failed)."""
    record: dict[str, Any] = {"id": item.id, "source": item.source, "question": item.question}
    grounding = kg.ground(item.query)
    if not grounding.answers:
        return record | {"status": "skipped", "reason": "the query has no answer in the KG"}
    if len(grounding.answers) > max_answers:
        reason = f"more than {max_answers} answers"
        return record | {"status": "skipped", "reason": reason, "n": len(grounding.answers)}
    rng = random.Random(f"{seed}:{item.id}")
    extended = extend_query(
        kg, item.query, rng, max_answers=max_answers, union_partners=union_partners
    )
    attributions = structured_attributions(kg, extended, rng, categories=tuple(categories))
    supportive = attributions.items.get("supportive")
    if supportive is not None and len(supportive.facts) > max_facts:
        reason = f"supportive subgraph of more than {max_facts} facts"
        return record | {"status": "skipped", "reason": reason, "n": len(supportive.facts)}
    labels = kg.labels(_label_ids(item.query, extended.query, facts=extended.added))
    answers = extended.grounding.answers
    answer_names = [kg.label(a) for a in answers]
    record |= {
        "extension": extended.extension,
        "extension_drawn": extended.drawn,
        "extension_note": extended.note,
        "unavailable": attributions.unavailable,
        "query": extended.query.to_json(),
        "original_query": item.query.to_json(),
        "answers": list(answers),
    }
    try:
        original = item.question or await textualiser.new_question(item.query, labels)
        question = original
        if extended.extension != "none":
            question = await textualiser.question(
                original, item.query, extended.query, extended.extension, extended.added, labels
            )
        statement = await textualiser.answer(question, answer_names)
        samples = []
        text_source = (
            textualiser.name if textualiser.name.startswith("llm:") else textualiser.version
        )
        for category in categories:
            attribution = attributions.items.get(category)
            if attribution is None:
                continue
            citation = await textualiser.citation(attribution.facts, attribution.labels)
            samples.append(
                CaqaSample(
                    id=f"{item.id}:{category}",
                    question=question,
                    answer=statement,
                    citation=citation,
                    label=category,
                    complexity=extended.query.complexity,
                    source=item.source,
                    group=group_of(item),
                    original_question=original,
                    answer_entities=tuple(answers),
                    answer_names=tuple(answer_names),
                    query=extended.query.to_json(),
                    original_query=item.query.to_json(),
                    extension=extended.extension,
                    attribution=attribution,
                    text_source=text_source,
                ).model_dump(mode="json")
            )
    except MissingDependency:
        raise
    except (EndpointError, ModelError) as exc:
        return record | {"status": FAILED, **error_fields(exc)}
    return record | {"status": "ok", "samples": samples}
