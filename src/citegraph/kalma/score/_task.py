"""``kalma score``: score a file of attributed answers the way the KaLMA paper does (§4).

One answer flows through parse -> citation scores (correctness, precision, recall) -> alignment
(NLI on every sentence-citation pair) -> [NA] precision / recall (when an absent-knowledge set is
given). The engine (:func:`citegraph.runs.run_task`) scores the answers in batches of
``batch_size`` and writes each answer's line of ``samples.jsonl`` as its batch finishes, so a
killed run resumes where it stopped; ``limit`` and ``shard`` select answers by their position in
the answers file. ``metrics.json`` is aggregated from the records alone.

With ``text_quality`` the G-Eval judge rates the answers as ``kalma run``'s does
(:mod:`._judge_answers`); with ``text_quality_human`` each record also holds its human scores and
``metrics.json`` the judge's agreement with them (:mod:`._text_quality_agreement`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import Field

from citegraph.datasets import (
    MAX_ANSWER_CHARS,
    AnswerRecord,
)
from citegraph.errors import ConfigError
from citegraph.kalma.score._config import KalmaScoreConfig
from citegraph.kalma.score._item import ScoreItem, score_items_async
from citegraph.kalma.score._judge_answers import judge_records
from citegraph.kalma.score._own_kg import (
    FoundGraphs,
    OwnKG,
    graph_fields,
    graphs_of,
    prepare_own_kg,
)
from citegraph.kalma.score._report import METRICS, build_metrics
from citegraph.kalma.score._score_inputs import ScoreInputs, gold_of, read_score_inputs
from citegraph.kalma.score._text_quality import judge_grammar
from citegraph.kalma.score._text_quality_agreement import (
    HUMAN_FIELD,
    text_quality_agreement,
    text_quality_block,
)
from citegraph.kalma.score._validity import NO_KG_DATASET_DIR, EntityLookup
from citegraph.kalma.view import KalmaPresenter
from citegraph.kg import KnowledgeGraph, kg_cache_note, kg_with_identity, open_kg
from citegraph.models import (
    ChatModel,
    NLIModel,
    chat_model,
    current_meter,
    nli_model,
    specs_identity,
)
from citegraph.runs import (
    FAILED,
    Record,
    RunOutcome,
    Runtime,
    Task,
    TaskMetrics,
    TaskResult,
    blocking,
    given_or_loaded,
    in_id_order,
    opened,
    recorded_config,
    register_task,
    run_task_async,
)


class KalmaScoreResult(TaskResult):
    """What :func:`score_answers` produced (``n_resumed``: answers found already scored)."""

    n_scored_now: int = Field(description="Answers scored in this call (the rest were resumed).")

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """``n_scored_now``: answers scored in this call."""
        return {"n_scored_now": outcome.n_done_now}


@register_task
class KalmaScoreTask(Task[int, NLIModel]):
    """``kalma.score``: one item per line of the answers file (the item is the answer's position
    in the file: a run holds no answer, question graph or gold record beyond the batches being
    scored); the record is its scores.

    Over a dataset (``config.kg`` unset), each answer's graphs are its entry's. Over your own KG
    (``config.kg``, or a ``kg`` object), they come from the KG (:mod:`._own_kg`), which is opened
    and the inputs' entity references resolved in it when the run opens.

    ``runs report`` and ``runs merge`` put the records in id order (``general-<i>`` /
    ``specific-<i>`` by number), which is the answers file's order whenever that file is sorted
    by id (as ``kalma run`` exports and the demo answers are); only the reference-mode alignment
    cap and bootstrap intervals depend on the order.
    """

    name = "kalma.score"
    gate_metrics = TaskMetrics(
        fractions=METRICS,
        others=(
            "n_answers", "n_citations", "n_na_markers", "n_parse_issues", "n_failed",
            "citation_validity", "na_edge_case", "na_gold_set", "warnings", "text_quality",
            "text_quality_agreement",
        ),
        inner=(
            "malformed_rate", "not_in_kg_rate", "outside_retrieved_rate", "sentences_cited_rate",
            "answers_without_citations_rate",
        ),
    )  # fmt: skip
    presenter = KalmaPresenter
    model_role = "nli"
    batch_size = 32

    def __init__(
        self,
        config: KalmaScoreConfig,
        answers_path: str | Path,
        *,
        gold_path: str | Path | None = None,
        data_dir: str | Path | None = None,
        nli: NLIModel | None = None,
        kg: KnowledgeGraph | None = None,
        contact: str | None = None,
        max_answer_chars: int = MAX_ANSWER_CHARS,
        judge: ChatModel | None = None,
    ) -> None:
        """The task over ``answers_path`` (see :func:`score_answers_async` for the arguments).

        Raises:
            ConfigError: a KG is given with a dataset other than the default, or a KG object
                without ``config.kg`` naming it; human text-quality scores without a judge.
        """
        if config.text_quality_human is not None and not config.text_quality:
            raise ConfigError(
                "--text-quality-human compares the judge with people: give --text-quality MODEL"
            )
        if config.kg is not None and config.dataset != "biokalma":
            raise ConfigError(
                f"give answers either a dataset ({config.dataset!r}) or your own KG "
                f"({config.kg!r}), not both"
            )
        if kg is not None and config.kg is None:
            raise ConfigError("a KG object is given: set config.kg to what names it (its spec)")
        self.config: KalmaScoreConfig = config
        self.answers_path = Path(answers_path)
        self.gold_path = gold_path
        self.data_dir = data_dir
        self.contact = contact
        self.max_answer_chars = max_answer_chars
        self._nli = nli
        self._kg = kg
        self._own: OwnKG | None = None
        self._entities: EntityLookup | None = None
        self._judge = judge
        self._judge_open: ChatModel | None = None

    def __getstate__(self) -> dict[str, Any]:
        """The task without the KG and judge it opened (a Ray worker opens its own in
        :meth:`open`)."""
        return self.__dict__ | {"_own": None, "_entities": None, "_judge_open": None}

    @cached_property
    def inputs(self) -> ScoreInputs:
        """The answers, the split and the gold, checked, and their hashes (on first use:
        :func:`._score_inputs.read_score_inputs`)."""
        return read_score_inputs(
            self.config, self.answers_path, self.gold_path, self.data_dir, self.max_answer_chars
        )

    def items(self) -> list[tuple[str, int]]:
        return [(sid, position) for position, sid in enumerate(self.inputs.answers.ids)]

    @asynccontextmanager
    async def open(self, runtime: Runtime) -> AsyncIterator[NLIModel]:
        """The NLI model; over your own KG, the KG is opened and the inputs' references are
        resolved in it first (a bad one stops the run before ``run.json`` is written)."""
        config, inputs = self.config, self.inputs
        base = runtime.model_options()
        options = dataclasses.replace(base, concurrency=runtime.concurrency)
        async with AsyncExitStack() as stack:
            if config.kg is not None:  # a spec's KG is closed when the run ends
                kg, identity = await stack.enter_async_context(
                    kg_with_identity(
                        self._kg or config.kg,
                        data_dir=self.data_dir,
                        contact=self.contact,
                        options=config.kg_options(cache=runtime.cache),
                    )
                )
                self._own = await prepare_own_kg(kg, identity, inputs.answers, inputs.gold, config)
            self._entities = self._entity_lookup()
            if config.text_quality:
                spec = config.text_quality
                self._judge_open = await stack.enter_async_context(
                    given_or_loaded(
                        self._judge,
                        lambda: chat_model(spec, options.serving(config.judge_base_url)),
                    )
                )
                # a judge that cannot constrain its replies fails here, before any answer
                judge_grammar(self._judge_open, config.resolved_judge_replies(spec))
                meter = current_meter()  # the judge is no part of the opened models
                if meter is not None:
                    meter.assign(self._judge_open, "judge")
            if self._nli is not None:
                yield self._nli
                return
            yield await stack.enter_async_context(
                opened(nli_model(config.nli, base.serving(config.nli_base_url)))
            )

    def _entity_lookup(self) -> EntityLookup:
        """Where the cited ids are looked up (citation validity): your own KG; over BioKaLMA,
        its embedded store, opened on first use; over a dataset directory, nowhere (why)."""
        if self._own is not None:
            return EntityLookup(self._own.kg)
        if self.config.dataset == "biokalma":
            data_dir = self.data_dir
            return EntityLookup(opener=lambda: open_kg("biokalma", data_dir=data_dir).kg)
        return EntityLookup.unavailable(NO_KG_DATASET_DIR)

    def run_config(self, models: NLIModel) -> dict[str, Any]:
        judge = {"judge_name": self._judge_open.name} if self._judge_open is not None else {}
        recorded = specs_identity(self.config.model_dump(mode="json"), {"nli": "nli"})
        return recorded | {"nli_name": models.name} | judge

    def run_data(self, models: NLIModel) -> dict[str, str]:
        data = dict(self.inputs.data)
        if self._own is not None:
            data["kg"] = self._own.identity
        return data

    def run_notes(self, models: NLIModel) -> dict[str, Any]:
        """The input warnings (``metrics.json`` ``warnings``), when there are any."""
        warnings = self.inputs.warnings.as_json()
        notes: dict[str, Any] = {"warnings": warnings} if warnings else {}
        kg_cache = kg_cache_note(self._own.kg) if self._own is not None else None
        return notes | ({"kg_cache": kg_cache} if kg_cache else {})

    async def work(self, batch: Sequence[int], models: NLIModel) -> list[Record]:
        """The batch's records: each answer with its graphs (its dataset entry's, or over your
        own KG the retrieved ones, kept in the record as ``retrieval`` and ``kg_triples``),
        scored together (the alignment pairs go to the NLI model in one call)."""
        inputs, own = self.inputs, self._own
        records = inputs.answers.read(batch)
        failed = [_failed(r) for r in records if r.error is not None]  # failed is not zero
        records = [r for r in records if r.error is None]
        if not records:
            return failed
        gold = gold_of(inputs, own, [r.id for r in records])
        if inputs.split is None:
            assert own is not None
            found = list(await asyncio.gather(*(graphs_of(r, own) for r in records)))
            questions = [r.question or "" for r in records]
        else:
            samples = inputs.split.samples([r.id for r in records])
            found = [FoundGraphs.given(sample.graphs) for sample in samples]
            questions = [r.question or s.question for r, s in zip(records, samples, strict=True)]
        items = [
            ScoreItem(
                id=record.id,
                question=question,
                answer=record.answer,
                graphs=graphs.graphs,
                retrieved=graphs.retrieved if own is not None else None,
                names=graphs.names,
                prefixes=own.prefixes if own is not None else {},
                no_graphs=graphs.no_graphs if own is not None else None,
                gold=gold.get(record.id),
                gold_given=inputs.gold is not None,
            )
            for record, question, graphs in zip(records, questions, found, strict=True)
        ]
        scored = await score_items_async(items, self.config, models, entities=self._entities)
        if own is not None:
            scored = [
                record | graph_fields(graphs.graphs, graphs.retrieval)
                for record, graphs in zip(scored, found, strict=True)
            ]
        if self._judge_open is not None:
            await judge_records(scored, items, self._judge_open, self.inputs.judged, self.config)
        return [self._with_human(r) for r in failed + scored]

    def _with_human(self, record: Record) -> Record:
        """The record with its human text-quality scores, when the human file has them."""
        human = self.inputs.human.get(str(record.get("id")))
        return record | {HUMAN_FIELD: human} if human else record

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        config = recorded_config(KalmaScoreConfig, info)
        gold_given = "gold" in (info.get("data") or {})
        warnings = (info.get("notes") or {}).get("warnings") or {}
        metrics = build_metrics(
            records, config, info["config"]["nli_name"], gold_given=gold_given, warnings=warnings
        )
        if config.text_quality:  # only then: runs without a judge keep their metrics.json
            metrics["text_quality"] = text_quality_block(records)
            metrics["config"]["judge_name"] = info["config"].get("judge_name")
        if config.text_quality_human is not None:
            metrics["text_quality_agreement"] = text_quality_agreement(
                records, bootstrap=config.bootstrap, seed=config.seed
            )
        return metrics

    def metrics(
        self, records: Sequence[Record], info: dict[str, Any], models: NLIModel
    ) -> dict[str, Any]:
        """:meth:`summarize`, with how the KG's remote answers were cached (``kg_cache``:
        the live run's hits; over your own KG behind an endpoint)."""
        metrics = self.summarize(records, info)
        kg_cache = kg_cache_note(self._own.kg) if self._own is not None else None
        return metrics | ({"kg_cache": kg_cache} if kg_cache else {})

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Id order (``<split>-<i>`` by ``i``; your own ids by their natural order)."""
        return in_id_order(records)


def _failed(answer: AnswerRecord) -> Record:
    """The record of an answer whose model call failed: a failed item with the reason (and its
    type, when the answers file gives it: the exit status is read from it), never scored as an
    empty answer."""
    record: Record = {
        "id": answer.id,
        "status": FAILED,
        "error": f"the answer's model call failed: {answer.error}",
    }
    if answer.error_type is not None:
        record["error_type"] = answer.error_type
    return record | {"question": answer.question}


async def score_answers_async(
    answers_path: str | Path,
    out: str | Path,
    config: KalmaScoreConfig | None = None,
    *,
    runtime: Runtime | None = None,
    gold_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    nli: NLIModel | None = None,
    kg: str | KnowledgeGraph | None = None,
    contact: str | None = None,
    max_answer_chars: int = MAX_ANSWER_CHARS,
    judge: ChatModel | None = None,
) -> KalmaScoreResult:
    """Score a file of attributed answers and write a run directory.

    Example (answers over your own KG, with the lexical matcher)::

        from citegraph.kalma import score_answers
        result = score_answers("answers.jsonl", "runs/mine", kg="kg.ttl", gold_path="gold.jsonl")
        precision = result.metrics["precision"]  # {"micro": ..., "macro": ...}

    Args:
        answers_path: ``answers.jsonl`` (``{"id", "answer"}`` per line; over your own KG also
            ``question`` and optionally ``entities``: see :mod:`citegraph.datasets._answers`).
        out: The run directory (created; resumed if it holds the same run).
        config: Scoring options; defaults to the paper's definitions with the lexical matcher.
            ``config.batch_size`` answers go to the NLI model together unless
            ``runtime.batch_size`` says otherwise.
        runtime: limit, shard, overwrite, command, progress (see
            :class:`citegraph.runs.Runtime`; not part of the run's identity).
        gold_path: ``gold.jsonl`` with minimum knowledge sets (and optional absent sets); over
            your own KG its subjects may be ids, IRIs, short ids or labels.
        data_dir: Where the datasets are (see :func:`citegraph.datasets.resolve_data_dir`).
        nli: An entailment model to use instead of building ``config.nli`` (tests, reuse).
        kg: Score over your own KG instead of ``config.dataset``: a spec
            :func:`citegraph.kg.open_kg` takes (``"kg.ttl"``, ``"a.ttl,b.nt"``,
            ``"sparql+<url>"``, ``"codex-s"``...; the same as ``config.kg``), or a ready
            :class:`~citegraph.kg.KnowledgeGraph` (left open).
        contact: Contact for Wikidata's User-Agent policy (``kg="wikidata"``).
        max_answer_chars: The most characters an answer may hold (default 1,000,000: 1 MB of
            text); a longer answer, or a line too long to hold one, is a DataError naming the
            file and line, found without reading the line whole. A read limit, not part of the
            run's identity.
        judge: A text-quality judge to use instead of building ``config.text_quality`` (tests,
            reuse; left open); it needs ``config.text_quality`` set to what names it.

    Returns:
        The metrics and counts.

    Raises:
        DataError: an input file is malformed, names an id the split does not have, or an
            entity the KG does not have (or several); see :mod:`citegraph.kalma.score._inputs`.
        ConfigError: ``out`` holds a run with another configuration (and not ``overwrite``), or
            both a dataset and a KG are given.
    """
    config = config or KalmaScoreConfig()
    runtime = runtime or Runtime()
    if runtime.batch_size is None:
        runtime = runtime.model_copy(update={"batch_size": config.batch_size})
    given: KnowledgeGraph | None = None
    if isinstance(kg, str):
        config = _with_kg(config, kg)
    elif kg is not None:
        given = kg
        if config.kg is None:
            config = _with_kg(config, type(kg).__name__)
    task = KalmaScoreTask(
        config,
        answers_path,
        gold_path=gold_path,
        data_dir=data_dir,
        nli=nli,
        kg=given,
        contact=contact,
        max_answer_chars=max_answer_chars,
        judge=judge,
    )
    outcome = await run_task_async(task, out, runtime)
    return KalmaScoreResult.of(outcome)


def _with_kg(config: KalmaScoreConfig, spec: str) -> KalmaScoreConfig:
    if config.kg is not None and config.kg != spec:
        raise ConfigError(f"two KGs given: kg={spec!r} and config.kg={config.kg!r}")
    return config.model_copy(update={"kg": spec})


score_answers = blocking(score_answers_async)
