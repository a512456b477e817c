"""Keyword options of the model backends, typed for the spec factories.

:func:`~citegraph.models.nli_model`, :func:`~citegraph.models.nli3_model`,
:func:`~citegraph.models.reranker_model` and :func:`~citegraph.models.causal_lm_scorer` build a
backend from a spec string (``"lexical"``, ``"hf:<path>"``...), so the options a call may pass
depend on the spec. The TypedDicts below name every option of every backend (a type checker sees
a misspelt name); :func:`build_checked` then refuses, naming the spec, an option the chosen
backend does not take (:func:`check_options`) before it builds the backend.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypedDict, TypeVar

from citegraph.errors import ConfigError

_B = TypeVar("_B")


class NLIOptions(TypedDict, total=False):
    """Options of the entailment backends (each takes a subset; see the classes)."""

    batch_size: int | None
    device: str
    max_length: int | None
    max_batch_tokens: int | None
    entailment_index: int | None
    threshold: float | None
    max_new_tokens: int
    positive: str
    template: str
    decode: str
    year_only_dates: bool


class NLI3Options(TypedDict, total=False):
    """Options of the three-way NLI backends (:class:`HFNLI3`, :class:`LexicalNLI3`)."""

    batch_size: int | None
    device: str
    max_length: int
    max_batch_tokens: int | None
    class_indices: tuple[int, int, int] | None
    year_only_dates: bool


class RerankerOptions(TypedDict, total=False):
    """Options of :class:`CrossEncoderReranker`."""

    batch_size: int | None
    device: str
    max_length: int
    max_batch_tokens: int | None
    label_index: int | None


class LMScorerOptions(TypedDict, total=False):
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

    Raises:
        ConfigError: An option the backend does not take.
    """
    check_options(spec, cls, options, what=what)
    return cls(*args, **options)
