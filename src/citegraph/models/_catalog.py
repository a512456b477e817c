"""What ``citegraph models`` lists: each role's providers, their spec forms, what they need
installed and whether they are usable on this machine."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass
from typing import Any

from citegraph.errors import ConfigError
from citegraph.models._providers import ROLES

__all__ = ["CatalogRow", "catalog", "devices_here"]


@dataclass(frozen=True)
class CatalogRow:
    """One provider of one role, as ``citegraph models`` shows it.

    Attributes:
        role: The role (``nli``).
        provider: The provider (``hf``).
        form: The spec form (``hf/<hub id or path>``).
        example: A spec that works.
        summary: What it is.
        extra: The pip extra that installs it (``citegraph[nli]``), or ``None``.
        missing: The modules it needs that are not installed here.
        device: Whether it runs a model on this machine (``--device`` applies).
        usable: Whether it can run here: installed (a server's providers also need the server).
        old_spelling: The earlier release's spelling (``hf:<path>``), or ``None``.
    """

    role: str
    provider: str
    form: str
    example: str
    summary: str
    extra: str | None
    missing: tuple[str, ...]
    device: bool
    usable: bool
    old_spelling: str | None

    def as_json(self) -> dict[str, Any]:
        """The row as JSON (``citegraph models --json``)."""
        return asdict(self) | {"missing": list(self.missing)}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def catalog(role: str | None = None) -> list[CatalogRow]:
    """Every provider of every role (or of ``role``), with whether it is usable here.

    Raises:
        ConfigError: An unknown role.

    Example:
        >>> [r.provider for r in catalog("nli")]
        ['lexical', 'hf', 't5', 'vllm']
    """
    if role is not None and role not in ROLES:
        raise ConfigError(f"unknown model role {role!r}; roles: {', '.join(ROLES)}")
    rows = []
    for spec_role in ROLES.values():
        if role is not None and spec_role.name != role:
            continue
        for provider in spec_role.providers:
            missing = tuple(m for m in provider.needs if not _installed(m))
            old = f"{provider.old}{provider.form.partition('/')[2]}" if provider.old else None
            rows.append(
                CatalogRow(
                    role=spec_role.name,
                    provider=provider.name,
                    form=provider.form,
                    example=provider.example,
                    summary=provider.summary,
                    extra=f"citegraph[{provider.extra}]" if provider.extra else None,
                    missing=missing,
                    device=provider.device,
                    usable=not missing,
                    old_spelling=old,
                )
            )
    return rows


def devices_here() -> list[str]:
    """The devices a local model could run on here (``cpu``, and ``cuda:i`` / ``mps`` when torch
    is installed and sees them); torch is imported only when installed."""
    found = ["cpu"]
    if not _installed("torch"):
        return found
    import torch

    found += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return found
