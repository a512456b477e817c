"""Hooks into transformers' ``generate`` loop for :class:`~citegraph.models.HFChat`.

* :class:`ReplyRepetitionPenalty`: a logits processor that penalises tokens the *reply* already
  holds (CTRL-style: positive logits divided, negative multiplied by the penalty). transformers'
  own ``repetition_penalty`` also penalises every prompt token, which for a KG prompt means the
  entity ids and relation names a citation has to copy.
* :class:`ProgressReporter`: a stopping criterion that never stops; it calls a
  :data:`~citegraph.models.ProgressCallback` after each new token with the tokens so far and the
  prefill / elapsed time (transformers calls stopping criteria once per generated token).
* :class:`Row`, :class:`RowStops`, :class:`RowLogits`: the per-request rows of a batched call
  (left-padded prompts, so every reply starts at the same column): each row ends at EOS, its own
  stop string, its own ``max_tokens`` or its cancel, and gets its own logits processors (the
  repetition penalty, its grammar's matcher) on its row of the scores until it ends.
* :func:`torch_threads`: run a block with a given number of intra-op threads, restoring the
  previous number after.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from citegraph.errors import ModelError
from citegraph.models.chat._types import GenerationProgress, ProgressCallback


class GenerationCancelled(ModelError):
    """A generation stopped because its call was cancelled (its reply is never used)."""


class ReplyRepetitionPenalty:
    """Penalise the logits of tokens already generated after position ``prompt_len``."""

    def __init__(self, prompt_len: int, penalty: float) -> None:
        self._prompt_len = prompt_len
        self._penalty = penalty

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        reply = input_ids[:, self._prompt_len :]
        if reply.shape[1] == 0 or self._penalty == 1.0:
            return scores
        seen = scores.gather(1, reply)
        seen = seen.where(seen < 0, seen / self._penalty).where(seen >= 0, seen * self._penalty)
        return scores.scatter(1, reply, seen)


class ProgressReporter:
    """Calls ``callback`` after every generated token; never asks generation to stop."""

    def __init__(
        self, callback: ProgressCallback, *, prompt_len: int, max_tokens: int, torch: Any
    ) -> None:
        self._callback = callback
        self._prompt_len = prompt_len
        self._max_tokens = max_tokens
        self._torch = torch
        self._started = time.perf_counter()
        self._prefill_s: float | None = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        elapsed = time.perf_counter() - self._started
        if self._prefill_s is None:
            self._prefill_s = elapsed
        self._callback(
            GenerationProgress(
                tokens=int(input_ids.shape[1]) - self._prompt_len,
                max_tokens=self._max_tokens,
                prompt_tokens=self._prompt_len,
                prefill_s=self._prefill_s,
                elapsed_s=elapsed,
            )
        )
        return self._torch.zeros(
            input_ids.shape[0], dtype=self._torch.bool, device=input_ids.device
        )


@contextlib.contextmanager
def torch_threads(torch: Any, threads: int | None) -> Iterator[None]:
    """``torch.set_num_threads(threads)`` for the block (nothing when ``threads`` is None)."""
    if threads is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Row:
    """One request's row of a batched ``generate`` call and where it ended.

    Args:
        max_tokens: The request's ``max_tokens`` (the call may run longer for other rows).
        stop: The request's stop strings.
        cancel: Set (from another thread) when the request was cancelled.
        processors: The request's own logits processors, each called with the row's slice of
            ``input_ids`` and ``scores`` (a batch of one), in order.

    Attributes:
        end: Reply tokens that belong to the row (set when it ended: by EOS, a stop string, its
            ``max_tokens`` or a cancel); None while it runs.
    """

    def __init__(
        self,
        *,
        max_tokens: int,
        stop: tuple[str, ...],
        cancel: threading.Event,
        processors: list[Any],
    ) -> None:
        self.max_tokens = max_tokens
        self.stop = tuple(s for s in stop if s)
        self.cancel = cancel
        self.processors = processors
        self.end: int | None = None


class RowStops:
    """A stopping criterion over a batch: a row is done at EOS, at its first stop string, at its
    ``max_tokens`` or when cancelled; the call ends (transformers' rule) once every row is done.

    Rows stay done: transformers pads a finished row, and the padding is never looked at.
    """

    def __init__(
        self,
        rows: list[Row],
        *,
        prompt_len: int,
        eos: set[int],
        decode: Any,
        cut: Any,
        torch: Any,
    ) -> None:
        self._rows = rows
        self._prompt_len = prompt_len
        self._eos = eos
        self._decode = decode
        self._cut = cut
        self._torch = torch

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        generated = int(input_ids.shape[1]) - self._prompt_len
        running = [row for row in self._rows if row.end is None]
        # one host read per token for the whole batch, and only of what is looked at
        last = input_ids[:, -1].tolist() if generated > 0 and self._eos and running else None
        reads = generated > 0 and any(row.stop for row in running)
        replies = input_ids[:, self._prompt_len :].tolist() if reads else None
        for i, row in enumerate(self._rows):
            if row.end is not None:
                continue
            if (
                row.cancel.is_set()
                or generated >= row.max_tokens
                or (last is not None and last[i] in self._eos)
                or (replies is not None and row.stop and self._stopped(replies[i], row.stop))
            ):
                row.end = generated
        done = [row.end is not None for row in self._rows]
        return self._torch.tensor(done, dtype=self._torch.bool, device=input_ids.device)

    def _stopped(self, reply: list[int], stop: tuple[str, ...]) -> bool:
        return bool(self._cut(self._decode(reply), stop)[1])


class RowLogits:
    """A logits processor over a batch: each running row's own processors on its row of the
    scores (a grammar matcher sees only its row's tokens; a done row is left alone)."""

    def __init__(self, rows: list[Row]) -> None:
        self._rows = rows

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        for i, row in enumerate(self._rows):
            if row.end is not None or not row.processors:
                continue
            ids, part = input_ids[i : i + 1], scores[i : i + 1]
            for processor in row.processors:
                part = processor(ids, part)
            scores[i : i + 1] = part
        return scores


class RowSampler:
    """Sampling as a row's last logits processor: the row's next token is drawn from its own
    distribution (``temperature``, then nucleus ``top_p``) with its own generator, seeded by the
    request's ``seed`` (``None``: a fresh seed), and every other token is masked, so the call's
    greedy step takes it. A request therefore samples the same tokens alone or in a batch, and
    the global RNG is never touched."""

    def __init__(
        self, torch: Any, *, temperature: float, top_p: float, seed: int | None, device: str
    ) -> None:
        self._torch = torch
        self.temperature = temperature
        self.top_p = top_p
        try:
            self._generator = torch.Generator(device=device)
            self._on_host = False
        except RuntimeError:  # a device without generators of its own: draw on the host
            self._generator = torch.Generator(device="cpu")
            self._on_host = True
        if seed is None:
            self._generator.seed()
        else:
            self._generator.manual_seed(seed)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self._torch
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        if self.top_p < 1.0:  # keep the most likely tokens until their mass reaches top_p
            ordered, index = torch.sort(probs, descending=True)
            before = ordered.cumsum(dim=-1) - ordered
            ordered = ordered.masked_fill(before >= self.top_p, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, index, ordered)
        if self._on_host:
            token = torch.multinomial(probs.cpu(), 1, generator=self._generator)
            token = token.to(scores.device)
        else:
            token = torch.multinomial(probs, 1, generator=self._generator)
        chosen = torch.full_like(scores, float("-inf"))
        return chosen.scatter(-1, token, 0.0)
