"""Token totals of a run (``metrics.json`` ``tokens``), and the dry run.

Every call of :func:`~citegraph.runs.run_task` counts its chat calls in a
:class:`~citegraph.models.UsageMeter`, by role (the attribute of the task's opened models that
holds the chat model: ``answerer``, ``judge``...; the task's ``model_role`` when the opened
models are, or wrap, one chat model). The totals of each call are added to ``usage.json`` in the
run directory (a resumed run adds to them; a run started afresh starts from zero), and
``metrics.json`` carries them as ``tokens``::

    {"answerer": {"calls": 3, "prompt_tokens": 300, "completion_tokens": 45,
                  "cached_calls": 1, "cached_prompt_tokens": 100,
                  "cached_completion_tokens": 15, "calls_without_usage": 0},
     "counted": "..."}

A dry run (``Runtime.dry_run``) opens the task's models with every chat model replaced by a
:class:`~citegraph.models.DryRunChat`, works every selected item (replies are ``""``), writes
nothing, and raises :class:`DryRunFinished` with a :class:`DryRunReport`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import DataError
from citegraph.io import atomic_write, json_text, load_json
from citegraph.models import UsageMeter, usage_summary
from citegraph.models.chat import DRY_RUN_TOKENS

__all__ = [
    "TOKENS_COUNTED",
    "USAGE_FILE",
    "DryRunFinished",
    "DryRunReport",
    "add_usage",
    "assign_roles",
    "read_usage",
    "sum_usage",
    "tokens_line",
]

USAGE_FILE = "usage.json"
"""The run directory's token totals over every call of the run."""

TOKENS_COUNTED = (
    "per role, over every call of this run: the provider's reported usage (servers' usage "
    "field, a local model's own tokenizer, the mock's word counts); cached_*: replies served "
    "by the response cache, not in calls/prompt_tokens/completion_tokens"
)
"""How ``metrics.json`` ``tokens`` were counted (its ``counted`` entry)."""

_GENERIC = frozenset({"model", "inner", "chat", "llm"})
_SCALARS = (str, int, float, bool, list, dict, tuple)
_NESTED = ("inner", "_inner", "model", "_model", "chat", "_chat", "judge", "_judge")


def _is_chat(obj: object) -> bool:
    return callable(getattr(obj, "generate", None)) and isinstance(getattr(obj, "name", None), str)


def _chats_in(obj: object, depth: int = 0) -> Iterator[object]:
    """``obj`` and the chat models it holds (wrappers' inner models), up to three levels."""
    if obj is None or isinstance(obj, _SCALARS) or depth > 3:
        return
    if _is_chat(obj):
        yield obj
    fields = getattr(obj, "__dict__", None) or {}
    for key, value in fields.items():
        if key.lstrip("_") in {n.lstrip("_") for n in _NESTED} or _is_chat(value):
            yield from _chats_in(value, depth + 1)


def assign_roles(meter: UsageMeter, models: Any, role: str) -> None:
    """Tell ``meter`` the role of each chat model in a task's opened ``models``: ``role`` for
    ``models`` itself (and what it wraps), else each attribute's name (``_judge`` -> ``judge``;
    ``role`` for a generic one: ``model``, ``inner``, ``chat``, ``llm``) for the chat models it
    holds; a list of models is looked through."""
    if _is_chat(models):
        for chat in _chats_in(models):
            meter.assign(chat, role)
        return
    items = models if isinstance(models, list | tuple) else [models]
    for entry in items:
        found = False
        for key, value in (getattr(entry, "__dict__", None) or {}).items():
            name = key.lstrip("_")
            for chat in _chats_in(value):  # a wrapper's generic attribute: the task's role
                meter.assign(chat, role if name in _GENERIC else name)
                found = True
        if not found and entry is not None and not isinstance(entry, _SCALARS):
            for chat in _chats_in(entry):
                meter.assign(chat, role)


def read_usage(path: Path) -> dict[str, dict[str, int]]:
    """The token totals of the run directory ``path`` (empty when it has none yet).

    Raises:
        DataError: ``usage.json`` is not a JSON object of role -> counts (names the file).
    """
    file = Path(path) / USAGE_FILE
    if not file.is_file():
        return {}
    data = load_json(file)
    ok = isinstance(data, dict) and all(
        isinstance(row, dict) and all(isinstance(v, int) for v in row.values())
        for row in data.values()
    )
    if not ok:
        raise DataError(
            "not a JSON object of role -> token counts (integers); delete it to count afresh",
            path=file,
        )
    return data


def sum_usage(parts: Iterable[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """Role-wise sums of several runs' token totals (the shards of a merged run).

    Example:
        >>> sum_usage([{"judge": {"calls": 1}}, {"judge": {"calls": 2}, "model": {"calls": 1}}])
        {'judge': {'calls': 3}, 'model': {'calls': 1}}
    """
    summed: dict[str, dict[str, int]] = {}
    for part in parts:
        for role, row in part.items():
            into = summed.setdefault(role, {})
            for key, value in row.items():
                into[key] = into.get(key, 0) + value
    return summed


def add_usage(path: Path, totals: dict[str, dict[str, int]], *, fresh: bool) -> dict[str, Any]:
    """Add one call's ``totals`` to the run directory's ``usage.json`` (replace them when
    ``fresh``: a run started afresh) and return the sum."""
    summed = sum_usage([totals] if fresh else [read_usage(path), totals])
    if summed or (Path(path) / USAGE_FILE).exists():
        atomic_write(Path(path) / USAGE_FILE, json_text(summed) + "\n")
    return summed


def tokens_block(path: Path) -> dict[str, Any] | None:
    """``metrics.json`` ``tokens`` of the run directory ``path``: its totals and how they were
    counted, or ``None`` when no chat model was called."""
    usage = read_usage(path)
    if not usage:
        return None
    return {**usage, "counted": TOKENS_COUNTED}


def tokens_line(metrics: Mapping[str, Any]) -> str | None:
    """One line of a ``metrics.json``'s ``tokens`` (``tokens: answerer: 3 calls, 120 prompt +
    40 completion tokens (1 cached: 40 + 10)``), or ``None`` when the run called no chat model.

    Example:
        >>> tokens_line({"tokens": {"judge": {"calls": 1, "prompt_tokens": 9,
        ...     "completion_tokens": 2}, "counted": "..."}})
        'tokens: judge: 1 calls, 9 prompt + 2 completion tokens'
    """
    tokens = metrics.get("tokens")
    if not isinstance(tokens, Mapping):
        return None
    text = usage_summary(dict(tokens))
    return f"tokens: {text}" if text else None


class DryRunReport(BaseModel):
    """What a dry run counted: the calls and prompt tokens each role would cost."""

    model_config = ConfigDict(frozen=True)

    task: str
    n_items: int = Field(description="The items selected (limit, shard).")
    n_items_failed: int = Field(
        default=0, description="Items whose work raised on the dry run's empty replies."
    )
    tokens: dict[str, dict[str, int]] = Field(description="Role -> counts, as metrics.json's.")
    counted: dict[str, str] = Field(
        default_factory=dict,
        description="Role -> how its prompt tokens were counted (a local model's tokenizer, "
        "else an estimate).",
    )
    price_in: float | None = None
    price_out: float | None = None

    def cost(self) -> tuple[float, float] | None:
        """``(prompt dollars, most completion dollars)`` when both prices are given: prompt
        tokens at ``price_in``, and every call's ``max_tokens`` at ``price_out`` (an upper
        bound; replies are usually shorter)."""
        if self.price_in is None or self.price_out is None:
            return None
        prompt = sum(r.get("prompt_tokens", 0) for r in self.tokens.values())
        most = sum(r.get("max_completion_tokens", 0) for r in self.tokens.values())
        return prompt * self.price_in / 1e6, most * self.price_out / 1e6

    def lines(self) -> list[str]:
        """The report as plain lines (the CLI prints them)."""
        out = [f"dry run of {self.task}: {self.n_items} items; no model called, nothing written"]
        for role, row in self.tokens.items():
            out.append(
                f"  {role}: {row.get('calls', 0)} calls, {row.get('prompt_tokens', 0)} prompt "
                f"tokens, at most {row.get('max_completion_tokens', 0)} completion tokens"
            )
        if not self.tokens:
            out.append("  no chat model would be called")
        methods = sorted(set(self.counted.values())) or [DRY_RUN_TOKENS]
        if len(methods) == 1:
            out.append(f"  prompt tokens: {methods[0]}")
        else:
            out.extend(f"  {role} prompt tokens: {how}" for role, how in self.counted.items())
        if self.n_items_failed:
            out.append(
                f"  {self.n_items_failed} items stopped on the empty dry-run replies: their "
                "later calls (a judge of the answer, say) are not counted"
            )
        else:
            out.append(
                "  calls that depend on a reply (a judge of an answer) are counted as made "
                "after an empty reply"
            )
        cost = self.cost()
        if cost is not None:
            prompt, most = cost
            out.append(
                f"  estimated cost: ${prompt:.4f} prompt (at ${self.price_in:g}/M) + at most "
                f"${most:.4f} completion (at ${self.price_out:g}/M, every call's max_tokens) = "
                f"at most ${prompt + most:.4f}"
            )
        elif self.price_in is not None or self.price_out is not None:
            out.append("  estimated cost: give both --price-in and --price-out")
        return out


class DryRunFinished(Exception):
    """A dry run is done: nothing was written; :attr:`report` holds the counts."""

    def __init__(self, report: DryRunReport) -> None:
        super().__init__("\n".join(report.lines()))
        self.report = report


def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in consecutive batches of ``size``."""
    step = max(1, size)
    for start in range(0, len(items), step):
        yield items[start : start + step]
