"""A local causal language model (transformers) behind the :class:`ChatModel` protocol.

:meth:`HFChat.load` takes a Hugging Face hub id or a local model directory, optionally with a
``gguf_file`` inside it. Prompts are built with the tokenizer's chat template
(``add_generation_prompt=True``); a tokenizer without one gets the plain format of
:func:`format_plain`. Generation runs in a worker thread, one ``model.generate`` call at a time
per model (a lock guards it); the requests in flight share a call, up to ``max_batch`` rows
(left-padded; see :mod:`citegraph.models.chat._batching`). Decoding is greedy when
``temperature == 0``, else sampling with ``temperature`` and ``top_p`` (no top-k) from a
generator of the row's own, seeded by the request, so the same request gives the same text,
alone or in a batch. Stop
sequences end a row as soon as its decoded reply contains one, and the reply is cut before it. A
``repetition_penalty`` penalises tokens the reply already holds (not the prompt's). Each row
keeps its own stops, ``max_tokens``, penalty, grammar and sampler, so a reply is the one it
would be alone. ``threads`` sets torch's intra-op threads during generation, and
:attr:`HFChat.progress`, when set, is called after every new token of a call (see
:mod:`citegraph.models.chat._generation`).

torch and transformers are imported when a model is loaded (:mod:`._hf_load`); when they are
missing, :class:`~citegraph.errors.MissingDependency` names the ``local`` extra.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, ModelError, PromptTooLong
from citegraph.models.chat._batching import BatchScheduler, default_max_batch
from citegraph.models.chat._generation import (
    GenerationCancelled,
    ProgressReporter,
    ReplyRepetitionPenalty,
    Row,
    RowLogits,
    RowSampler,
    RowStops,
    torch_threads,
)
from citegraph.models.chat._hf_load import (
    LoadedLM,
    load_causal_lm,
    quiet_stderr,
    require_local,
)
from citegraph.models.chat._types import (
    ChatMessage,
    ChatRequest,
    GenerateConfig,
    Generation,
    ProgressCallback,
    Usage,
)
from citegraph.models.chat._usage import report_usage
from citegraph.models.grammar import (
    GrammarLogits,
    compile_grammar,
    hf_tokenizer,
    steer_tokens,
)
from citegraph.models.hf import (
    HeldModel,
    Placement,
    effective_max_length,
    run_error,
)

#: A row of a batched call: the request, its prompt ids, its cancel event and its grammar's
#: logits processor for a prompt length (None: no grammar).
_RowInput = tuple[ChatRequest, list[int], threading.Event, Callable[[int], GrammarLogits] | None]

__all__ = [
    "PLAIN_ROLES",
    "HFChat",
    "LoadedLM",
    "cut_at_stop",
    "format_plain",
    "load_causal_lm",
    "quiet_stderr",
    "require_local",
]

#: The prompt format for tokenizers without a chat template: one ``Role: content`` line per
#: message, then ``Assistant:`` for the model to continue.
PLAIN_ROLES = {"system": "System", "user": "User", "assistant": "Assistant"}


def format_plain(messages: Sequence[ChatMessage]) -> str:
    """The fallback prompt: ``"System: ...\\nUser: ...\\nAssistant:"``.

    Each message becomes ``"<Role>: <content>"`` on its own line, and a last ``"Assistant:"``
    line asks the model for the reply.
    """
    lines = [f"{PLAIN_ROLES[m.role]}: {m.content}" for m in messages]
    return "\n".join([*lines, "Assistant:"])


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the earliest occurrence of any non-empty stop string, and whether one
    occurred."""
    found = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return (text[: min(found)], True) if found else (text, False)


class HFChat(HeldModel):
    """A transformers causal LM answering chat requests (build it with :meth:`load`).

    Attributes:
        name: ``"hf/<hub id or folder name>"`` (``".../<gguf file>"`` for a GGUF), or the name
            given to :meth:`load`.
        endpoint: The resolved local path (of the folder, or of the GGUF file) or the hub id,
            with ``#<dtype>`` after it when the weights are not float32 (it keys the response
            cache, and a dtype changes replies).
        threads: torch intra-op threads while generating (None: torch's setting).
        max_batch: Most requests sharing one ``generate`` call (1: one request at a time).
        progress: Called after every generated token with a
            :class:`~citegraph.models.GenerationProgress` (from the generating thread).
        default_config: The sampling settings a call without its own config should use
            (:func:`~citegraph.models.generate_config_for`); None: :class:`GenerateConfig`'s.
            :func:`~citegraph.models.local_chat` sets the embedded model's.
    """

    #: A request's grammar is applied as a logits processor (llguidance).
    grammar_mode = "logits"

    def __init__(
        self,
        *,
        model: Any,
        tokenizer: Any,
        torch: Any,
        name: str,
        endpoint: str,
        device: str,
        threads: int | None = None,
        placement: Placement | None = None,
        max_batch: int | None = None,
    ) -> None:
        if max_batch is not None and max_batch < 1:
            raise ConfigError(f"max_batch must be >= 1, got {max_batch}")
        self.name = name
        self.endpoint = endpoint
        self.threads = threads
        self.progress: ProgressCallback | None = None
        self.default_config: GenerateConfig | None = None
        self._hold(
            model=model, tokenizer=tokenizer, torch=torch, device=device, placement=placement
        )
        self.max_batch = max_batch if max_batch is not None else default_max_batch(device)
        self._scheduler = (
            BatchScheduler(self.generate_batch_sync, max_batch=self.max_batch)
            if self.max_batch > 1
            else None
        )

    @classmethod
    def load(
        cls,
        model_id_or_path: str | Path,
        *,
        gguf_file: str | None = None,
        device: str | None = "auto",
        dtype: Any = "auto",
        name: str | None = None,
        endpoint: str | None = None,
        threads: int | None = None,
        max_batch: int | None = None,
    ) -> HFChat:
        """Load a tokenizer and causal LM from the hub or a local directory.

        Args:
            model_id_or_path: Hub id or local model directory; a path to a ``.gguf`` file is
                split into its directory and ``gguf_file``.
            gguf_file: A GGUF file inside ``model_id_or_path`` (loaded by transformers, which
                dequantizes it unless a GGUF kernel is available; needs the ``gguf`` package).
            device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
            dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU), a dtype name or a torch
                dtype.
            name: The model's name in run records (default ``"hf/<id or folder name>"``).
            endpoint: Overrides :attr:`endpoint` (e.g. a stable id instead of a local path).
            threads: torch intra-op threads while generating (None: leave torch's setting).
            max_batch: Most requests in one ``generate`` call (None: the device's default,
                :data:`~citegraph.models.chat._batching.DEFAULT_MAX_BATCH`; 1: one at a time).

        Raises:
            MissingDependency: torch, transformers or (for GGUF) gguf is missing (``local``).
            ModelError: The path does not exist or the tokenizer or model fails to load.
            ConfigError: Empty path or unknown dtype.
        """
        loaded = load_causal_lm(model_id_or_path, gguf_file=gguf_file, device=device, dtype=dtype)
        torch, model, tokenizer = loaded.torch, loaded.model, loaded.tokenizer
        gguf_file, source = loaded.gguf_file, loaded.source
        local = Path(source).exists()
        base = str(Path(source).resolve()) if local else source
        where = f"{base}/{gguf_file}" if gguf_file else base
        default_name = Path(base).name if local else source
        if gguf_file:
            default_name = f"{default_name}/{gguf_file}"
        endpoint = endpoint or where
        if loaded.placement.dtype != "float32":  # replies in another dtype are cached apart
            endpoint = f"{endpoint}#{loaded.placement.dtype}"
        return cls(
            model=model,
            tokenizer=tokenizer,
            torch=torch,
            name=name or f"hf/{default_name}",
            endpoint=endpoint,
            device=loaded.placement.device,
            threads=threads,
            placement=loaded.placement,
            max_batch=max_batch,
        )

    @property
    def uses_chat_template(self) -> bool:
        """Whether prompts use the tokenizer's chat template (else :func:`format_plain`)."""
        return bool(getattr(self._tokenizer, "chat_template", None))

    def format_prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt text the model continues: the chat template with the generation prompt, or
        :func:`format_plain` when the tokenizer has no template."""
        tokenizer = self._live()[1]
        if not self.uses_chat_template:
            return format_plain(messages)
        dicts = [{"role": m.role, "content": m.content} for m in messages]
        prompt = tokenizer.apply_chat_template(dicts, add_generation_prompt=True, tokenize=False)
        return str(prompt)

    async def generate(self, request: ChatRequest) -> Generation:
        """Generate one reply in a worker thread.

        With ``max_batch > 1`` the request joins the requests in flight that can share a call
        (see :mod:`citegraph.models.chat._batching`); with ``max_batch == 1`` requests run one
        at a time. Cancelling the call stops its generation within a token (or before it starts,
        when it waits for others), so a Ctrl-C does not wait for whole replies; the other rows of
        its batch go on.
        """
        started = time.perf_counter()
        if self._scheduler is None:
            cancel = threading.Event()
            try:
                generation = await asyncio.to_thread(self.generate_sync, request, cancel=cancel)
            except asyncio.CancelledError:
                cancel.set()
                raise
        else:
            generation = await self._scheduler.submit(request)
            generation = generation.model_copy(update={"latency_s": time.perf_counter() - started})
        report_usage(self, generation)
        return generation

    def generate_sync(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generation:
        """Blocking version of :meth:`generate` for one request (scripts, worker processes).

        Args:
            request: The messages and sampling config.
            cancel: When set (from another thread), generation stops within a token and
                :class:`GenerationCancelled` is raised.

        Raises:
            ModelError: The model was closed, or generation failed.
            GenerationCancelled: ``cancel`` was set.
        """
        started = time.perf_counter()
        (result,) = self.generate_batch_sync([request], [cancel or threading.Event()])
        if isinstance(result, BaseException):
            raise result
        return result.model_copy(update={"latency_s": time.perf_counter() - started})

    def generate_batch_sync(
        self,
        requests: Sequence[ChatRequest],
        cancels: Sequence[threading.Event] | None = None,
    ) -> list[Generation | BaseException]:
        """Generate the replies of ``requests`` in one ``model.generate`` call (blocking).

        The prompts are left-padded into one batch; each row keeps its own stop strings,
        ``max_tokens``, repetition penalty and grammar, and its text, usage and finish reason
        are what it would get alone (greedy rows give the same text). Requests whose prompts
        and ``max_tokens`` do not fit the context together run one at a time. All requests
        may mix greedy and sampled rows: a sampled row draws its tokens with its own seed
        (:class:`~citegraph.models.chat._generation.RowSampler`), the same alone or in a batch.

        Returns:
            One :class:`Generation` or error per request, in order: a request whose ``cancels``
            event was set gets :class:`GenerationCancelled`, one whose prompt is too long
            :class:`PromptTooLong`; a failed call gives every row its :class:`ModelError`.
        """
        events = list(cancels) if cancels is not None else [threading.Event() for _ in requests]
        results: list[Generation | BaseException | None] = [None] * len(requests)
        with self._lock:
            try:
                model, tokenizer = self._live()
            except ModelError as exc:
                return [exc] * len(requests)
            prompts: dict[int, list[int]] = {}
            grammars: dict[int, Callable[[int], GrammarLogits] | None] = {}
            for i, request in enumerate(requests):
                try:
                    if events[i].is_set():
                        raise GenerationCancelled(f"{self.name}: generation cancelled")
                    ids = self._prompt_ids(tokenizer, request)
                    self._check_context(model, tokenizer, len(ids), request.config.max_tokens)
                    grammars[i] = self._grammar_logits(request, tokenizer)
                    prompts[i] = ids
                except Exception as exc:  # the prompt, its length or its grammar: this row's
                    results[i] = exc
            longest = max((len(p) for p in prompts.values()), default=0)
            most = max((requests[i].config.max_tokens for i in prompts), default=0)
            if (
                prompts
                and effective_max_length(longest + most, tokenizer, model.config) < longest + most
            ):  # together they do not fit: one at a time
                groups = [[i] for i in prompts]
            else:
                groups = [list(prompts)] if prompts else []
            for group in groups:
                rows = [(requests[i], prompts[i], events[i], grammars[i]) for i in group]
                for i, result in zip(group, self._run_rows(model, tokenizer, rows), strict=True):
                    results[i] = result
        return [r if r is not None else ModelError("no result") for r in results]

    def _prompt_ids(self, tokenizer: Any, request: ChatRequest) -> list[int]:
        """The prompt's token ids (special tokens only from the chat template, when used)."""
        prompt = self.format_prompt(request.messages)
        encoded = tokenizer(prompt, add_special_tokens=not self.uses_chat_template)
        return list(encoded["input_ids"])

    def _run_rows(
        self,
        model: Any,
        tokenizer: Any,
        rows: list[_RowInput],
    ) -> list[Generation | BaseException]:
        """One ``model.generate`` call over ``rows`` (request, prompt ids, cancel event, grammar
        processor factory)."""
        started = time.perf_counter()
        torch = self._torch
        width = max(len(row[1]) for row in rows)
        eos = self._eos_ids(model, tokenizer)
        pad = getattr(model.generation_config, "pad_token_id", None)
        if pad is None:
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(eos)
        ids = [[pad] * (width - len(row[1])) + row[1] for row in rows]  # left padding
        mask = [[0] * (width - len(row[1])) + [1] * len(row[1]) for row in rows]
        inputs = {
            "input_ids": torch.tensor(ids, dtype=torch.long, device=self._device),
            "attention_mask": torch.tensor(mask, dtype=torch.long, device=self._device),
        }
        states: list[Row] = []
        constraints: list[GrammarLogits | None] = []
        for request, _, cancel, grammar in rows:
            processors: list[Any] = []
            if request.config.repetition_penalty is not None:
                processors.append(ReplyRepetitionPenalty(width, request.config.repetition_penalty))
            constraint = None if grammar is None else grammar(width)
            if constraint is not None:
                processors.append(constraint)
            constraints.append(constraint)
            if request.config.temperature > 0:  # each row samples with its own seed, last
                processors.append(
                    RowSampler(
                        torch,
                        temperature=request.config.temperature,
                        top_p=request.config.top_p,
                        seed=request.config.seed,
                        device=self._device,
                    )
                )
            states.append(
                Row(
                    max_tokens=request.config.max_tokens,
                    stop=request.config.stop,
                    cancel=cancel,
                    processors=processors,
                )
            )
        most = max(state.max_tokens for state in states)
        # sampled rows draw their own tokens (RowSampler), so the call itself is greedy
        options: dict[str, Any] = {"max_new_tokens": most, "pad_token_id": pad, "do_sample": False}
        decode = lambda row: tokenizer.decode(row, skip_special_tokens=True)  # noqa: E731
        criteria: list[Any] = [
            RowStops(states, prompt_len=width, eos=eos, decode=decode, cut=cut_at_stop, torch=torch)
        ]
        if self.progress is not None:
            criteria.append(
                ProgressReporter(self.progress, prompt_len=width, max_tokens=most, torch=torch)
            )
        options["stopping_criteria"] = criteria
        if any(state.processors for state in states):
            options["logits_processor"] = [RowLogits(states)]
        try:
            with torch.inference_mode(), torch_threads(torch, self.threads):
                output = model.generate(**inputs, **options)
        except Exception as exc:  # torch / transformers raise many types
            error = run_error(torch, self.name, self._device, exc, "generation")
            error.__cause__ = exc
            return [error] * len(rows)
        replies = output[:, width:].tolist()
        templated = self.uses_chat_template
        results: list[Generation | BaseException] = []
        for (request, prompt, cancel, _), state, constraint, reply in zip(
            rows, states, constraints, replies, strict=True
        ):
            if cancel.is_set():  # a cut reply is no reply
                results.append(GenerationCancelled(f"{self.name}: generation cancelled"))
                continue
            new_ids = reply[: state.end if state.end is not None else state.max_tokens]
            text, stopped = cut_at_stop(decode(new_ids), request.config.stop)
            ended = (
                stopped
                or bool(new_ids and new_ids[-1] in eos)
                or len(new_ids) < request.config.max_tokens
            )
            raw: dict[str, Any] = {
                "prompt_format": "chat_template" if templated else "plain",
                "batch_size": len(rows),
            }
            if constraint is not None and request.grammar is not None:
                raw.update(
                    grammar=request.grammar.name,
                    grammar_mode="logits",
                    grammar_s=round(constraint.seconds, 6),
                    grammar_steered=constraint.steered,
                    **constraint.updates,
                )
            results.append(
                Generation(
                    text=text.strip(),
                    model=self.name.split("/", 1)[-1],
                    finish_reason="stop" if ended else "length",
                    usage=Usage(prompt_tokens=len(prompt), completion_tokens=len(new_ids)),
                    latency_s=time.perf_counter() - started,
                    raw=raw,
                )
            )
        return results

    def _grammar_logits(
        self, request: ChatRequest, tokenizer: Any
    ) -> Callable[[int], GrammarLogits] | None:
        """The logits processor of ``request``'s grammar for a given prompt length (None
        without one); the grammar is compiled here, so a bad one fails its request alone."""
        if request.grammar is None:
            return None
        ll_tokenizer = hf_tokenizer(tokenizer)
        matcher = compile_grammar(ll_tokenizer, request.grammar)
        vocab = ll_tokenizer.vocab_size
        steer = None
        if request.grammar.steering is not None:
            eos = sorted(self._eos_ids(self._model, tokenizer))
            steer = steer_tokens(tokenizer, request.grammar.steering, vocab, eos)
        torch = self._torch
        return lambda prompt_len: GrammarLogits(matcher, prompt_len, vocab, torch, steer)

    def _check_context(self, model: Any, tokenizer: Any, prompt_len: int, max_tokens: int) -> None:
        """Refuse a prompt that does not fit the model's context (instead of generating
        from positions the model never saw, or running out of memory on attention)."""
        needed = prompt_len + max_tokens
        context = effective_max_length(needed, tokenizer, model.config)
        if context < needed:
            raise PromptTooLong(
                f"{self.name}: the prompt has {prompt_len} tokens; with max_tokens "
                f"{max_tokens} it exceeds the model's context of {context} tokens"
            )

    def _live(self) -> tuple[Any, Any]:
        if self._model is None or self._tokenizer is None:
            raise ModelError(f"{self.name}: the model was closed")
        return self._model, self._tokenizer

    @staticmethod
    def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
        eos = getattr(model.generation_config, "eos_token_id", None)
        ids = set(eos if isinstance(eos, list) else [eos])
        ids.add(tokenizer.eos_token_id)
        return {i for i in ids if i is not None}
