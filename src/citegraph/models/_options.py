"""One options object for every model factory: where local models run and how servers are
reached (device, dtype, deadlines, cache, concurrency, base URL)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError
from citegraph.io import Deadlines, SQLiteCache
from citegraph.models._spec import ModelSpec
from citegraph.models.server import Endpoint

__all__ = ["SERVED_PROVIDERS", "ModelOptions", "backend_options"]

#: Providers whose models a server runs (they take an endpoint, never a device).
SERVED_PROVIDERS = frozenset({"openai", "vllm", "ollama", "llamacpp", "tei"})


@dataclass(frozen=True)
class ModelOptions:
    """How a command's models are placed and reached, passed whole to every factory
    (:func:`~citegraph.models.chat_model`, :func:`~citegraph.models.nli_model`,
    :func:`~citegraph.models.nli3_model`, :func:`~citegraph.models.reranker_model`,
    :func:`~citegraph.models.causal_lm_scorer`, :func:`~citegraph.models.embedding_model`).

    A local model takes the placement (``device``, ``dtype``); a served one takes the
    :meth:`endpoint` (base URL, key variable, limits, deadlines, cache). Each factory hands a
    backend only what applies to it, so one object serves every model of a command.

    Attributes:
        device: Where local models run: ``"auto"`` (a GPU when present), ``"cpu"``,
            ``"cuda[:i]"``, ``"mps"``.
        dtype: Local models' dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a
            dtype name.
        base_url: A served model's URL (``None``: the provider's default). Refused for a local
            model's spec.
        api_key_env: The environment variable of a server's API key (``None``: the provider's).
        concurrency: Most requests in flight to a server (``None``: the provider's).
        max_retries: Retries of 429, 5xx, connection errors and timeouts.
        deadlines: How long a server may take and how much it may send.
        cache: A response cache for served models, or a path for one; ``None``: none.
        max_batch: Most requests a local chat model (``hf/...``, ``local``) puts in one
            ``generate`` call (``None``: its device's default, 8 on CPU, 32 on CUDA; 1: one
            request at a time).
    """

    device: str = "auto"
    dtype: Any = "auto"
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    max_retries: int = 5
    deadlines: Deadlines = field(default_factory=Deadlines)
    cache: SQLiteCache | str | Path | None = None
    max_batch: int | None = None

    def serving(self, base_url: str | None) -> ModelOptions:
        """A copy that reaches a served model at ``base_url`` (``None``: the provider's
        default); a local model's spec refuses a base URL (:meth:`for_backend`)."""
        return dataclasses.replace(self, base_url=base_url)

    def endpoint(self) -> Endpoint:
        """The server options, for a served model."""
        return Endpoint(
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            concurrency=self.concurrency,
            timeout=self.deadlines.timeout,
            total_timeout=self.deadlines.total_timeout,
            max_response_bytes=self.deadlines.max_response_bytes,
            max_retries=self.max_retries,
            cache=self.cache,
        )

    def placement(self) -> dict[str, Any]:
        """``device`` and ``dtype``, for a local model."""
        return {"device": self.device, "dtype": self.dtype}

    def for_backend(self, spec: str, *, served: bool) -> dict[str, Any]:
        """The keyword options of the backend ``spec`` names: the endpoint's for a served model
        (``served``), else the placement.

        Raises:
            ConfigError: A base URL for a local model's spec.
        """
        if served:
            return self.endpoint().options()
        if self.base_url is not None:
            raise ConfigError(
                f"a base URL applies to a served model (vllm/<model>...), not {spec!r}"
            )
        return self.placement()


def backend_options(
    options: ModelOptions | None, spec: ModelSpec, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The keyword options a factory hands the backend ``spec`` names: what ``options`` gives
    that backend (:meth:`ModelOptions.for_backend`), overridden by the options ``given`` by
    name."""
    if options is None:
        return dict(given)
    served = spec.provider in SERVED_PROVIDERS
    return {**options.for_backend(spec.text, served=served), **given}
