"""Where a run's models ran: ``run.json`` ``models`` and ``metrics.json`` ``models``.

A task's opened models are found by duck typing, so the engine needs no model classes: the
models object itself, or each of its attributes (a dataclass or plain object holding a model per
role), or a wrapper's ``inner`` model, that has a ``placement`` with a ``record()`` (see
:class:`citegraph.models.Placement`) is recorded under its role, with its ``name``:

    {"nli": {"name": "hf:...", "device": "cuda:0", "dtype": "bfloat16",
             "n_params": 435000000, "weight_bytes": 870000000}}

dtype moves numbers (bfloat16 moves log-probabilities by ~1e-2), so :func:`check_same_dtypes`
refuses to add records made in one dtype to a run whose records were made in another.
"""

from __future__ import annotations

from typing import Any

from citegraph.errors import ConfigError

__all__ = ["check_same_dtypes", "model_placements"]

#: Attributes under which wrappers hold the model they wrap (a cached chat model's ``inner``, a
#: retriever's embedding ``model``, a judge's ``nli``...), looked through up to three levels.
_NESTED = ("inner", "_inner", "model", "_model", "nli", "_nli", "retriever", "_retriever")


def model_placements(models: Any, role: str = "model") -> dict[str, dict[str, Any]]:
    """Role -> placement record of each local model in ``models`` (empty when none); ``role``
    names ``models`` itself when it is one model (or wraps one)."""
    own = _record(models, nested=False)
    if own is not None:
        return {role: own}
    out: dict[str, dict[str, Any]] = {}
    fields = getattr(models, "__dict__", None) or {}
    for key, value in fields.items():
        if value is None or isinstance(value, str | int | float | bool | list | dict | tuple):
            continue
        found = _record(value)
        if found is not None:
            name = key.lstrip("_")
            out[role if name in _NESTED else name] = found
    return out


def check_same_dtypes(
    path: Any, previous: dict[str, Any] | None, now: dict[str, dict[str, Any]]
) -> None:
    """Refuse models in another dtype than the run's records were made with.

    Raises:
        ConfigError: A role's dtype differs (names the role, both dtypes and what to do).
    """
    for role, placed in now.items():
        before = (previous or {}).get(role)
        if not isinstance(before, dict) or before.get("dtype") in (None, placed.get("dtype")):
            continue
        raise ConfigError(
            f"{path}: its {role} model ({before.get('name', '?')}) ran in {before['dtype']}, "
            f"this call would run it in {placed.get('dtype')} on {placed.get('device')}, and "
            f"dtype changes the numbers; pass --dtype {before['dtype']} to resume, or use "
            "another --out (or --overwrite) to start again"
        )


def _record(model: Any, depth: int = 0, *, nested: bool = True) -> dict[str, Any] | None:
    placement = getattr(model, "placement", None)
    if placement is not None and callable(getattr(placement, "record", None)):
        return {"name": str(getattr(model, "name", "?"))} | placement.record()
    if nested and depth < 3:
        for attr in _NESTED:
            inner = getattr(model, attr, None)
            if inner is not None and inner is not model:
                found = _record(inner, depth + 1)
                if found is not None:
                    return found
    return None
