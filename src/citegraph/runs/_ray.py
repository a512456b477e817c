"""The Ray executor: a task's pending items worked on by a pool of Ray actors (``--engine ray``).

The items the run directory has not finished become a Ray Dataset of ``(id, pickled item)``
rows; ``map_batches`` runs :class:`_TaskActor` on an actor pool. Each actor receives the task
once (through the object store) and opens its models once with :meth:`Task.open`; it returns one
JSON record per item. Records stream back to the driver, which alone appends them to
``samples.jsonl``, so the run directory stays the single source of truth: a killed driver loses
nothing written, a re-run resumes, and no id is written twice by one run.

Failures: an actor that dies (OOM, preemption, ``ray.kill``) is restarted by Ray and its batch
retried (``max_restarts``, ``max_task_retries``); a batch whose work raises is worked on again
item by item, and an item that still raises is recorded as failed with its error (retried by the
next run), so one poisoned item is one failed record, never a lost or fatal run. When workers
keep dying past Ray's retries, the items not yet written go round again one per batch; those
whose worker still dies are recorded as failed ("the Ray worker kept dying"), retried next run.

Without ``--ray-address`` a local Ray instance is started with the machine's cores (and shut
down at the end); with ``auto`` or ``ray://host:10001`` the driver joins that cluster.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from citegraph.errors import ConfigError, MissingDependency
from citegraph.io import json_text
from citegraph.models import UsageMeter, current_meter, metering
from citegraph.runs._outcomes import error_fields
from citegraph.runs._pending import unfinished
from citegraph.runs._rundir import FAILED, RunDir
from citegraph.runs._runtime import Runtime
from citegraph.runs._task import Task
from citegraph.runs._usage import assign_roles

#: Ray's own retries of a dead actor and of the batches it held.
MAX_RESTARTS = 3
MAX_TASK_RETRIES = 3


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise MissingDependency(
            "ray", "ray", hint="--engine ray needs Ray: pip install 'citegraph[ray]'"
        ) from exc
    return ray


class RaySession:
    """A connection to Ray for one run: started (or joined) on entry, described for
    ``run.json``, shut down on exit when this session started it."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._started = False
        self.resources: dict[str, float] = {}

    def __enter__(self) -> RaySession:
        ray = _ray()
        # Ray Data logs each dataset's start and end at INFO: quiet for the run, restored after.
        self._logger = logging.getLogger("ray.data")
        self._level = self._logger.level
        self._logger.setLevel(logging.WARNING)
        if not ray.is_initialized():
            address = self.runtime.ray_address
            ray.init(
                address=address,
                num_cpus=None if address else os.cpu_count(),
                include_dashboard=False,
                ignore_reinit_error=True,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
            self._started = True
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        self.resources = {k: float(v) for k, v in ray.cluster_resources().items()}
        return self

    def __exit__(self, *exc: object) -> None:
        self._logger.setLevel(self._level)
        if self._started:
            _ray().shutdown()

    @property
    def actors(self) -> int:
        """Actors in the pool: ``--ray-actors``, else one per CPU (per GPU with
        ``--ray-gpus-per-actor``) of the cluster."""
        if self.runtime.ray_actors:
            return self.runtime.ray_actors
        gpus = self.runtime.ray_gpus_per_actor
        if gpus:
            return max(1, int(self.resources.get("GPU", 0) // gpus))
        return max(1, int(self.resources.get("CPU", 1)))

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records under ``runtime`` (not part of the run's identity)."""
        return {
            "engine": "ray",
            "ray": {
                "address": self.runtime.ray_address or "local",
                "actors": self.actors,
                "gpus_per_actor": self.runtime.ray_gpus_per_actor,
                "cluster": {k: v for k, v in self.resources.items() if k in ("CPU", "GPU")},
            },
        }


class _TaskActor:
    """The map_batches UDF: holds the task and its opened models for the actor's lifetime."""

    def __init__(self, task_blob: bytes, runtime: Runtime) -> None:
        self.task: Task[Any, Any] = pickle.loads(task_blob)
        self.loop = asyncio.new_event_loop()
        self.meter = UsageMeter()  # this actor's chat calls; each batch sends its share back
        with metering(self.meter):  # as the local engine
            self._context = self.task.open(runtime)
            self.models = self.loop.run_until_complete(self._context.__aenter__())
        assign_roles(self.meter, self.models, self.task.model_role)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        ids = [str(i) for i in batch["id"]]
        items = [pickle.loads(blob) for blob in batch["item"]]
        try:
            records = self._work(items)
        except Exception:  # work again item by item: only the poisoned items fail
            records = []
            for key, item in zip(ids, items, strict=True):
                try:
                    records.extend(self._work([item]))
                except Exception as exc:
                    records.append(failed_record(key, exc))
        import numpy as np

        usage = [json_text(self.meter.take())] + [""] * (len(ids) - 1)
        return {
            "id": np.array(ids, dtype=object),
            "record": np.array([json_text(r) for r in records], dtype=object),
            "usage": np.array(usage, dtype=object),
        }

    def _work(self, items: list[Any]) -> list[dict[str, Any]]:
        with metering(self.meter):
            records = self.loop.run_until_complete(self.task.work(items, self.models))
        if len(records) != len(items):
            raise RuntimeError(f"work returned {len(records)} records for {len(items)} items")
        return records

    def __del__(self) -> None:
        try:
            self.loop.run_until_complete(self._context.__aexit__(None, None, None))
            self.loop.close()
        except Exception:  # an actor going away must not raise
            pass


def failed_record(key: str, exc: BaseException) -> dict[str, Any]:
    """The record of an item whose work raised on a Ray worker (tried again on resume)."""
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    at = f" at {where[0].filename}:{where[0].lineno}" if where else ""
    fields = error_fields(exc)
    return {"id": key, "status": FAILED, **fields, "error": fields["error"] + at}


class _WorkerLost(RuntimeError):
    """A batch's worker died more often than Ray retries (``MAX_RESTARTS``)."""

    def __init__(self, cause: BaseException) -> None:
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
        super().__init__(f"the Ray worker kept dying ({type(cause).__name__}: {first[:300]})")


def _map(
    ray: Any,
    *,
    task_blob: bytes,
    todo: Sequence[tuple[str, Any]],
    size: int,
    runtime: Runtime,
    actors: int,
) -> Any:
    """The record batches of ``todo`` worked on by an actor pool, as they finish."""
    rows = [{"id": key, "item": ray.cloudpickle.dumps(item)} for key, item in todo]
    n_blocks = -(-len(todo) // size)
    resources: dict[str, Any] = {"num_cpus": 1}
    if runtime.ray_gpus_per_actor:
        resources = {"num_cpus": 0, "num_gpus": runtime.ray_gpus_per_actor}
    worker_runtime = runtime.model_copy(update={"progress": None, "engine": "local"})
    with warnings.catch_warnings():
        # max_restarts / max_task_retries have no named parameter yet (Ray 2.60); they bound
        # the restarts Ray Data would otherwise repeat forever for a worker that always dies.
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
        results = ray.data.from_items(rows, override_num_blocks=n_blocks).map_batches(
            _TaskActor,
            fn_constructor_args=(task_blob, worker_runtime),
            batch_size=size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(actors, n_blocks)),
            max_restarts=MAX_RESTARTS,
            max_task_retries=MAX_TASK_RETRIES,
            **resources,
        )
    return results.iter_batches(batch_size=None, batch_format="numpy")


def _merge_usage(lines: Any) -> None:
    """Add a batch's token totals (an actor's meter) to the driver's meter."""
    meter = current_meter()
    if meter is None:
        return
    for line in lines:
        if str(line):
            meter.merge(json.loads(str(line)))


def run_pending_ray(
    task: Task[Any, Any],
    run: RunDir,
    items: Sequence[tuple[str, Any]],
    runtime: Runtime,
    session: RaySession,
) -> tuple[int, int]:
    """Work on the items ``run`` has not finished on a Ray actor pool; append each record as it
    streams back. Returns ``(n_resumed, n_done_now)`` as the local engine does.

    Raises:
        ConfigError: the task cannot be sent to Ray workers (it holds an object that does not
            pickle, such as a model the caller passed in: build the task from its config).
    """
    ray = _ray()
    progress = runtime.progress
    todo = unfinished(run, items, progress)
    finished = n_resumed = len(items) - len(todo)
    if not todo:
        return n_resumed, 0
    try:
        blob = ray.cloudpickle.dumps(task)  # by reference for importable modules, as pickle
    except Exception as exc:
        raise ConfigError(
            f"{task.name}: the task cannot be sent to Ray workers ({type(exc).__name__}: {exc}); "
            "build it from its config (no model objects passed in) or use --engine local"
        ) from exc
    written: set[str] = set()

    def append(record: dict[str, Any]) -> None:
        nonlocal finished
        key = str(record["id"])
        if key in written:  # a batch Ray ran twice (a retried task)
            return
        written.add(key)
        run.append(record)
        finished += 1

    size = runtime.batch_size or task.batch_size
    pending = todo
    for attempt in range(2):  # the second pass: one item per batch, after workers kept dying
        try:
            for batch in _map(ray, task_blob=blob, todo=pending, size=size, runtime=runtime,
                              actors=session.actors):  # fmt: skip
                for line in batch["record"]:
                    append(json.loads(str(line)))
                _merge_usage(batch.get("usage", ()))
                if progress is not None:
                    progress(finished, len(items))
            break
        except ray.exceptions.RayError as exc:
            pending = [(key, item) for key, item in pending if key not in written]
            if attempt == 1:  # still dying one item at a time: record what is left as failed
                for key, _ in pending:
                    append(failed_record(key, _WorkerLost(exc)))
                if progress is not None:
                    progress(finished, len(items))
            size = 1
    return n_resumed, len(todo)
