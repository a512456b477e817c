"""The causal-LM scorer's forward passes: log-probabilities at the scored positions only.

A forward pass runs the model's decoder (its ``base_model``) and puts through the LM head only
the hidden states of the positions that predict a scored token, a chunk of positions at a time,
with ``log P = logit(target) - logsumexp(logits)`` in float32. No full-vocabulary tensor is made
for padding, for a prefix that is read but not scored, or for a whole batch at once (a batch of
8 inputs of 700 positions over a 49,152-token vocabulary would be 1.1 GB of logits).

Inputs that share a long token prefix (texts that extend one paragraph in KaLMA knowledge
selection, few-shot demonstrations before every CONNER prompt, a knowledge text before several
queries in helpfulness) run that prefix once: its keys and values are reused for each input's
rest, and the log-probabilities of its own scored tokens are computed once.

Both shortcuts are checked once per model on a probe input against the model's own full forward
pass; a model whose logits are more than its head applied to its decoder's output (soft-capped or
scaled logits) keeps the full forward pass, and one whose cache cannot be reused runs every input
whole. The numbers are the same either way (to float32 rounding).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from citegraph.models.hf import device_type, run_error
from citegraph.models.lm._inputs import ScoreItem

__all__ = ["LMForward", "Scored", "SharedPrefix"]

#: Logits computed per head chunk (positions x vocabulary): 16 MB of float32.
CHUNK_ELEMENTS = 1 << 22
#: The same on an accelerator, 256 MB of float32: each chunk reads the whole head (a
#: 128k-token vocabulary x 2,048 is 0.5 GB in bf16), so 4M-element chunks (32 positions of
#: Llama-3's vocabulary) made the head a memory-bound read per 32 positions, 1,000 reads per
#: 32k-position batch; 512 positions per read make it compute-bound.
ACCELERATOR_CHUNK_ELEMENTS = 1 << 26
#: Largest |difference| of a probe log-probability for a shortcut to count as exact.
PROBE_TOLERANCE = 1e-4
#: The same in half precision, where two ways to compute one logit round differently (bf16 keeps
#: 8 bits: ~4e-3 relative, so ~0.04 on a log-probability of -10); a soft-capped or scaled head
#: moves log-probabilities by whole nats, far beyond these.
HALF_PROBE_TOLERANCE = {"bfloat16": (0.05, 1e-2), "float16": (0.02, 2e-3)}

#: One input's scored log-probabilities (float64 tensor, in token order).
Scored = Any


@dataclass(frozen=True, slots=True)
class SharedPrefix:
    """A prefix run once: its keys and values (``cache``), its ``length``, the log-probabilities
    its positions ``first..length - 2`` give their next tokens (``inside``), and the logits of
    its last position (``last``, ``last_lse`` = their logsumexp), which predict each input's own
    next token."""

    cache: Any
    length: int
    first: int
    inside: Any
    last: Any
    last_lse: Any


class LMForward:
    """Forward passes of one causal LM (the caller holds its lock).

    Args:
        model: A transformers causal LM in eval mode, on ``device``.
        torch: The torch module.
        device: Its device.
        pad_id: The id right padding uses (masked, so its value does not matter).
        name: The scorer's name, for errors.
    """

    def __init__(self, *, model: Any, torch: Any, device: str, pad_id: int, name: str) -> None:
        self._model, self._torch, self._device = model, torch, device
        self._pad_id, self._name = pad_id, name
        on_cpu = device_type(device) == "cpu"
        self._chunk_elements = CHUNK_ELEMENTS if on_cpu else ACCELERATOR_CHUNK_ELEMENTS
        self._decoder: Any = getattr(model, "base_model", None)
        self._head: Any = model.get_output_embeddings() if self._decoder is not None else None
        self.fast_head = False
        self.reuses_prefix = False
        # transformers 5.2x names the cache argument and output "cache" (was "past_key_values")
        names = _forward_parameters(self._decoder) if self._decoder is not None else set()
        self._cache_arg = "cache" if "cache" in names else "past_key_values"
        # transformers >= 4.50 computes logits only where asked (the full-forward fallback)
        self._keeps_logits = "logits_to_keep" in _forward_parameters(model)
        if self._decoder is not None and self._head is not None:
            self._probe()

    def batch(self, items: Sequence[ScoreItem]) -> list[Scored]:
        """The scored log-probabilities of each input of one right-padded batch."""
        ids, mask = self._padded([item.ids for item in items])
        if not self.fast_head:
            return self._full_forward(items, ids, mask)
        hidden = self._hidden(ids, mask)
        rows = [(r, item.start - 1, len(item.ids) - 1) for r, item in enumerate(items)]
        return self._head_logprobs(hidden, ids, rows)

    def prefix_pass(self, prefix: Sequence[int], first: int) -> SharedPrefix:
        """Run ``prefix`` once: its keys and values and the log-probabilities its positions
        ``first..`` give (for :meth:`continue_batch`)."""
        torch = self._torch
        ids = torch.tensor([list(prefix)], dtype=torch.long, device=self._device)
        out = self._call(self._decoder, input_ids=ids, use_cache=True)
        cache = out.cache if self._cache_arg == "cache" else out.past_key_values
        hidden = out.last_hidden_state[0]
        (inside,) = self._head_logprobs(hidden[None], ids, [(0, first, len(prefix) - 1)])
        last = self._head(hidden[-1:]).float()[0]
        return SharedPrefix(cache, len(prefix), first, inside, last, last.logsumexp(-1))

    def continue_batch(self, prefix: SharedPrefix, items: Sequence[ScoreItem]) -> list[Scored]:
        """Like :meth:`batch` for inputs that begin with ``prefix`` (positions ``>= first``)."""
        torch, shared = self._torch, prefix.length
        ids, mask = self._padded([item.ids[shared:] for item in items])
        rows_cache = copy.deepcopy(prefix.cache)
        if len(items) > 1:
            rows_cache.batch_repeat_interleave(len(items))
        head = torch.ones((len(items), shared), dtype=torch.long, device=self._device)
        out = self._call(
            self._decoder,
            input_ids=ids,
            attention_mask=torch.cat([head, mask], dim=1),
            use_cache=True,
            **{self._cache_arg: rows_cache},
        )
        rows = [
            (r, max(it.start - 1 - shared, 0), len(it.ids) - 1 - shared)
            for r, it in enumerate(items)
        ]
        tails = self._head_logprobs(out.last_hidden_state, ids, rows)
        scored = []
        for item, tail in zip(items, tails, strict=True):
            if item.start - 1 >= shared:  # every scored token is after the prefix
                scored.append(tail)
                continue
            boundary = (prefix.last[item.ids[shared]] - prefix.last_lse).double().reshape(1)
            inside = prefix.inside[item.start - 1 - prefix.first :]
            scored.append(torch.cat([inside, boundary, tail]))
        return scored

    def to_host(self, scored: Sequence[Scored]) -> list[list[float]]:
        """The log-probabilities of one batch's inputs as floats: one copy to the host per batch
        (not one per input), the only place results leave the model's device."""
        if not scored:
            return []
        flat = self._torch.cat(list(scored)).cpu().tolist()
        out, at = [], 0
        for logprobs in scored:
            n = int(logprobs.shape[0])
            out.append(flat[at : at + n])
            at += n
        return out

    def _padded(self, rows: Sequence[Sequence[int]]) -> tuple[Any, Any]:
        torch = self._torch
        width = max(len(row) for row in rows)
        pad = self._pad_id
        ids = torch.tensor([[*row, *[pad] * (width - len(row))] for row in rows], dtype=torch.long)
        mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in rows])
        return ids.to(self._device), mask.to(self._device)

    def _call(self, module: Any, **inputs: Any) -> Any:
        try:
            return module(**inputs)
        except Exception as exc:  # shape / device / dtype / memory problems surface here
            raise run_error(self._torch, self._name, self._device, exc) from exc

    def _hidden(self, ids: Any, mask: Any) -> Any:
        return self._call(self._decoder, input_ids=ids, attention_mask=mask).last_hidden_state

    def _head_logprobs(
        self, hidden: Any, ids: Any, rows: Sequence[tuple[int, int, int]]
    ) -> list[Scored]:
        """ln P of ``ids[r, begin + 1 : end + 1]`` from ``hidden[r, begin:end]`` for each row."""
        torch = self._torch
        width = hidden.shape[1]
        rows = [(r, b, max(b, e)) for r, b, e in rows]  # a row may have nothing to score here
        # the positions r * width + b .. r * width + e - 1 of every row, made in a few kernels
        # (not one arange per row: 512 launches per batch on a GPU)
        sizes = [e - b for _, b, e in rows]
        total = sum(sizes)
        shifts = torch.tensor([r * width + b for r, b, _ in rows], dtype=torch.long)
        shifts -= torch.tensor([0, *accumulate(sizes)][:-1], dtype=torch.long)
        counts = torch.tensor(sizes, dtype=torch.long)
        within = torch.arange(total, dtype=torch.long)
        spread = torch.repeat_interleave(shifts, counts, output_size=total)
        flat = (within + spread).to(hidden.device)
        states = hidden.reshape(-1, hidden.shape[-1]).index_select(0, flat)
        targets = ids.reshape(-1).index_select(0, flat + 1)
        vocab = int(self._head.weight.shape[0])
        logprobs = self._chunked(lambda lo, hi: self._head(states[lo:hi]), targets, vocab)
        return list(logprobs.split([e - b for _, b, e in rows]))

    def _chunked(self, logits_of: Any, targets: Any, vocab: int) -> Any:
        """``logit(target) - logsumexp(logits)`` over chunks of positions, as float64."""
        torch = self._torch
        step = max(1, self._chunk_elements // vocab)
        parts = []
        for lo in range(0, len(targets), step):
            logits = logits_of(lo, min(lo + step, len(targets))).float()
            picked = logits.gather(-1, targets[lo : lo + step].unsqueeze(-1)).squeeze(-1)
            parts.append((picked - logits.logsumexp(-1)).double())
        if not parts:  # nothing to score here (a shared prefix whose tokens are not scored)
            return torch.zeros(0, dtype=torch.float64, device=targets.device)
        return torch.cat(parts)

    def _full_forward(self, items: Sequence[ScoreItem], ids: Any, mask: Any) -> list[Scored]:
        """The model's own forward pass (logits from the first needed position on)."""
        torch, width = self._torch, ids.shape[1]
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        first = min(item.start for item in items) - 1
        if first > 0 and self._keeps_logits:
            inputs["logits_to_keep"] = torch.arange(first, width - 1, device=ids.device)
        else:
            first = 0
        logits = self._call(self._model, **inputs).logits
        vocab = int(logits.shape[-1])
        out = []
        for r, item in enumerate(items):
            begin, end = item.start - 1 - first, len(item.ids) - 1 - first
            rows = logits[r, begin:end]
            targets = ids[r, item.start : len(item.ids)]
            out.append(self._chunked(lambda lo, hi, rows=rows: rows[lo:hi], targets, vocab))
        return out

    def _probe(self) -> None:
        """Check the head shortcut and prefix reuse against the model's full forward pass."""
        torch = self._torch
        vocab = int(self._head.weight.shape[0])
        ids = [(7 * k + 3) % vocab for k in range(12)]
        tokens = torch.tensor([ids], dtype=torch.long, device=self._device)
        with torch.inference_mode():
            logits = self._call(self._model, input_ids=tokens).logits[0, :-1].float()
            want = logits.log_softmax(-1).gather(-1, tokens[0, 1:].unsqueeze(-1)).squeeze(-1)
            want = want.double()
            self.fast_head = True  # for the probe's own call of batch
            whole = [ScoreItem(ids, 1, 0, None)]
            dtype = str(self._head.weight.dtype).removeprefix("torch.")
            atol, rtol = HALF_PROBE_TOLERANCE.get(dtype, (PROBE_TOLERANCE, 0.0))
            self.fast_head = _agrees(torch, lambda: self.batch(whole), [want], atol, rtol)
            if self.fast_head:
                # the prefix holds scored tokens for one input and none for the other
                rows = [ScoreItem(ids, 6, 0, None), ScoreItem(ids, 2, 0, None)]
                rest = lambda: self.continue_batch(self.prefix_pass(ids[:5], 1), rows)  # noqa: E731
                wants = [want[5:], want[1:]]
                self.reuses_prefix = _agrees(torch, rest, wants, atol, rtol)


def _agrees(
    torch: Any,
    compute: Callable[[], list[Any]],
    wants: list[Any],
    atol: float = PROBE_TOLERANCE,
    rtol: float = 0.0,
) -> bool:
    """Whether the tensors ``compute`` gives equal ``wants`` within ``atol + rtol * |want|``,
    one by one (False when it fails)."""
    try:
        got = compute()
    except Exception:  # a shortcut that fails on the probe is not used
        return False
    return len(got) == len(wants) and all(
        g.shape == w.shape and bool(torch.allclose(g, w, atol=atol, rtol=rtol))
        for g, w in zip(got, wants, strict=True)
    )


def _forward_parameters(model: Any) -> set[str]:
    return set(inspect.signature(model.forward).parameters)
