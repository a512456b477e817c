"""How long a model server may take, and how much it may send: the bounds server clients are
made with.

:class:`~citegraph.models._server_http.ServerClient` takes ``timeout`` (one attempt, as a whole),
``total_timeout`` (one call: every attempt and wait) and ``max_response_bytes`` (one answer's
body, decoded) from its arguments, else from the :func:`server_deadlines` block it is made in,
so that a command's ``--timeout``, ``--total-timeout`` and ``--max-response-mb``
(``Runtime.timeout``, ``Runtime.total_timeout`` and ``Runtime.max_response_mb``, which the
engine applies around a task's ``open``, on the Ray actors too) reach every model it opens
without each task passing them on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from citegraph.errors import ConfigError

__all__ = ["DEFAULT_TIMEOUT", "Deadlines", "current_deadlines", "server_deadlines"]

DEFAULT_TIMEOUT = 120.0
"""Seconds one attempt may take when no deadline is given."""


@dataclass(frozen=True)
class Deadlines:
    """How long a model server may take, and how much it may send.

    Attributes:
        timeout: Seconds one attempt may take as a whole (``None``: :data:`DEFAULT_TIMEOUT`).
        total_timeout: Seconds one call may take: every attempt and every wait between them
            (``None``: no bound but the attempts').
        max_response_bytes: Most bytes of one answer's body, decoded (``None``: the client's
            default, 32 MiB).
    """

    timeout: float | None = None
    total_timeout: float | None = None
    max_response_bytes: int | None = None


_DEADLINES: ContextVar[Deadlines | None] = ContextVar("citegraph_server_deadlines", default=None)


def current_deadlines() -> Deadlines:
    """The deadlines of the :func:`server_deadlines` block this runs in (none set: the
    defaults)."""
    return _DEADLINES.get() or Deadlines()


@contextmanager
def server_deadlines(
    timeout: float | None = None,
    total_timeout: float | None = None,
    max_response_bytes: int | None = None,
) -> Iterator[None]:
    """Server clients made inside the block (in this thread or task, and in the event loops it
    starts) take these bounds unless given their own (see the module docstring).

    Raises:
        ConfigError: A deadline or a size that is not positive.
    """
    for name, value in (("timeout", timeout), ("total_timeout", total_timeout)):
        if value is not None and value <= 0:
            raise ConfigError(f"{name} must be a positive number of seconds, got {value}")
    if max_response_bytes is not None and max_response_bytes < 1:
        raise ConfigError(f"max_response_bytes must be at least 1, got {max_response_bytes}")
    token = _DEADLINES.set(Deadlines(timeout, total_timeout, max_response_bytes))
    try:
        yield
    finally:
        _DEADLINES.reset(token)
