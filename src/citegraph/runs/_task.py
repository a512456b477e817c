"""The Task contract: what a pipeline must say so that the engine can run it.

A task is four things:

- a frozen pydantic **config** (what identifies the run; written verbatim into ``run.json``),
- the **items** it works on, each with a stable id,
- the **work** on one batch of items (with the models it opened once), one record per item,
- the **metrics** over the records (from the records and ``run.json`` alone, so that a merged
  or copied run can be re-aggregated anywhere without a model).

Everything else (the run directory, resume, retry of failed items, limit, shard, concurrency
and batching, progress, ``metrics.json``) is the engine's: :func:`citegraph.runs.run_task`.

A minimal task::

    @register_task
    class Shout(Task[str, None]):
        name = "demo.shout"

        def __init__(self, config: ShoutConfig) -> None:
            self.config = config

        def items(self):
            return [(w, w) for w in self.config.words]

        def open(self, runtime):
            return opened(None)

        async def work(self, batch, models):
            return [{"id": w, "loud": w.upper()} for w in batch]

        @classmethod
        def summarize(cls, records, info):
            return {"n": len(records)}
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from citegraph.runs._metric_names import TaskMetrics
from citegraph.runs._placements import model_placements
from citegraph.runs._present import Presenter
from citegraph.runs._runtime import Runtime
from citegraph.runs._stored import StoredRecords

ItemT = TypeVar("ItemT")
ModelsT = TypeVar("ModelsT")
ConfigT = TypeVar("ConfigT", bound=BaseModel)
T = TypeVar("T")

Record = dict[str, Any]
"""One line of ``samples.jsonl``: a JSON object with an ``id``; ``status: failed`` marks an item
to try again on resume."""


def recorded_config(config_type: type[ConfigT], info: Mapping[str, Any]) -> ConfigT:
    """The config a run was started with, read back from its ``run.json`` (``info``): the
    ``config`` entry without what :meth:`Task.run_config` added to it (the task's name, the
    models' names), validated as ``config_type``. What :meth:`Task.summarize` needs when it
    works from the run directory alone."""
    recorded = info["config"]
    fields = config_type.model_fields
    return config_type.model_validate({k: v for k, v in recorded.items() if k in fields})


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """A sort key that orders the digit runs of ``text`` by number (``q2`` before ``q10``)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(text)
        if part
    )


def in_id_order(records: Sequence[Record]) -> Sequence[Record]:
    """Records by natural order of their ids (``specific-2`` before ``specific-10``, ``nq:2``
    before ``nq:10``): dataset order for ids that number their items, which is what
    :meth:`Task.order` of such tasks returns, so that merged shards are summed (and
    bootstrapped) in the order of the run done in one go. Records read from a run directory
    stay there."""
    if isinstance(records, StoredRecords):
        return records.sorted_by_id(natural_key)  # from the index: no record is read
    return sorted(records, key=lambda r: natural_key(str(r.get("id"))))


@asynccontextmanager
async def opened(value: T) -> AsyncIterator[T]:
    """An async context that gives ``value`` and closes nothing (tasks without models)."""
    yield value


class Task(ABC, Generic[ItemT, ModelsT]):
    """One pipeline the engine can run. Subclasses set :attr:`name` and :attr:`config`."""

    name: ClassVar[str]
    """The task's name in ``run.json`` (``paper.stage``, e.g. ``kalma.run``)."""
    batch_size: ClassVar[int] = 1
    """Items per :meth:`work` call unless the runtime says otherwise."""
    shardable: ClassVar[bool] = True
    """False when the items cannot be split over machines (the task says why in its docs)."""
    presenter: ClassVar[type[Presenter]] = Presenter
    """How the task's runs are shown by the viewer, the HTML report and ``runs export``."""
    model_role: ClassVar[str] = "model"
    """The role (``run.json`` ``models``) of the opened models when they are one model."""
    gate_metrics: ClassVar[TaskMetrics | None] = None
    """The short metric names the task's ``metrics.json`` can hold, which ``--fail-under``
    checks before any work (``None``: names are checked against the metrics at the end)."""

    config: BaseModel

    @abstractmethod
    def items(self) -> Sequence[tuple[str, ItemT]]:
        """``(id, item)`` pairs in dataset order; ids are stable across calls."""

    @abstractmethod
    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[ModelsT]:
        """The models the work needs, loaded once; the context closes those it loaded (never
        the caller's own)."""

    def prepare_ahead(self, models: ModelsT) -> bool:
        """Whether the engine admits twice :meth:`concurrency` items: True when each item's
        model call is bounded by the model itself (a served model's endpoint limit), so that
        the next items' prompts are built while the calls are in flight and a call starts the
        moment another ends; the calls in flight stay within the model's limit. False here."""
        return False

    @abstractmethod
    async def work(self, batch: Sequence[ItemT], models: ModelsT) -> list[Record]:
        """One record per item of ``batch``, in order."""

    @classmethod
    @abstractmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        """``metrics.json`` from the records (in item order) and ``run.json`` alone."""

    def run_config(self, models: ModelsT) -> dict[str, Any]:
        """The run's identity (``run.json`` ``config``): the config, the task's name, and the
        names of the models actually used."""
        return self.config.model_dump(mode="json") | {"task": self.name}

    def run_data(self, models: ModelsT) -> dict[str, str]:
        """Input files and their SHA-256: part of the run's identity."""
        return {}

    def run_models(self, models: ModelsT) -> dict[str, dict[str, Any]]:
        """Where each local model runs (role -> name, device, dtype, size): ``run.json`` and
        ``metrics.json`` ``models``; found by :func:`~citegraph.runs.model_placements`, the
        opened models themselves under the role :attr:`model_role`."""
        return model_placements(models, self.model_role)

    def run_notes(self, models: ModelsT) -> dict[str, Any]:
        """Facts worked out before the work (from the inputs, not the items) that
        :meth:`summarize` needs, such as which inputs were dropped and why: written to
        ``run.json`` under ``notes``, not part of the identity. None by default."""
        return {}

    def concurrency(self, models: ModelsT, runtime: Runtime) -> int:
        """Work calls in flight: the runtime's, else 1."""
        return runtime.concurrency or 1

    def metrics(
        self, records: Sequence[Record], info: dict[str, Any], models: ModelsT
    ) -> dict[str, Any]:
        """``metrics.json`` at the end of a run; by default :meth:`summarize` (override to add
        what only the live run knows, such as the time it took)."""
        return self.summarize(records, info)

    @classmethod
    def write_outputs(
        cls, path: Path, records: Sequence[Record], metrics: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """Files beyond ``metrics.json`` (a report, a built dataset), written after the metrics
        and again by ``runs report`` and ``runs merge``. None by default."""

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Records in item order when only the run directory is known (``runs report``); by
        default the order of ``samples.jsonl``. Keep records read from the run directory
        there (:func:`~citegraph.runs.sorted_records`) rather than in a list."""
        return records
