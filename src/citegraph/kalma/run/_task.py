"""``kalma run``: answer every question of a benchmark with citations, then score the answers.

One question flows through: KG context (the dataset's graphs or citegraph's retrieval) ->
experiments (graphs replaced for the retrieval ablation, gold facts removed for conscious
incompetence) -> Table 13 prompt -> model -> parse -> scores (correctness against the KG the model
was given, precision / recall against gold, alignment, [NA]) -> optional text-quality judge -> one
line of ``samples.jsonl``. The engine (:func:`citegraph.runs.run_task`) runs the questions
concurrently (bounded), writes each line as soon as its question finishes, resumes, retries the
questions whose model call failed (``status: failed``), and splits a run with ``shard``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import Field

from citegraph.datasets import BioKaLMASample, GoldRecord
from citegraph.errors import ConfigError
from citegraph.kalma.retrieve import RetrievalConfig, Retriever
from citegraph.kalma.run._answer import RunModels, answer_and_score
from citegraph.kalma.run._config import TASK, KalmaRunConfig
from citegraph.kalma.run._inputs import RunInputs, read_inputs, resolve_questions
from citegraph.kalma.run._report import build_run_metrics
from citegraph.kalma.score import (
    HUMAN_FIELD,
    NO_KG_DATASET_DIR,
    EntityLookup,
    HumanScores,
    KalmaScoreTask,
    check_human_ids,
    judge_grammar,
    read_human_scores,
)
from citegraph.kalma.view import KalmaPresenter
from citegraph.kg import KnowledgeGraph, kg_cache_note, kg_with_identity, open_kg
from citegraph.models import ChatModel, NLIModel, chat_model, nli_model
from citegraph.models.grammar import grammar_mode_of
from citegraph.runs import (
    Record,
    RunDir,
    RunOutcome,
    Runtime,
    Task,
    TaskMetrics,
    TaskResult,
    blocking,
    finalize,
    given_or_loaded,
    register_task,
    run_task_async,
    sha256_file,
    sorted_records,
)


class KalmaRunResult(TaskResult):
    """What :func:`run_kalma` produced (``n_resumed``: questions found already answered)."""

    n_done_now: int = Field(description="Questions answered in this call.")

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """``n_done_now``: questions worked on in this call."""
        return {"n_done_now": outcome.n_done_now}


@register_task
class KalmaRunTask(Task[str, RunModels]):
    """``kalma.run``: one item per question of the split; the record is the scored answer.

    Models passed in (``model``, ``judge``, ``nli``, ``kg``) are used as they are and left open
    for their owner; the ones built from the config are closed when the run ends.
    """

    name = TASK
    gate_metrics = TaskMetrics(
        fractions=KalmaScoreTask.gate_metrics.fractions,
        others=(
            *(n for n in KalmaScoreTask.gate_metrics.others if n != "warnings"),
            "generation", "retrieval", "experiment", "text_quality", "constraint",
        ),
        inner=(
            *KalmaScoreTask.gate_metrics.inner, "exact_match", "retrieval_accuracy_achieved",
        ),
    )  # fmt: skip
    presenter = KalmaPresenter

    def __init__(
        self,
        config: KalmaRunConfig,
        *,
        data_dir: str | Path | None = None,
        contact: str | None = None,
        model: ChatModel | None = None,
        judge: ChatModel | None = None,
        nli: NLIModel | None = None,
        kg: KnowledgeGraph | None = None,
    ) -> None:
        self.config: KalmaRunConfig = config
        self.data_dir = data_dir
        self.contact = contact
        self._model, self._judge, self._nli, self._kg = model, judge, nli, kg
        self._gold: dict[str, GoldRecord] | None = None  # your own questions' gold, resolved
        if config.text_quality_human is not None and not config.text_quality:
            raise ConfigError(
                "--text-quality-human compares the judge with people: give --text-quality MODEL"
            )

    @cached_property
    def human(self) -> HumanScores:
        """The human text-quality scores by question id (checked against the split's ids)."""
        path = self.config.text_quality_human
        if path is None:
            return {}
        scores = read_human_scores(path)
        check_human_ids(scores, self.inputs.split.ids, path)
        return scores

    @cached_property
    def inputs(self) -> RunInputs:
        """The split, gold, context graphs and judged questions (read on first use)."""
        return read_inputs(self.config, self.data_dir)

    def items(self) -> list[tuple[str, str]]:
        """One item per question of the split (or of your own questions file): its id (the
        question and its graphs are read when it is answered)."""
        return [(sid, sid) for sid in self.inputs.split.ids]

    @asynccontextmanager
    async def open(self, runtime: Runtime) -> AsyncIterator[RunModels]:
        config = self.config
        # --concurrency bounds the requests in flight per endpoint (answers and judge calls share
        # the limit when they go to the same server); without it each provider's default applies.
        served = runtime.model_options()
        options = dataclasses.replace(served, concurrency=runtime.concurrency)
        async with AsyncExitStack() as stack:
            answerer = await stack.enter_async_context(
                given_or_loaded(
                    self._model,
                    lambda: chat_model(config.model, options.serving(config.base_url)),
                )
            )
            judge = self._judge
            if judge is None and config.text_quality:
                spec = config.text_quality
                judge = await stack.enter_async_context(
                    given_or_loaded(
                        None,
                        lambda: chat_model(spec, options.serving(config.judge_base_url)),
                    )
                )
            if config.citations == "constrained":
                grammar_mode_of(answerer)  # a model that cannot constrain fails before any item
            if judge is not None:  # likewise a text-quality judge asked for constrained replies
                judge_grammar(judge, config.resolved_judge_replies(config.text_quality))
            kg, identity, retriever = self._kg, None, None
            if config.over_kg:
                kg, identity = await stack.enter_async_context(  # a spec's KG: closed at the end
                    kg_with_identity(
                        config.kg if kg is None else kg,
                        data_dir=self.data_dir,
                        contact=self.contact,
                        options=config.kg_options(cache=runtime.cache),
                    )
                )
                retriever = Retriever(RetrievalConfig.for_mode(config.rules))
            entity_ids: dict[str, str] = {}
            if config.questions is not None:
                assert kg is not None
                entity_ids, self._gold = await resolve_questions(kg, self.inputs)
            yield RunModels(
                answerer=answerer,
                nli=self._nli or nli_model(config.nli, served.serving(config.nli_base_url)),
                judge=judge,
                kg=kg,
                kg_identity=identity,
                retriever=retriever,
                entities=self._entity_lookup(kg),
                entity_ids=entity_ids,
            )

    def _entity_lookup(self, kg: KnowledgeGraph | None) -> EntityLookup:
        """Where cited ids are looked up (citation validity): the run's KG (``--retrieval ner``,
        or one passed in); else BioKaLMA's embedded store, opened on first use; over a dataset
        directory, nowhere (the reason is recorded)."""
        if kg is not None:
            return EntityLookup(kg)
        if self.config.dataset == "biokalma":
            data_dir = self.data_dir
            return EntityLookup(opener=lambda: open_kg("biokalma", data_dir=data_dir).kg)
        return EntityLookup.unavailable(NO_KG_DATASET_DIR)

    def run_config(self, models: RunModels) -> dict[str, Any]:
        return self.config.identity() | {
            "task": TASK,
            "model_name": models.answerer.name,
            "nli_name": models.nli.name,
            "judge_name": models.judge.name if models.judge else None,
        }

    def run_data(self, models: RunModels) -> dict[str, str]:
        data = dict(self.inputs.data)
        if models.kg_identity is not None:
            data["kg"] = models.kg_identity
        if self.config.text_quality_human is not None:
            data["text_quality_human"] = sha256_file(self.config.text_quality_human)
        return data

    def concurrency(self, models: RunModels, runtime: Runtime) -> int:
        """Questions in flight: ``--concurrency``, else the server's request limit, else 4."""
        return runtime.concurrency_for(models.answerer, 4)

    def prepare_ahead(self, models: RunModels) -> bool:
        """True for a served answerer (it bounds its own requests): the next questions'
        prompts are built while the answers are awaited."""
        return getattr(models.answerer, "concurrency", None) is not None

    async def work(self, batch: Sequence[str], models: RunModels) -> list[Record]:
        inputs, human = self.inputs, self.human
        records = [
            await answer_and_score(
                sample,
                self.config,
                models,
                graphs=inputs.context(sample),
                gold=inputs.gold if self._gold is None else self._gold,
                judged=inputs.judged,
            )
            for sample in inputs.split.samples(batch)
        ]
        return [r | {HUMAN_FIELD: human[r["id"]]} if r["id"] in human else r for r in records]

    def run_notes(self, models: RunModels) -> dict[str, Any]:
        """How the KG's remote answers are cached (``kg_cache``), over a SPARQL KG."""
        kg_cache = kg_cache_note(models.kg)
        return {"kg_cache": kg_cache} if kg_cache else {}

    def metrics(
        self, records: Sequence[Record], info: dict[str, Any], models: RunModels
    ) -> dict[str, Any]:
        """:meth:`summarize`, with the live run's KG cache hits (over a SPARQL KG)."""
        return self.summarize(records, info) | self.run_notes(models)

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return build_run_metrics(records, info)

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Dataset order (shards interleave questions)."""
        return sorted_records(records, lambda r: int(r.get("index", 0)))


def select_samples(samples: Sequence[BioKaLMASample], runtime: Runtime) -> list[BioKaLMASample]:
    """The questions this process answers: the first ``limit``, then this shard's share.

    Shards split by position after the limit (``p % N == i``; the split is in dataset order, so
    that is the dataset index), so they never overlap and their union is the whole selection.
    """
    return runtime.select(samples)


async def run_kalma_async(
    out: str | Path,
    config: KalmaRunConfig | None = None,
    *,
    runtime: Runtime | None = None,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    judge: ChatModel | None = None,
    nli: NLIModel | None = None,
    kg: KnowledgeGraph | None = None,
    contact: str | None = None,
) -> KalmaRunResult:
    """Generate attributed answers for a benchmark split and score them into a run directory.

    Args:
        out: The run directory (created; resumed when it holds the same run).
        config: What to run (see :class:`KalmaRunConfig`); defaults to the paper's setup with the
            embedded local model.
        runtime: limit, shard, concurrency, cache, overwrite, command, progress (not part of
            the run's identity; see :class:`citegraph.runs.Runtime`).
        data_dir: Where the datasets are.
        model, judge, nli, kg: Ready objects to use instead of building them from ``config``
            (tests, notebooks, reuse across runs); they are left open.
        contact: Contact for Wikidata's User-Agent policy (``--kg wikidata``).

    Raises:
        ConfigError: bad options, or ``out`` holds another run.
        DataError: the gold file is malformed or names unknown ids.
    """
    task = KalmaRunTask(
        config or KalmaRunConfig(),
        data_dir=data_dir,
        contact=contact,
        model=model,
        judge=judge,
        nli=nli,
        kg=kg,
    )
    outcome = await run_task_async(task, out, runtime)
    return KalmaRunResult.of(outcome)


run_kalma = blocking(run_kalma_async)


def finalize_run(run: RunDir) -> dict[str, Any]:
    """Aggregate a ``kalma run`` directory's ``samples.jsonl`` into ``metrics.json``: what
    ``runs report`` and ``runs merge`` do, through :func:`citegraph.runs.finalize`."""
    return finalize(KalmaRunTask, run)
