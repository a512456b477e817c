"""Keyword options of the model backends, typed for the spec factories.

:func:`~citegraph.models.nli_model`, :func:`~citegraph.models.nli3_model`,
:func:`~citegraph.models.reranker_model` and :func:`~citegraph.models.causal_lm_scorer` build a
backend from a spec string (``"lexical"``, ``"hf/<path>"``...), so the options a call may pass
depend on the spec. The TypedDicts below name every option of every backend (a type checker sees
a misspelt name); :func:`build_checked` then refuses, naming the spec, an option the chosen
backend does not take (:func:`check_options`) before it builds the backend.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from citegraph.errors import ConfigError
from citegraph.io import SQLiteCache
from citegraph.models.server import ENDPOINT_OPTIONS, Endpoint

_B = TypeVar("_B")

#: Options that place a model (dropped for backends without one).
PLACEMENT_OPTIONS = frozenset({"device", "dtype"})


class ServerOptions(TypedDict, total=False):
    """Options of the server-backed scorers (``vllm/<model>``, ``openai/<model>``,
    ``tei/<model>`` specs; see :mod:`citegraph.models.server._http`)."""

    base_url: str | None
    api_key_env: str | None
    concurrency: int | None
    timeout: float
    total_timeout: float | None
    max_response_bytes: int | None
    max_retries: int
    cache: SQLiteCache | str | Path | None


class NLIOptions(ServerOptions, total=False):
    """Options of the entailment backends (each takes a subset; see the classes)."""

    batch_size: int | None
    device: str
    dtype: Any
    max_length: int | None
    max_batch_tokens: int | None
    entailment_index: int | None
    threshold: float | None
    max_new_tokens: int
    positive: str
    template: str
    decode: str
    year_only_dates: bool
    labels: tuple[str, ...] | None
    pair_separator: str | None


class NLI3Options(ServerOptions, total=False):
    """Options of the three-way NLI backends (:class:`HFNLI3`, :class:`LexicalNLI3`)."""

    batch_size: int | None
    device: str
    dtype: Any
    max_length: int
    max_batch_tokens: int | None
    class_indices: tuple[int, int, int] | None
    year_only_dates: bool
    labels: tuple[str, ...] | None
    pair_separator: str | None


class RerankerOptions(ServerOptions, total=False):
    """Options of :class:`CrossEncoderReranker`."""

    batch_size: int | None
    device: str
    dtype: Any
    max_length: int
    max_batch_tokens: int | None
    label_index: int | None


class LMScorerOptions(ServerOptions, total=False):
    """Options of :meth:`CausalLMScorer.load` that :func:`causal_lm_scorer` passes on."""

    device: str
    dtype: Any
    batch_size: int | None
    max_batch_tokens: int | None
    max_length: int | None
    prepend_bos: bool


def keyword_names(cls: Callable[..., Any]) -> set[str]:
    """The keyword-only parameters of ``cls``'s constructor."""
    params = inspect.signature(cls).parameters.values()
    return {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def check_options(
    spec: str, cls: Callable[..., Any], options: Mapping[str, Any], *, what: str = "NLI"
) -> None:
    """Refuse options that the backend ``cls`` chosen by ``spec`` does not take.

    Raises:
        ConfigError: names the unknown options, the spec and the allowed ones.
    """
    allowed = keyword_names(cls)
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ConfigError(
            f"unknown option(s) {unknown} for {what} spec {spec!r}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )


def build_checked(
    spec: str,
    cls: Callable[..., _B],
    options: Mapping[str, Any],
    *args: Any,
    what: str = "NLI",
) -> _B:
    """``cls(*args, **options)``, after :func:`check_options` refused options ``cls`` does not
    take (so a misspelt option fails, naming ``spec``, before any model is loaded).

    ``device`` and ``dtype`` say where a model runs: a backend without a model (the lexical
    ones) does not take them, and they are dropped for it rather than refused, so one
    ``--device`` serves every backend of a command.

    Raises:
        ConfigError: An option the backend does not take.
    """
    allowed = keyword_names(cls)
    options = {k: v for k, v in options.items() if k in allowed or k not in PLACEMENT_OPTIONS}
    check_options(spec, cls, options, what=what)
    return cls(*args, **options)


def build_served(
    spec: str, cls: Callable[..., _B], options: Mapping[str, Any], model: str, *, what: str
) -> _B:
    """``cls(model, endpoint=Endpoint(...), **rest)`` for a server-backed scorer: the server
    options of ``options`` (:data:`~citegraph.models.server.ENDPOINT_OPTIONS`) become its
    :class:`~citegraph.models.server.Endpoint`, the placement options are dropped (the server
    places its own model), and the rest are checked as :func:`build_checked` does.

    Raises:
        ConfigError: An option the backend does not take.
    """
    given = {k: v for k, v in options.items() if k not in PLACEMENT_OPTIONS}
    endpoint = Endpoint(**{k: given.pop(k) for k in list(given) if k in ENDPOINT_OPTIONS})
    return build_checked(spec, cls, {**given, "endpoint": endpoint}, model, what=what)
