"""Length-sorted batching for the transformers backends (NLI, three-way NLI, T5 NLI, reranker,
text scorer, embeddings): what makes a batch cheaper than its items one at a time.

The inputs of a call are tokenised in one tokenizer call (truncated, not padded), sorted by token
length (longest first, so the first batch shows the peak memory) and cut into batches that keep
padding small (:func:`length_batches`); each batch is padded to its own longest input, never to
``max_length``, and the results are put back in input order. Padding is masked, so the numbers
are those of one input at a time (up to float rounding, ~1e-7).

How big a batch may be depends on the device (:func:`batch_plan_for`): on a CPU a token costs
about as much in any batch, so batches stay small and padding is what counts; on an accelerator
a forward pass costs milliseconds of launches whatever its size while padding is nearly free, so
batches are as large as a token budget allows. On a CUDA device the next batch is padded, put in
pinned memory and copied without blocking while the device still runs the current one, and each
batch's results come to the host in one transfer (:func:`run_length_sorted`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from citegraph.errors import ConfigError, ModelError
from citegraph.models.hf._clip import clip_long_texts
from citegraph.models.hf._placement import is_out_of_memory, resolve_device

_T = TypeVar("_T")
_R = TypeVar("_R")


#: What one forward call costs beyond its tokens on a CPU, in tokens: the per-call overhead
#: (Python, module calls, small matrix products) that batching saves, about 10 ms on
#: all-MiniLM-L6-v2 on one CPU thread, where a token costs about 0.3 ms.
CALL_COST_TOKENS = 32
#: The same on an accelerator: a forward pass of a 6-24-layer encoder is a few hundred kernel
#: launches (2-15 ms whatever its size), while a token of a 0.1-1 B-parameter model costs
#: 0.2-3 us of bf16 arithmetic on an H100: a call is worth thousands of padded positions.
ACCELERATOR_CALL_COST_TOKENS = 4096
#: Most inputs and most padded positions (inputs x width) per call on an accelerator: 32,768
#: positions keep a 24-layer, 1,024-wide encoder's activations (and DeBERTa's relative-position
#: scores) to a few GB in fp32, far below an 80 GB device, and fill it with work.
ACCELERATOR_BATCH_SIZE = 512
ACCELERATOR_MAX_BATCH_TOKENS = 32_768
#: Batch sizes up to this are cut by the plain dynamic program (O(inputs x batch size)); larger
#: ones by the monotone-queue one (O(inputs x log batch size)), which finds a cut of the same
#: least cost (it may differ from the plain one's among cuts of equal cost).
PLAIN_DP_MAX_BATCH = 64


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """How a backend cuts its inputs into batches (see :func:`length_batches`).

    Attributes:
        batch_size: Most inputs per forward call.
        max_batch_tokens: Most padded positions (inputs x longest input) per call; ``None``: no
            limit. An input longer than the budget still gets a batch of its own.
        call_cost: What one call costs beyond its positions, in positions.
    """

    batch_size: int
    max_batch_tokens: int | None
    call_cost: float


#: The CPU plan of the classifiers and the reranker: today's batches of 16, no token budget.
CPU_PLAN = BatchPlan(batch_size=16, max_batch_tokens=None, call_cost=CALL_COST_TOKENS)
#: The plan on any accelerator (CUDA, MPS, XPU, ...).
ACCELERATOR_PLAN = BatchPlan(
    batch_size=ACCELERATOR_BATCH_SIZE,
    max_batch_tokens=ACCELERATOR_MAX_BATCH_TOKENS,
    call_cost=ACCELERATOR_CALL_COST_TOKENS,
)


def device_type(device: Any) -> str:
    """``"cpu"``, ``"cuda"``, ``"mps"``, ... of a torch device or a device string."""
    return str(getattr(device, "type", device)).split(":", 1)[0].strip().lower()


def batch_plan_for(
    device: Any,
    *,
    batch_size: int | None = None,
    max_batch_tokens: int | None = None,
    cpu: BatchPlan = CPU_PLAN,
    calls: int = 1,
) -> BatchPlan:
    """The batching of a transformers backend on ``device``, the same for every backend.

    On a CPU it is ``cpu``, the backend's own CPU defaults (so CPU numbers stay as they were);
    on any other device :data:`ACCELERATOR_PLAN`: up to 512 inputs and 32,768 padded positions
    per call, a call worth 4,096 positions. A ``batch_size`` or ``max_batch_tokens`` the user gave
    replaces the plan's. ``calls`` is how many forward passes one batch makes (a generation
    of ``n`` new tokens: ``1 + n``), which multiplies the call cost.

    Args:
        device: A torch device or device string (``"cpu"``, ``"cuda:0"``, ``"mps"``...).
        batch_size: The user's batch size, or ``None`` for the plan's.
        max_batch_tokens: The user's token budget per call, or ``None`` for the plan's.
        cpu: The backend's plan on a CPU.
        calls: Forward passes per batch.

    Raises:
        ConfigError: ``batch_size``, ``max_batch_tokens`` or ``calls`` below 1.

    Example:
        >>> batch_plan_for("cpu")
        BatchPlan(batch_size=16, max_batch_tokens=None, call_cost=32)
        >>> batch_plan_for("cuda:0", batch_size=64).batch_size
        64
    """
    for name, value in (("batch_size", batch_size), ("max_batch_tokens", max_batch_tokens)):
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be >= 1, got {value}")
    if calls < 1:
        raise ConfigError(f"calls must be >= 1, got {calls}")
    kind = device_type(device)
    if kind in ("auto", "none", ""):  # where "auto" puts the model (a GPU when present)
        import torch  # a backend planning its batches has torch

        kind = device_type(resolve_device(torch, "auto"))
    plan = cpu if kind == "cpu" else ACCELERATOR_PLAN
    return replace(
        plan,
        batch_size=plan.batch_size if batch_size is None else batch_size,
        max_batch_tokens=plan.max_batch_tokens if max_batch_tokens is None else max_batch_tokens,
        call_cost=plan.call_cost * calls,
    )


def _rows_allowed(width: int, batch_size: int, max_tokens: int | None) -> int:
    """Most inputs in a batch whose widest input is ``width`` (at least 1)."""
    if max_tokens is None:
        return batch_size
    return max(1, min(batch_size, max_tokens // max(width, 1)))


def length_batches(
    lengths: Sequence[int],
    batch_size: int,
    call_cost: float = CALL_COST_TOKENS,
    max_batch_tokens: int | None = None,
) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``batch_size``, longest first.

    The inputs are sorted by length (ties in input order) and cut into consecutive batches of at
    most ``batch_size`` inputs and ``max_batch_tokens`` padded positions (an input longer than
    that alone) so that the padded size (rows x longest row, summed over batches) plus
    ``call_cost`` per batch is least (exact, by dynamic programming). So a few long inputs do not
    make a batch of short ones mostly padding: 64 MNLI texts of 6-104 tokens in fixed batches of
    32 are 3,808 padded tokens for 1,390 real ones; cut this way, 7 batches and 1,549.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    widths = [lengths[i] for i in order]
    if batch_size <= PLAIN_DP_MAX_BATCH:
        cut = _cuts_plain(widths, batch_size, call_cost, max_batch_tokens)
    else:
        cut = _cuts_monotone(widths, batch_size, call_cost, max_batch_tokens)
    batches: list[list[int]] = []
    end = len(order)
    while end > 0:
        batches.append(order[cut[end] : end])
        end = cut[end]
    return batches[::-1]


def _cuts_plain(
    widths: Sequence[int], batch_size: int, call_cost: float, max_tokens: int | None
) -> list[int]:
    """``cut[j]``: where the last batch of the first ``j`` inputs begins in a least-cost cut."""
    best = [0.0] + [float("inf")] * len(widths)  # best[j]: least cost of the first j inputs
    cut = [0] * (len(widths) + 1)
    for end in range(1, len(widths) + 1):
        for start in range(max(0, end - batch_size), end):
            rows = end - start
            if max_tokens is not None and rows > 1 and rows * widths[start] > max_tokens:
                continue
            cost = best[start] + call_cost + rows * widths[start]
            if cost < best[end]:
                best[end], cut[end] = cost, start
    return cut


def _cuts_monotone(
    widths: Sequence[int], batch_size: int, call_cost: float, max_tokens: int | None
) -> list[int]:
    """The least-cost cut of :func:`_cuts_plain` in O(n log n).

    With widths sorted longest first, a batch ``[s, e)`` costs ``c + (e - s) w_s`` when it fits
    (``e - s`` within the rows allowed at width ``w_s``, which grow as ``s`` does). That cost
    obeys the quadrangle inequality (for ``a <= b <= c <= d``, cost(a, c) + cost(b, d) <=
    cost(a, d) + cost(b, c), since ``w_b <= w_a``; a fitting (a, d) makes (a, c) and (b, d)
    fit), so once a later start is as good as an earlier one for some end, it stays so for every
    later end. Each start then owns one run of ends, kept in a queue (Galil and Park's
    1D/1D dynamic program); a binary search finds where a new start takes over.
    """
    n = len(widths)
    allowed = [_rows_allowed(w, batch_size, max_tokens) for w in widths]
    best = [0.0] * (n + 1)
    cut = [0] * (n + 1)
    inf = float("inf")

    def value(start: int, end: int) -> float:
        rows = end - start
        return best[start] + call_cost + rows * widths[start] if rows <= allowed[start] else inf

    starts: list[int] = []  # candidate starts, each best from owns[k] on (a queue from head)
    owns: list[int] = []
    head = 0
    for end in range(1, n + 1):
        new = end - 1  # best[new] is known: it becomes a candidate
        while len(starts) > head:
            last, begin = starts[-1], max(owns[-1], new + 1)
            if value(new, begin) <= value(last, begin):
                starts.pop()
                owns.pop()
                continue
            lo, hi = begin + 1, n + 1  # first end where `new` is as good as `last`, if any
            while lo < hi:
                mid = (lo + hi) // 2
                if value(new, mid) <= value(last, mid):
                    hi = mid
                else:
                    lo = mid + 1
            if lo <= n:
                starts.append(new)
                owns.append(lo)
            break
        else:
            starts.append(new)
            owns.append(new + 1)
        while len(starts) - head > 1 and owns[head + 1] <= end:
            head += 1
        best[end], cut[end] = value(starts[head], end), starts[head]
    return cut


def pad_rows(
    encoded: dict[str, list[list[int]]], rows: Sequence[int], tokenizer: Any, torch: Any
) -> dict[str, Any]:
    """The tokenizer outputs of ``rows`` as tensors, padded to the longest of them on the
    tokenizer's padding side (ids with its pad id, attention masks with 0, token types with its
    pad type id).

    Raises:
        ModelError: Inputs of different lengths and a tokenizer without a pad token.
    """
    width = max(len(encoded["input_ids"][i]) for i in rows)
    fills = {
        "input_ids": tokenizer.pad_token_id,
        "token_type_ids": getattr(tokenizer, "pad_token_type_id", 0),
    }
    left = getattr(tokenizer, "padding_side", "right") == "left"
    out = {}
    for key, values in encoded.items():
        fill = fills.get(key, 0)
        padded = []
        for i in rows:
            row = values[i]
            if len(row) < width:
                if fill is None:
                    raise ModelError("inputs of different lengths and no pad token to pad them")
                pad = [fill] * (width - len(row))
                row = pad + row if left else row + pad
            padded.append(row)
        out[key] = torch.tensor(padded, dtype=torch.long)
    return out


def to_device(tensors: dict[str, Any], device: Any) -> dict[str, Any]:
    """Host tensors on ``device``: on CUDA through pinned memory with non-blocking copies (the
    copy queues behind the device's running work instead of waiting for it), else plainly."""
    if device_type(device) == "cuda":
        return {k: v.pin_memory().to(device, non_blocking=True) for k, v in tensors.items()}
    return {k: v.to(device) for k, v in tensors.items()}


def pipelined(
    batches: Iterable[Sequence[int]],
    prepare: Callable[[Sequence[int]], Any],
    launch: Callable[[Any], Any],
    collect: Callable[[Sequence[int], Any], None],
) -> None:
    """Run batches so that the host prepares batch ``k + 1`` while the device runs batch ``k``.

    For each batch: ``prepare(rows)`` (host work: padding, copies), ``launch(inputs)`` (queues
    the device's work and returns its outputs, still on the device), then ``collect`` of the
    *previous* batch (its results to the host, which waits for it while the new batch is already
    queued). On a CPU every step is synchronous and this is a plain loop.
    """
    pending: tuple[Sequence[int], Any] | None = None
    for rows in batches:
        launched = (rows, launch(prepare(rows)))
        if pending is not None:
            collect(*pending)
        pending = launched
    if pending is not None:
        collect(*pending)


def run_length_sorted(
    run: Callable[[dict[str, Any]], Any],
    tokenizer: Any,
    first: Sequence[str],
    second: Sequence[str] | None = None,
    *,
    max_length: int | None,
    batch_size: int,
    torch: Any,
    device: Any,
    name: str = "model",
    call_cost: float = CALL_COST_TOKENS,
    max_batch_tokens: int | None = None,
    finish: Callable[[Any], Sequence[_T]] | None = None,
) -> list[_T]:
    """``run(padded batch inputs)`` over length-sorted batches of the texts (or text pairs),
    one result per input, in input order.

    With ``finish``, ``run`` only queues the device's work and returns its outputs (tensors on
    the device), and ``finish(outputs)`` brings them to the host (one transfer per batch) as one
    result per row; the next batch is padded and copied while the device runs this one (see
    :func:`pipelined`). Without it, ``run`` returns the results itself.

    A batch the device runs out of memory on is not the end: the inputs without a result yet
    run again in batches half as large (and half the token budget), down to one input at a
    time, which raises the error.

    Args:
        run: Model inputs (tensors on ``device``) of one batch -> its outputs.
        tokenizer: A transformers tokenizer.
        first: The texts, or the first texts of pairs.
        second: The second texts of pairs, or ``None``.
        max_length: Token limit (longest part of a pair truncated first); ``None``: none.
        batch_size: Most inputs per call of ``run``.
        torch: The torch module.
        device: Where the inputs go.
        name: The backend's name, for error messages.
        call_cost: The cost of one call of ``run`` in tokens (see :func:`length_batches`).
        max_batch_tokens: Most padded positions per call of ``run``; ``None``: no limit.
        finish: The outputs of ``run`` -> one result per row (on the host).

    Raises:
        ModelError: The batch gave the wrong number of results, or padding was impossible.
    """
    if not first:
        return []
    firsts, seconds = clip_long_texts(tokenizer, first, second, max_length)
    encoded = tokenizer(firsts, seconds, truncation=max_length is not None, max_length=max_length)
    columns = {key: list(values) for key, values in encoded.items()}
    out: list[Any] = [None] * len(first)
    lengths = [len(ids) for ids in columns["input_ids"]]

    def prepare(rows: Sequence[int]) -> dict[str, Any]:
        return to_device(pad_rows(columns, rows, tokenizer, torch), device)

    def collect(rows: Sequence[int], outputs: Any) -> None:
        results = outputs if finish is None else finish(outputs)
        if len(results) != len(rows):
            raise ModelError(f"{name}: {len(results)} results for a batch of {len(rows)} inputs")
        for i, result in zip(rows, results, strict=True):
            out[i] = result

    def attempt(size: int, budget: int | None) -> list[Any]:
        todo = [i for i, result in enumerate(out) if result is None]
        cut = length_batches([lengths[i] for i in todo], size, call_cost, budget)
        pipelined([[todo[k] for k in rows] for rows in cut], prepare, run, collect)
        return out

    return in_halves_on_oom(attempt, batch_size, max_batch_tokens, torch)


def in_halves_on_oom(
    attempt: Callable[[int, Any], _R], batch_size: int, max_tokens: int | None, torch: Any
) -> _R:
    """``attempt(batch_size, max_tokens)``; when the device runs out of memory, again with both
    halved (after returning the device's cached blocks), down to batches of one, whose
    out-of-memory error is raised. ``attempt`` must do only the work not done yet (results do
    not depend on the batching, so what an earlier try finished stays)."""
    while True:
        try:
            return attempt(batch_size, max_tokens)
        except Exception as exc:
            if batch_size <= 1 or not is_out_of_memory(exc):
                raise
            batch_size //= 2
            max_tokens = None if max_tokens is None else max(1, max_tokens // 2)
            cuda = getattr(torch, "cuda", None)
            if cuda is not None and cuda.is_available():
                cuda.empty_cache()


class LengthSorted:
    """Mixin for a backend holding ``_tokenizer``, ``_torch`` and ``_device``: runs a model over
    length-sorted batches with :func:`run_length_sorted`."""

    _tokenizer: Any
    _torch: Any
    _device: Any

    def _length_sorted(
        self,
        run: Callable[[dict[str, Any]], Any],
        first: Sequence[str],
        second: Sequence[str] | None = None,
        *,
        max_length: int | None,
        plan: BatchPlan,
        finish: Callable[[Any], Sequence[_T]] | None = None,
    ) -> list[_T]:
        return run_length_sorted(
            run, self._tokenizer, first, second,
            max_length=max_length, batch_size=plan.batch_size, torch=self._torch,
            device=self._device, name=str(getattr(self, "name", type(self).__name__)),
            call_cost=plan.call_cost, max_batch_tokens=plan.max_batch_tokens, finish=finish,
        )  # fmt: skip
