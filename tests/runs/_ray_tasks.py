"""Small tasks for the Ray executor's tests (sent to Ray workers by value).

``EchoTask`` doubles each number after ``delay`` seconds per batch. Its config can poison one id
(its work raises for that item); name an id whose worker process dies every time it meets it
(``die_at``: a segfault or an OOM that always comes back); and make the actor that first meets
``kill_at`` kill itself with ``ray.kill`` (once: a marker file says it happened), standing for
an OOM or a preemption.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from citegraph.runs import Record, Runtime, Task, opened, register_task


class EchoConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = 12
    delay: float = 0.0
    poison: str | None = None
    kill_at: str | None = None
    marker: str | None = None
    die_at: str | None = None


@register_task
class EchoTask(Task[int, str]):
    """``e-<i>`` -> ``{"id": "e-<i>", "double": 2 i, "pid": worker pid}``."""

    name: ClassVar[str] = "testing.echo"
    batch_size: ClassVar[int] = 2

    def __init__(self, config: EchoConfig) -> None:
        self.config = config

    def items(self) -> Sequence[tuple[str, int]]:
        return [(f"e-{i}", i) for i in range(self.config.n)]

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[str]:
        return opened(f"model-of-{os.getpid()}")

    async def work(self, batch: Sequence[int], models: str) -> list[Record]:
        config = self.config
        if config.delay:
            time.sleep(config.delay)
        keys = [f"e-{i}" for i in batch]
        if config.die_at in keys:
            os._exit(1)  # the worker process dies every time it meets this item
        if config.poison in keys:
            raise ValueError(f"poisoned item {config.poison}")
        if config.kill_at in keys and config.marker and not Path(config.marker).exists():
            import ray

            Path(config.marker).write_text(str(os.getpid()))
            ray.kill(ray.get_runtime_context().current_actor, no_restart=False)
            time.sleep(30)  # killed before this ends
        return [
            {"id": k, "double": 2 * i, "model": models.split("-")[0]}
            for k, i in zip(keys, batch, strict=True)
        ]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        ok = [r for r in records if r.get("status") != "failed"]
        return {
            "n": len(records),
            "sum": sum(r["double"] for r in ok),
            "n_failed": len(records) - len(ok),
        }
