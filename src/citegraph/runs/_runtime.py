"""How a task runs, as opposed to what it computes: one :class:`Runtime` for every task.

Nothing here changes any item's record, so none of it is part of a run's identity: a run can be
extended (a larger ``limit``), resumed with more concurrency, or split over machines
(``shard``) and merged, and it stays the same run. ``run.json`` records these settings under
``runtime`` for the record only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from citegraph.errors import ConfigError
from citegraph.io import Deadlines, redact_urls_in
from citegraph.models import ModelOptions, default_response_cache

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``: once at the start, then after each item or batch."""

T = TypeVar("T")


def parse_shard(shard: str) -> tuple[int, int]:
    """``(i, N)`` from ``"i/N"`` (0-based).

    Raises:
        ConfigError: not of the form ``i/N`` with ``0 <= i < N``.
    """
    try:
        i_text, n_text = shard.split("/")
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ConfigError(f"--shard must look like i/N (e.g. 0/4), got {shard!r}") from None
    if n < 1 or not 0 <= i < n:
        raise ConfigError(f"--shard {shard}: need 0 <= i < N")
    return i, n


class Runtime(BaseModel):
    """Settings of one call of a task that do not change any record.

    ``progress`` is a callback and is never written to ``run.json``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    limit: int | None = Field(
        default=None, ge=1, description="Only the first N items (can be raised later; resumes)."
    )
    shard: str | None = Field(
        default=None,
        description="'i/N': this machine's share (0-based); items at positions p with "
        "p % N == i, after the limit. Merge the shards with `citegraph runs merge`.",
    )
    concurrency: int | None = Field(
        default=None, ge=1, description="Items or batches in flight (default: the task's)."
    )
    batch_size: int | None = Field(
        default=None, ge=1, description="Items per work call (default: the task's)."
    )
    cache: bool = Field(default=True, description="Use the SQLite response cache.")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds one model-server attempt may take as a whole, the answer read "
        "included (default: 120). Recorded in run.json 'runtime', not part of the identity.",
    )
    total_timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds one model-server call may take, every attempt and backoff wait "
        "included (default: no bound). Recorded in run.json 'runtime', not the identity.",
    )
    max_response_mb: float | None = Field(
        default=None,
        gt=0,
        description="MiB one model-server answer may hold, decoded (default: 32); a larger one "
        "fails the item. Recorded in run.json 'runtime', not part of the identity.",
    )
    overwrite: bool = Field(
        default=False, description="Replace a run with another configuration in the directory."
    )
    command: str | None = Field(default=None, description="The command line, for run.json.")
    engine: Literal["local", "ray"] = Field(
        default="local",
        description="Where the work runs: this process (asyncio) or a Ray actor pool.",
    )
    ray_address: str | None = Field(
        default=None,
        description="Ray cluster to join ('auto', 'ray://host:10001'); default: start a local "
        "Ray instance with this machine's cores.",
    )
    ray_actors: int | None = Field(
        default=None, ge=1, description="Actors in the pool (default: one per CPU or GPU)."
    )
    ray_gpus_per_actor: float = Field(default=0.0, ge=0, description="GPUs each actor holds.")
    device: str = Field(
        default="auto",
        description="Where local models run: auto (a GPU when present: CUDA, else MPS; else "
        "CPU), cpu, cuda, cuda:<i>, mps. Recorded in run.json 'models'.",
    )
    dtype: str = Field(
        default="auto",
        description="Local models' dtype: auto (bf16 on a GPU that has it, else fp16; fp32 on "
        "CPU), float32, bfloat16, float16. Recorded; a run is not resumed in another dtype.",
    )
    max_batch: int | None = Field(
        default=None,
        ge=1,
        description="Most requests a local chat model (hf/..., local) puts in one generate call "
        "(default: its device's, 8 on CPU and 32 on CUDA; 1: one at a time). The replies are "
        "the same at temperature 0.",
    )
    dry_run: bool = Field(
        default=False,
        description="Build the prompts and count the model calls and prompt tokens, calling no "
        "model and writing no run directory (the engine raises DryRunFinished with the counts).",
    )
    price_in: float | None = Field(
        default=None, ge=0, description="Dollars per million prompt tokens (a dry run's cost)."
    )
    price_out: float | None = Field(
        default=None,
        ge=0,
        description="Dollars per million completion tokens (a dry run's cost, at max_tokens).",
    )
    progress: Progress | None = Field(default=None, exclude=True, description="Progress callback.")
    notify: Callable[[str], None] | None = Field(
        default=None,
        exclude=True,
        description="Called with a note the user should see (a run directory of another "
        "configuration with no finished record was started over); the CLI prints it.",
    )

    @field_validator("command")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        """The command line as run.json keeps it: URLs' credentials written as ``***``."""
        return None if value is None else redact_urls_in(value)

    @field_validator("shard")
    @classmethod
    def _valid_shard(cls, value: str | None) -> str | None:
        if value is not None:
            parse_shard(value)
        return value

    def shard_parts(self) -> tuple[int, int] | None:
        """``(i, N)`` from ``shard``, or None."""
        return None if self.shard is None else parse_shard(self.shard)

    def concurrency_for(self, model: object, default: int) -> int:
        """Work calls in flight for a task whose calls go to ``model``: this runtime's
        ``concurrency``, else the model's own request limit (its ``concurrency`` attribute,
        when it has one that is set), else ``default``."""
        return self.concurrency or int(getattr(model, "concurrency", 0) or default)

    def select(self, items: Sequence[T]) -> list[T]:
        """The items this call works on: the first ``limit``, then this shard's share.

        Shards split by position (``p % N == i``), so they never overlap and their union is the
        whole selection whatever ``limit`` each machine was given the same.
        """
        chosen = list(items[: self.limit] if self.limit else items)
        parts = self.shard_parts()
        if parts is None:
            return chosen
        i, n = parts
        return [item for p, item in enumerate(chosen) if p % n == i]

    def model_options(self) -> ModelOptions:
        """The options of every model a task opens: ``device`` and ``dtype`` for local models;
        the deadlines (``timeout``, ``total_timeout``, ``max_response_mb``) and, with
        ``cache``, the shared response cache for served ones (a task adds each model's base URL
        with :meth:`~citegraph.models.ModelOptions.serving`)."""
        return ModelOptions(
            device=self.device,
            dtype=self.dtype,
            deadlines=Deadlines(self.timeout, self.total_timeout, self.max_response_bytes()),
            cache=default_response_cache() if self.cache else None,
            max_batch=self.max_batch,
        )

    def record(self) -> dict[str, Any]:
        """What ``run.json`` keeps under ``runtime`` (the Ray executor adds the engine, the
        cluster's resources and the actor count)."""
        return self.model_dump(
            mode="json",
            include={
                "limit",
                "shard",
                "concurrency",
                "batch_size",
                "device",
                "dtype",
                "max_batch",
                "timeout",
                "total_timeout",
                "max_response_mb",
            },
        )

    def max_response_bytes(self) -> int | None:
        """``max_response_mb`` in bytes, as :class:`citegraph.io.Deadlines` takes it (``None``:
        the clients' default)."""
        mb = self.max_response_mb
        return None if mb is None else max(1, int(mb * 2**20))

    @model_validator(mode="after")
    def _ray_options_need_ray(self) -> Runtime:
        if self.engine != "ray" and (
            self.ray_address or self.ray_actors or self.ray_gpus_per_actor
        ):
            raise ConfigError(
                "--ray-address, --ray-actors and --ray-gpus-per-actor need --engine ray"
            )
        return self
