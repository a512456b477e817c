"""``kalma score``: score a file of attributed answers the way the KaLMA paper does (§4).

One answer flows through parse -> citation scores (correctness, precision, recall) -> alignment
(NLI on every sentence-citation pair) -> [NA] precision / recall (when an absent-knowledge set is
given). The engine (:func:`citegraph.runs.run_task`) scores the answers in batches of
``batch_size`` and writes each answer's line of ``samples.jsonl`` as its batch finishes, so a
killed run resumes where it stopped; ``limit`` and ``shard`` select answers by their position in
the answers file. ``metrics.json`` is aggregated from the records alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import (
    AnswerRecord,
    GoldRecord,
    KalmaSplit,
    index_answers,
    index_gold,
)
from citegraph.errors import DataError
from citegraph.io import JsonlIndex
from citegraph.kalma._view import KalmaPresenter
from citegraph.kalma.score._config import ScoreConfig
from citegraph.kalma.score._item import ScoreItem, score_items_async
from citegraph.kalma.score._report import build_metrics
from citegraph.models import NLIModel, nli_model, served_options
from citegraph.runs import (
    Record,
    RunOutcome,
    Runtime,
    Task,
    TaskResult,
    blocking,
    in_id_order,
    opened,
    recorded_config,
    register_task,
    run_task_async,
    sha256_file,
)


class ScoreResult(TaskResult):
    """What :func:`score_answers` produced (``n_resumed``: answers found already scored)."""

    n_scored_now: int = Field(description="Answers scored in this call (the rest were resumed).")

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """``n_scored_now``: answers scored in this call."""
        return {"n_scored_now": outcome.n_done_now}


class _Inputs(BaseModel):
    """Where the answers, their questions and their gold are in their files (checked once; a
    batch's are read again when it is scored), and the files' hashes."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    answers: JsonlIndex[AnswerRecord]
    split: KalmaSplit
    gold: JsonlIndex[GoldRecord] | None
    data: dict[str, str]


@register_task
class KalmaScoreTask(Task[int, NLIModel]):
    """``kalma.score``: one item per line of the answers file (the item is the answer's position
    in the file: a run holds no answer, question graph or gold record beyond the batches being
    scored); the record is its scores.

    ``runs report`` and ``runs merge`` put the records in dataset order (``general-<i>`` /
    ``specific-<i>``), which is the answers file's order whenever that file is sorted by id (as
    ``kalma run`` exports and the demo answers are); only the reference-mode alignment cap and
    bootstrap intervals depend on the order.
    """

    name = "kalma.score"
    presenter = KalmaPresenter
    model_role = "nli"
    batch_size = 32

    def __init__(
        self,
        config: ScoreConfig,
        answers_path: str | Path,
        *,
        gold_path: str | Path | None = None,
        data_dir: str | Path | None = None,
        nli: NLIModel | None = None,
    ) -> None:
        self.config: ScoreConfig = config
        self.answers_path = Path(answers_path)
        self.gold_path = gold_path
        self.data_dir = data_dir
        self._nli = nli

    @cached_property
    def inputs(self) -> _Inputs:
        """The answers, the split and the gold, checked, and their hashes (on first use).

        Raises:
            DataError: an input file is malformed or names an id the split does not have.
        """
        config = self.config
        answers = index_answers(self.answers_path)
        gold = index_gold(self.gold_path) if self.gold_path is not None else None
        split = KalmaSplit(config.dataset, config.split, self.data_dir)
        _check_ids(answers, split)
        data = {"answers": sha256_file(self.answers_path), "dataset": sha256_file(split.path)}
        if self.gold_path is not None:
            data["gold"] = sha256_file(self.gold_path)
        return _Inputs(answers=answers, split=split, gold=gold, data=data)

    def items(self) -> list[tuple[str, int]]:
        return [(sid, position) for position, sid in enumerate(self.inputs.answers.ids)]

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[NLIModel]:
        if self._nli is not None:
            return opened(self._nli)
        served = served_options(self.config.nli, self.config.nli_base_url, runtime.cache)
        return opened(nli_model(self.config.nli, **runtime.model_options(), **served))

    def run_config(self, models: NLIModel) -> dict[str, Any]:
        return self.config.model_dump(mode="json") | {"nli_name": models.name}

    def run_data(self, models: NLIModel) -> dict[str, str]:
        return dict(self.inputs.data)

    async def work(self, batch: Sequence[int], models: NLIModel) -> list[Record]:
        inputs = self.inputs
        records = inputs.answers.read(batch)
        samples = inputs.split.samples([r.id for r in records])
        gold = _gold_of(inputs.gold, [r.id for r in records])
        items = [
            ScoreItem(
                id=record.id,
                question=record.question or sample.question,
                answer=record.answer,
                graphs=sample.graphs,
                gold=gold.get(record.id),
                gold_given=inputs.gold is not None,
            )
            for record, sample in zip(records, samples, strict=True)
        ]
        return await score_items_async(items, self.config, models)

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        config = recorded_config(ScoreConfig, info)
        gold_given = "gold" in (info.get("data") or {})
        return build_metrics(records, config, info["config"]["nli_name"], gold_given=gold_given)

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Dataset order (``<split>-<i>`` by ``i``)."""
        return in_id_order(records)


def _check_ids(answers: JsonlIndex[AnswerRecord], split: KalmaSplit) -> None:
    for position, sid in enumerate(answers.ids):
        if split.index_of(sid) is None:
            hint = f"ids of this split run from {split.split}-0 to {split.split}-{len(split) - 1}"
            raise DataError(
                f"id {sid!r} is not in BioKaLMA's {split.split} split ({hint})",
                path=answers.path,
                line=answers.line(position),
                field="id",
            )


def _gold_of(gold: JsonlIndex[GoldRecord] | None, ids: Sequence[str]) -> dict[str, GoldRecord]:
    """The gold records of ``ids`` that the gold file has (none without a gold file)."""
    if gold is None:
        return {}
    positions = [p for p in map(gold.position, ids) if p is not None]
    return {record.id: record for record in gold.read(positions)}


async def score_answers_async(
    answers_path: str | Path,
    out: str | Path,
    config: ScoreConfig | None = None,
    *,
    runtime: Runtime | None = None,
    gold_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    nli: NLIModel | None = None,
) -> ScoreResult:
    """Score a file of attributed answers and write a run directory.

    Args:
        answers_path: ``answers.jsonl`` (``{"id", "answer"}`` per line).
        out: The run directory (created; resumed if it holds the same run).
        config: Scoring options; defaults to the paper's definitions with the lexical matcher.
            ``config.batch_size`` answers go to the NLI model together unless
            ``runtime.batch_size`` says otherwise.
        runtime: limit, shard, overwrite, command, progress (see
            :class:`citegraph.runs.Runtime`; not part of the run's identity).
        gold_path: ``gold.jsonl`` with minimum knowledge sets (and optional absent sets).
        data_dir: Where the datasets are (see :func:`citegraph.datasets.resolve_data_dir`).
        nli: An entailment model to use instead of building ``config.nli`` (tests, reuse).

    Returns:
        The metrics and counts.

    Raises:
        DataError: an input file is malformed or names an id the split does not have.
        ConfigError: ``out`` holds a run with another configuration (and not ``overwrite``).
    """
    config = config or ScoreConfig()
    runtime = runtime or Runtime()
    if runtime.batch_size is None:
        runtime = runtime.model_copy(update={"batch_size": config.batch_size})
    task = KalmaScoreTask(config, answers_path, gold_path=gold_path, data_dir=data_dir, nli=nli)
    outcome = await run_task_async(task, out, runtime)
    return ScoreResult.of(outcome)


score_answers = blocking(score_answers_async)
