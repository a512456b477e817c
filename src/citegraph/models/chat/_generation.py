"""Hooks into transformers' ``generate`` loop for :class:`~citegraph.models.HFChat`.

* :class:`ReplyRepetitionPenalty`: a logits processor that penalises tokens the *reply* already
  holds (CTRL-style: positive logits divided, negative multiplied by the penalty). transformers'
  own ``repetition_penalty`` also penalises every prompt token, which for a KG prompt means the
  entity ids and relation names a citation has to copy.
* :class:`ProgressReporter`: a stopping criterion that never stops; it calls a
  :data:`~citegraph.models.ProgressCallback` after each new token with the tokens so far and the
  prefill / elapsed time (transformers calls stopping criteria once per generated token).
* :class:`StopOnCancel`: a stopping criterion that stops every row once an event is set (a
  cancelled call: transformers checks stopping criteria after every token), with
  :class:`GenerationCancelled` raised by the caller instead of returning the cut reply.
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


class StopOnCancel:
    """A stopping criterion: every row is done once ``event`` is set."""

    def __init__(self, event: threading.Event, torch: Any) -> None:
        self._event = event
        self._torch = torch

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        done = self._event.is_set()
        return self._torch.full(
            (input_ids.shape[0],), done, dtype=self._torch.bool, device=input_ids.device
        )


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
