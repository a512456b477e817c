"""Keyword options of the model backends, typed for the spec factories.

:func:`~citegraph.models.nli_model`, :func:`~citegraph.models.nli3_model` and
:func:`~citegraph.models.reranker_model` build a backend from a spec string (``"lexical"``,
``"hf:<path>"``...), so the options a call may pass depend on the spec. The TypedDicts below name
every option of every backend (a type checker sees a misspelt name); :func:`check_options` then
refuses, naming the spec, an option the chosen backend does not take.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, TypedDict

from citegraph.errors import ConfigError


class NLIOptions(TypedDict, total=False):
    """Options of the entailment backends (each takes a subset; see the classes)."""

    batch_size: int
    device: str
    max_length: int | None
    entailment_index: int | None
    threshold: float | None
    max_new_tokens: int
    positive: str
    template: str
    year_only_dates: bool


class NLI3Options(TypedDict, total=False):
    """Options of the three-way NLI backends (:class:`HFNLI3`, :class:`LexicalNLI3`)."""

    batch_size: int
    device: str
    max_length: int
    class_indices: tuple[int, int, int] | None
    year_only_dates: bool


class RerankerOptions(TypedDict, total=False):
    """Options of :class:`CrossEncoderReranker`."""

    batch_size: int
    device: str
    max_length: int
    label_index: int | None


def keyword_names(cls: type) -> set[str]:
    """The keyword-only parameters of ``cls``'s constructor."""
    params = inspect.signature(cls).parameters.values()
    return {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def check_options(spec: str, cls: type, options: Mapping[str, Any], *, what: str = "NLI") -> None:
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
