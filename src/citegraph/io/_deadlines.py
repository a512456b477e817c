"""How long a model server may take, and how much it may send: the bounds server clients are
made with.

A command's ``--timeout``, ``--total-timeout`` and ``--max-response-mb`` (``Runtime.timeout``,
``Runtime.total_timeout``, ``Runtime.max_response_mb``) become the :class:`Deadlines` of the
:class:`~citegraph.models.ModelOptions` every model factory is given
(``Runtime.model_options()``), so each server client is made with them, on the Ray actors too.
"""

from __future__ import annotations

from dataclasses import dataclass

from citegraph.errors import ConfigError

__all__ = ["DEFAULT_TIMEOUT", "Deadlines"]

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

    Raises:
        ConfigError: A deadline or a size that is not positive.
    """

    timeout: float | None = None
    total_timeout: float | None = None
    max_response_bytes: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("timeout", self.timeout), ("total_timeout", self.total_timeout)):
            if value is not None and value <= 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value}")
        if self.max_response_bytes is not None and self.max_response_bytes < 1:
            raise ConfigError(
                f"max_response_bytes must be at least 1, got {self.max_response_bytes}"
            )
