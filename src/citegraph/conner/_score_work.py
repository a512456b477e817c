"""One batch of a ``conner score`` run: every chosen metric over the batch's knowledge texts.

Each metric function takes the whole batch (one LM / NLI / embedding call where it can). The
``mode`` of the config picks the paper's or the reference code's form of every metric (see
:class:`~citegraph.conner.ConnerScoreConfig`). Paragraph coherence is recorded raw here; the
min-max normalisation over the whole run happens in the summary, so values do not depend on
batching.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citegraph.conner._answer import GeneratedAnswer, generate_answers
from citegraph.conner._coherence import paragraph_coherence, sentence_coherence
from citegraph.conner._evidence import (
    CombinedEvidence,
    FixedEvidence,
)
from citegraph.conner._factuality import (
    FactualityConfig,
    factuality,
)
from citegraph.conner._helpfulness import helpfulness
from citegraph.conner._informativeness import informativeness
from citegraph.conner._knowledge_io import KnowledgeInput
from citegraph.conner._relevance import metric_query, relevance
from citegraph.conner._score_config import ConnerScoreConfig
from citegraph.conner._score_models import ScoreModels
from citegraph.conner._types import ConnerSample, Knowledge, Metric, MetricValue
from citegraph.conner._validity import (
    OpenValidityConfig,
    SpanValidityConfig,
    open_validity,
    span_validity_batch,
)
from citegraph.runs import FAILED

__all__ = ["NO_ANSWER_MODEL", "PROMPT_TOO_LONG", "score_batch"]

NO_ANSWER_MODEL = "no answer model given (validity needs answers generated with the knowledge)"
PROMPT_TOO_LONG = "the answer prompt (with this knowledge) exceeds the answer model's context"
_NO_MODEL = "-"


def _factuality_config(config: ConnerScoreConfig) -> FactualityConfig:
    base = FactualityConfig.reference() if config.mode == "reference" else FactualityConfig()
    if config.outer is None:
        return base
    return base.model_copy(update={"outer": config.outer})


async def _validity(
    have: Sequence[ConnerSample],
    answers: Sequence[GeneratedAnswer],
    models: ScoreModels,
    config: ConnerScoreConfig,
) -> list[MetricValue]:
    assert models.nli is not None
    reference = config.mode == "reference"
    ok = [(s, a.answer) for s, a in zip(have, answers, strict=True) if a.answer is not None]
    if config.task == "nq":
        span = SpanValidityConfig.reference() if reference else SpanValidityConfig()
        scored = await span_validity_batch(
            [s.query for s, _ in ok],
            [a for _, a in ok],
            [s.gold_answer for s, _ in ok],
            models.nli,
            span,
        )
    else:
        open_config = OpenValidityConfig.reference() if reference else OpenValidityConfig()
        scored = [
            await open_validity(
                answer,
                CombinedEvidence(
                    FixedEvidence([s.gold_answer], name="gold-response"), models.evidence(s)
                ),
                models.nli,
                open_config,
            )
            for s, answer in ok
        ]
    by_id = {s.id: v for (s, _), v in zip(ok, scored, strict=True)}
    return [
        by_id.get(a.id)
        or MetricValue(
            value=None,
            reason=PROMPT_TOO_LONG if a.too_long else f"answer failed: {a.error}",
            model=models.nli.name,
        )
        for a in answers
    ]


async def _metric(
    metric: Metric,
    have: Sequence[ConnerSample],
    knowledge: Sequence[Knowledge],
    pool: Sequence[Knowledge],
    answers: Sequence[GeneratedAnswer] | None,
    models: ScoreModels,
    config: ConnerScoreConfig,
) -> list[MetricValue]:
    texts = [k.text for k in knowledge]
    reference = config.mode == "reference"
    if metric == "factuality":
        assert models.nli is not None
        fact = _factuality_config(config)
        return [
            await factuality(t, models.evidence(s), models.nli, fact)
            for s, t in zip(have, texts, strict=True)
        ]
    if metric == "relevance":
        assert models.relevance is not None
        return await relevance([metric_query(s) for s in have], texts, models.relevance)
    if metric == "coherence_sent":
        assert models.lm is not None
        return await sentence_coherence(texts, models.lm, mode=config.mode, ppl_cap=config.ppl_cap)
    if metric == "coherence_para":
        return await paragraph_coherence(texts, models.paragraph, normalize="none")
    if metric == "informativeness":
        assert models.lm is not None
        return await informativeness(
            have, texts, models.lm, first_token="drop" if reference else "keep"
        )
    if metric == "helpfulness":
        assert models.lm is not None
        return await helpfulness(
            have, knowledge, models.lm, u=config.u, seed=config.seed, negatives=pool,
            mode=config.mode,
        )  # fmt: skip
    if answers is None:
        return [MetricValue(value=None, reason=NO_ANSWER_MODEL, model=_NO_MODEL) for _ in have]
    return await _validity(have, answers, models, config)


async def score_batch(
    batch: Sequence[ConnerSample],
    inputs: KnowledgeInput,
    all_samples: Sequence[ConnerSample],
    models: ScoreModels,
    config: ConnerScoreConfig,
) -> list[dict[str, Any]]:
    """The ``samples.jsonl`` records of one batch (in order).

    Args:
        batch: The items to score.
        inputs: Every item's knowledge or the reason it has none.
        all_samples: All the task's items (helpfulness negatives, answer demonstrations).
        models: The loaded models.
        config: The run's configuration.
    """
    have = [s for s in batch if isinstance(inputs[s.id], Knowledge)]
    knowledge = [k for s in have if isinstance(k := inputs[s.id], Knowledge)]
    pool = [k for s in all_samples if isinstance(k := inputs[s.id], Knowledge)]
    answers: list[GeneratedAnswer] | None = None
    if "validity" in config.metrics and models.answer is not None and have:
        answers = await generate_answers(
            have,
            knowledge,
            models.answer,
            shots=config.answer_shots,
            pool=all_samples,
            seed=config.seed,
            concurrency=1,
        )
    values: dict[str, list[MetricValue]] = {}
    for metric in config.metrics:
        values[metric] = (
            await _metric(metric, have, knowledge, pool, answers, models, config) if have else []
        )
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
                {"id": sample.id, "status": "ok", "source": None, "knowledge_missing": item}
                | {"metrics": dict.fromkeys(config.metrics, missing)}
            )
            continue
        i = index[sample.id]
        record: dict[str, Any] = {
            "id": sample.id,
            "status": "ok",
            "source": item.source,
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
        records.append(record)
    return records
