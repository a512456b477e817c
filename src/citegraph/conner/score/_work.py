"""One batch of a ``conner score`` run: every chosen metric over the batch's knowledge texts.

Each metric function takes the whole batch (one LM / NLI / embedding call where it can). The
run's :class:`~citegraph.conner.ConnerRules` (``config.rules()``: the paper's or the reference
code's form of every metric) is chosen once and handed to each metric. Paragraph coherence is
recorded raw here; the min-max normalisation over the whole run happens in the summary, so values
depend neither on batching nor on sharding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citegraph.conner._types import Knowledge, Metric, MetricValue
from citegraph.conner.acquire import DownstreamAnswer, KnowledgeInput, generate_answers_async
from citegraph.conner.metrics import (
    CombinedEvidence,
    ConnerRules,
    FixedEvidence,
    factuality_async,
    helpfulness_async,
    informativeness_async,
    metric_query,
    open_validity_async,
    paragraph_coherence_async,
    relevance_async,
    sentence_coherence_async,
    span_validity_batch_async,
)
from citegraph.conner.score._config import ConnerScoreConfig
from citegraph.conner.score._models import ScoreModels
from citegraph.datasets import ConnerSample
from citegraph.runs import FAILED, blocking

__all__ = ["NO_ANSWER_MODEL", "PROMPT_TOO_LONG", "score_batch"]

NO_ANSWER_MODEL = "no answer model given (validity needs answers generated with the knowledge)"
PROMPT_TOO_LONG = "the answer prompt (with this knowledge) exceeds the answer model's context"
_NO_MODEL = "-"


@dataclass(frozen=True)
class _Batch:
    """The items of one batch that have knowledge, with what every metric needs."""

    have: Sequence[ConnerSample]
    knowledge: Sequence[Knowledge]
    pool: Sequence[Knowledge]
    answers: Sequence[DownstreamAnswer] | None
    models: ScoreModels
    config: ConnerScoreConfig
    rules: ConnerRules

    @property
    def texts(self) -> list[str]:
        return [k.text for k in self.knowledge]


async def _validity(b: _Batch, answers: Sequence[DownstreamAnswer]) -> list[MetricValue]:
    nli = b.models.nli
    assert nli is not None
    ok = [(s, a.answer) for s, a in zip(b.have, answers, strict=True) if a.answer is not None]
    if b.config.task == "nq":
        scored = await span_validity_batch_async(
            [s.query for s, _ in ok],
            [a for _, a in ok],
            [s.gold_answer for s, _ in ok],
            nli,
            b.rules.span_validity,
        )
    else:
        scored = [
            await open_validity_async(
                answer,
                CombinedEvidence(
                    FixedEvidence([s.gold_answer], name="gold-response"), b.models.evidence(s)
                ),
                nli,
                b.rules.open_validity,
            )
            for s, answer in ok
        ]
    by_id = {s.id: v for (s, _), v in zip(ok, scored, strict=True)}
    return [
        by_id.get(a.id)
        or MetricValue(
            value=None,
            reason=PROMPT_TOO_LONG if a.too_long else f"answer failed: {a.error}",
            model=nli.name,
        )
        for a in answers
    ]


async def _metric(metric: Metric, b: _Batch) -> list[MetricValue]:
    models, config = b.models, b.config
    if metric == "factuality":
        assert models.nli is not None
        return [
            await factuality_async(t, models.evidence(s), models.nli, b.rules.factuality)
            for s, t in zip(b.have, b.texts, strict=True)
        ]
    if metric == "relevance":
        assert models.relevance is not None
        return await relevance_async([metric_query(s) for s in b.have], b.texts, models.relevance)
    if metric == "coherence_sent":
        assert models.lm is not None
        return await sentence_coherence_async(b.texts, models.lm, mode=b.rules)
    if metric == "coherence_para":  # raw here: the summary normalises over the whole run
        return await paragraph_coherence_async(b.texts, models.paragraph, normalize="none")
    if metric == "informativeness":
        assert models.lm is not None
        return await informativeness_async(
            b.have, b.texts, models.lm, first_token=b.rules.info_first_token
        )
    if metric == "helpfulness":
        assert models.lm is not None
        return await helpfulness_async(
            b.have, b.knowledge, models.lm, u=config.u, seed=config.seed, negatives=b.pool,
            mode=b.rules,
        )  # fmt: skip
    if b.answers is None:
        return [MetricValue(value=None, reason=NO_ANSWER_MODEL, model=_NO_MODEL) for _ in b.have]
    return await _validity(b, b.answers)


async def score_batch_async(
    batch: Sequence[ConnerSample],
    inputs: KnowledgeInput,
    all_samples: Sequence[ConnerSample],
    models: ScoreModels,
    config: ConnerScoreConfig,
    rules: ConnerRules | None = None,
) -> list[dict[str, Any]]:
    """The ``samples.jsonl`` records of one batch (in order).

    A record can be read alone: the item's ``query`` (NQ: the question; WoW: the dialogue
    history joined by ``" [SEP] "``, what relevance scores against), the ``knowledge`` text
    scored (``None`` with ``knowledge_missing`` when the item has none), its ``source``, each
    metric's value (factuality's ``details["sentences"]``: each sentence's verdict and the
    evidence that decided it) and, with an answer model, the answer.

    Args:
        batch: The items to score.
        inputs: Every item's knowledge or the reason it has none.
        all_samples: All the task's items (helpfulness negatives, answer demonstrations):
            never only this batch's or this shard's, so values do not depend on either.
        models: The loaded models.
        config: The run's configuration.
        rules: The paper's or the reference code's rules (default: ``config.rules()``).
    """
    have = [s for s in batch if isinstance(inputs[s.id], Knowledge)]
    knowledge = [k for s in have if isinstance(k := inputs[s.id], Knowledge)]
    pool = [p for s in all_samples if isinstance(p := inputs.get(s.id), Knowledge)]
    answers: list[DownstreamAnswer] | None = None
    if "validity" in config.metrics and models.answer is not None and have:
        answers = await generate_answers_async(
            have,
            knowledge,
            models.answer,
            shots=config.answer_shots,
            pool=all_samples,
            seed=config.seed,
            concurrency=1,
        )
    chosen = _Batch(have, knowledge, pool, answers, models, config, rules or config.rules())
    values: dict[str, list[MetricValue]] = {}
    for metric in config.metrics:
        values[metric] = await _metric(metric, chosen) if have else []
    index = {s.id: i for i, s in enumerate(have)}
    records: list[dict[str, Any]] = []
    for sample in batch:
        item = inputs[sample.id]
        if isinstance(item, str):
            missing: dict[str, Any] = {
                "value": None,
                "reason": item,
                "model": _NO_MODEL,
                "details": {},
            }
            records.append(
                {"id": sample.id, "status": "ok", "source": None, "query": metric_query(sample)}
                | {"knowledge": None, "knowledge_missing": item}
                | {"metrics": dict.fromkeys(config.metrics, missing)}
            )
            continue
        i = index[sample.id]
        record: dict[str, Any] = {
            "id": sample.id,
            "status": "ok",
            "source": item.source,
            "query": metric_query(sample),
            "knowledge": item.text,
            "metrics": {m: values[m][i].model_dump(mode="json") for m in config.metrics},
        }
        if answers is not None:
            answer = answers[i]
            record["answer"] = answer.answer
            record["answer_prompt"] = answer.prompt_version
            if answer.too_long:  # validity is unmeasured with the reason; a retry cannot help
                record["answer_error"] = answer.error
            elif answer.error is not None:
                record |= {"status": FAILED, "error": f"answer model: {answer.error}"}
                if answer.error_type is not None:  # what the exit status is read from
                    record["error_type"] = answer.error_type
        records.append(record)
    return records


score_batch = blocking(score_batch_async)
