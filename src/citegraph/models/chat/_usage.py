"""Token accounting of chat calls, and the dry-run model that answers nothing.

Every chat provider reports each finished call to the :class:`UsageMeter` of the block it runs
in (:func:`metering`; none outside one): the provider's own calls with the usage it reports
(a server's ``usage``, a local model's own tokenizer, the mock's word counts), and a response
cache's hits apart (``cached_calls``, ``cached_prompt_tokens``, ``cached_completion_tokens``),
so a resumed or repeated run shows what it cost and what the cache saved. The engine tells the
meter which role each model plays (:meth:`UsageMeter.assign`); a model it was not told about is
counted under its ``name``.

Under :func:`dry_running`, :func:`~citegraph.models.chat_model` builds a dry-run model
(:mod:`._chat_dry_run`) instead of the model a spec names.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from citegraph.models.chat._types import (
    Generation,
)

__all__ = [
    "DRY_RUN_TOKENS",
    "UsageMeter",
    "current_meter",
    "dry_run_active",
    "dry_running",
    "estimate_tokens",
    "metering",
    "report_usage",
    "usage_summary",
]

DRY_RUN_TOKENS = "estimate: characters / 4 (rounded up) of the prompt messages"
"""How a dry run counts prompt tokens (no model's tokenizer is loaded)."""

_FIELDS = (
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "cached_calls",
    "cached_prompt_tokens",
    "cached_completion_tokens",
    "calls_without_usage",
)

_METER: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar(
    "citegraph_usage_meter", default=None
)
_DRY_RUN: contextvars.ContextVar[bool] = contextvars.ContextVar("citegraph_dry_run", default=False)


def estimate_tokens(text: str) -> int:
    """A model-free token estimate of ``text``: characters / 4, rounded up.

    Example:
        >>> estimate_tokens("abcdefghi")
        3
    """
    return math.ceil(len(text) / 4)


class UsageMeter:
    """Token totals of chat calls, per role (or per model name when no role was assigned).

    Example:
        >>> meter = UsageMeter()
        >>> meter.add("answerer", Generation(text="x", model="m", usage=Usage(
        ...     prompt_tokens=5, completion_tokens=2)))
        >>> meter.totals()["answerer"]["prompt_tokens"]
        5
    """

    def __init__(self) -> None:
        self._roles: dict[int, str] = {}
        self._keep: list[object] = []  # the assigned models, so their ids stay theirs
        self._totals: dict[str, dict[str, int]] = {}
        #: Role -> how a dry run counted its prompt tokens.
        self.counted: dict[str, str] = {}

    def assign(self, model: object, role: str) -> None:
        """Count the calls of ``model`` under ``role`` (the first role given wins)."""
        if id(model) not in self._roles:
            self._roles[id(model)] = role
            self._keep.append(model)

    def role_of(self, model: object) -> str:
        """The role calls of ``model`` are counted under: its assigned role, else its name."""
        return self._roles.get(id(model)) or str(getattr(model, "name", "model"))

    def add(self, key: str, generation: Generation) -> None:
        """Count one finished call of ``generation`` under ``key``."""
        row = self._totals.setdefault(key, dict.fromkeys(_FIELDS, 0))
        usage = generation.usage
        prefix = "cached_" if generation.cached else ""
        row[f"{prefix}calls"] += 1
        if usage.prompt_tokens is None and usage.completion_tokens is None:
            row["calls_without_usage"] += 1
        row[f"{prefix}prompt_tokens"] += usage.prompt_tokens or 0
        row[f"{prefix}completion_tokens"] += usage.completion_tokens or 0
        most = (
            (generation.raw or {}).get("max_tokens")
            if generation.finish_reason == "dry-run"
            else None
        )
        counted = (generation.raw or {}).get("counted") if most is not None else None
        if isinstance(counted, str):
            self.counted[key] = counted
        if isinstance(most, int):  # a dry run: the most completion tokens the call could cost
            row["max_completion_tokens"] = row.get("max_completion_tokens", 0) + most

    def merge(self, totals: dict[str, dict[str, int]]) -> None:
        """Add another meter's :meth:`totals` (a Ray actor's) to these."""
        for key, counts in totals.items():
            row = self._totals.setdefault(key, dict.fromkeys(_FIELDS, 0))
            for name, value in counts.items():
                row[name] = row.get(name, 0) + int(value)

    def take(self) -> dict[str, dict[str, int]]:
        """The totals so far, and start again from zero (what a Ray batch reports)."""
        totals, self._totals = self.totals(), {}
        return totals

    def totals(self) -> dict[str, dict[str, int]]:
        """Role -> counts (``calls``, ``prompt_tokens``, ``completion_tokens``, ``cached_*``,
        ``calls_without_usage``), roles in order of first call."""
        return {key: dict(row) for key, row in self._totals.items()}


def current_meter() -> UsageMeter | None:
    """The meter of this block (:func:`metering`), if any."""
    return _METER.get()


def report_usage(model: object, generation: Generation) -> None:
    """Count ``generation`` (a finished call of ``model``) in the meter of this block, if any."""
    meter = _METER.get()
    if meter is not None:
        meter.add(meter.role_of(model), generation)


@contextmanager
def metering(meter: UsageMeter) -> Iterator[UsageMeter]:
    """Count every chat call made inside the block (tasks started in it too) in ``meter``."""
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


@contextmanager
def dry_running() -> Iterator[None]:
    """Inside the block, :func:`~citegraph.models.chat_model` builds :class:`DryRunChat`s."""
    token = _DRY_RUN.set(True)
    try:
        yield
    finally:
        _DRY_RUN.reset(token)


def dry_run_active() -> bool:
    """Whether this code runs inside :func:`dry_running`."""
    return _DRY_RUN.get()


def usage_summary(totals: dict[str, Any]) -> str:
    """One line of ``tokens`` totals: ``answerer: 3 calls, 120 prompt + 40 completion tokens
    (1 cached: 40 + 10)``.

    Example:
        >>> usage_summary({"judge": {"calls": 2, "prompt_tokens": 10, "completion_tokens": 4,
        ...     "cached_calls": 0}})
        'judge: 2 calls, 10 prompt + 4 completion tokens'
    """
    parts = []
    for role, row in totals.items():
        if not isinstance(row, dict):
            continue
        text = (
            f"{role}: {row.get('calls', 0)} calls, {row.get('prompt_tokens', 0)} prompt + "
            f"{row.get('completion_tokens', 0)} completion tokens"
        )
        if row.get("cached_calls"):
            text += (
                f" ({row['cached_calls']} cached: {row.get('cached_prompt_tokens', 0)} + "
                f"{row.get('cached_completion_tokens', 0)})"
            )
        if row.get("calls_without_usage"):
            text += f", {row['calls_without_usage']} calls without reported usage"
        parts.append(text)
    return "; ".join(parts)
