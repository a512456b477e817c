"""A local causal language model (transformers) behind the :class:`ChatModel` protocol.

:meth:`HFChat.load` takes a Hugging Face hub id or a local model directory, optionally with a
``gguf_file`` inside it. Prompts are built with the tokenizer's chat template
(``add_generation_prompt=True``); a tokenizer without one gets the plain format of
:func:`format_plain`. Generation runs in a worker thread, one request at a time per model (a lock
guards it): greedy when ``temperature == 0``, else sampling with ``temperature`` and ``top_p``
(no top-k), seeded per request so the same request gives the same text. Stop sequences end
generation as soon as the decoded reply contains one, and the reply is cut before it. A
``repetition_penalty`` penalises tokens the reply already holds (not the prompt's). ``threads``
sets torch's intra-op threads during generation, and :attr:`HFChat.progress`, when set, is called
after every new token (see :mod:`citegraph.models.chat._generation`).

torch and transformers are imported when a model is loaded; when they are missing,
:class:`~citegraph.errors.MissingDependency` names the ``local`` extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from citegraph.errors import MissingDependency, ModelError, PromptTooLong
from citegraph.models.chat._generation import (
    GenerationCancelled,
    ProgressReporter,
    ReplyRepetitionPenalty,
    StopOnCancel,
    torch_threads,
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
    check_placement,
    effective_max_length,
    fast_attention,
    load_placed,
    load_pretrained,
    quiet_loading,
    require_transformers,
    resolve_model_path,
    run_error,
)

#: The prompt format for tokenizers without a chat template: one ``Role: content`` line per
#: message, then ``Assistant:`` for the model to continue.
PLAIN_ROLES = {"system": "System", "user": "User", "assistant": "Assistant"}


def require_local() -> tuple[Any, Any]:
    """Import torch and transformers, or raise :class:`MissingDependency` (``local`` extra)."""
    return require_transformers("local")


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


def quiet_stderr(enabled: bool = True) -> contextlib.AbstractContextManager[Any]:
    """Swallow ``sys.stderr`` while enabled: transformers' GGUF reader draws a tqdm bar that its
    progress-bar switch does not reach (library code never prints)."""
    return contextlib.redirect_stderr(io.StringIO()) if enabled else contextlib.nullcontext()


class _StopOnText:
    """A stopping criterion: the decoded reply (prompt excluded) contains a stop string."""

    def __init__(self, tokenizer: Any, prompt_len: int, stop: Sequence[str], torch: Any) -> None:
        self._tokenizer = tokenizer
        self._prompt_len = prompt_len
        self._stop = [s for s in stop if s]
        self._torch = torch

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        done = [
            cut_at_stop(
                self._tokenizer.decode(row[self._prompt_len :], skip_special_tokens=True),
                self._stop,
            )[1]
            for row in input_ids
        ]
        return self._torch.tensor(done, dtype=self._torch.bool, device=input_ids.device)


class LoadedLM(NamedTuple):
    """A causal LM and its tokenizer as :func:`load_causal_lm` loaded them."""

    torch: Any
    model: Any
    tokenizer: Any
    source: str
    gguf_file: str | None
    placement: Placement


def load_causal_lm(
    model_id_or_path: str | Path,
    *,
    gguf_file: str | None = None,
    device: str | None = "auto",
    dtype: Any = "auto",
) -> LoadedLM:
    """Load a tokenizer and causal LM (hub id, local folder, or a ``.gguf`` file path) on
    ``device`` in ``dtype`` (see :mod:`citegraph.models.hf._placement`), in eval mode.

    Shared by :class:`HFChat` and the LM scorer. A path to a ``.gguf`` file is split into its
    folder and ``gguf_file``; transformers dequantizes GGUF weights (needs ``gguf``).

    Raises:
        MissingDependency: torch, transformers or (for GGUF) gguf is missing (``local``).
        ModelError: The path does not exist, the tokenizer or model fails to load, or the model
            does not fit on the device.
        ConfigError: Empty path, unknown device or unknown dtype.
    """
    torch, transformers = require_local()
    text = str(model_id_or_path).strip()
    if gguf_file is None and text.endswith(".gguf") and Path(text).expanduser().is_file():
        gguf_path = Path(text).expanduser()
        text, gguf_file = str(gguf_path.parent), gguf_path.name
    if gguf_file is not None and importlib.util.find_spec("gguf") is None:
        raise MissingDependency("gguf", "local")
    source = resolve_model_path(text)
    check_placement(torch, device, dtype)  # a missing device fails before anything is loaded
    kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    auto = transformers.AutoModelForCausalLM
    with quiet_loading(transformers), quiet_stderr(gguf_file is not None):
        tokenizer = load_pretrained(
            lambda p: transformers.AutoTokenizer.from_pretrained(p, **kwargs),
            source,
            "tokenizer",
        )
        try:  # for the size check before loading; a GGUF file's config may not read this way
            config = transformers.AutoConfig.from_pretrained(source, **kwargs)
        except Exception:
            config = None
        model, placement = load_placed(
            lambda placed: load_pretrained(
                lambda p: fast_attention(auto.from_pretrained)(p, **kwargs, **placed),
                source,
                "causal LM",
            ),
            torch=torch, name=source, device=device, dtype=dtype, config=config, model_class=auto,
        )  # fmt: skip
    return LoadedLM(torch, model, tokenizer, source, gguf_file, placement)


class HFChat(HeldModel):
    """A transformers causal LM answering chat requests (build it with :meth:`load`).

    Attributes:
        name: ``"hf/<hub id or folder name>"`` (``".../<gguf file>"`` for a GGUF), or the name
            given to :meth:`load`.
        endpoint: The resolved local path (of the folder, or of the GGUF file) or the hub id,
            with ``#<dtype>`` after it when the weights are not float32 (it keys the response
            cache, and a dtype changes replies).
        threads: torch intra-op threads while generating (None: torch's setting).
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
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.threads = threads
        self.progress: ProgressCallback | None = None
        self.default_config: GenerateConfig | None = None
        self._hold(
            model=model, tokenizer=tokenizer, torch=torch, device=device, placement=placement
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
        """Generate one reply in a worker thread (one generation at a time per model).

        Cancelling the call stops the generation within a token (or before it starts, when it
        waits for another request's), so a Ctrl-C does not wait for whole replies.
        """
        cancel = threading.Event()
        try:
            generation = await asyncio.to_thread(self.generate_sync, request, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        report_usage(self, generation)
        return generation

    def generate_sync(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generation:
        """Blocking version of :meth:`generate` (for scripts and worker processes).

        Args:
            request: The messages and sampling config.
            cancel: When set (from another thread), generation stops within a token and
                :class:`GenerationCancelled` is raised.

        Raises:
            ModelError: The model was closed, or generation failed.
            GenerationCancelled: ``cancel`` was set.
        """
        started = time.perf_counter()
        with self._lock:
            if cancel is not None and cancel.is_set():
                raise GenerationCancelled(f"{self.name}: generation cancelled")
            model, tokenizer = self._live()
            templated = self.uses_chat_template
            prompt = self.format_prompt(request.messages)
            config = request.config
            inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=not templated)
            inputs = inputs.to(self._device)
            prompt_len = int(inputs["input_ids"].shape[1])
            self._check_context(model, tokenizer, prompt_len, config.max_tokens)
            options: dict[str, Any] = {"max_new_tokens": config.max_tokens}
            if config.temperature > 0:
                options.update(
                    do_sample=True, temperature=config.temperature, top_p=config.top_p, top_k=0
                )
            else:
                options["do_sample"] = False
            criteria: list[Any] = [] if cancel is None else [StopOnCancel(cancel, self._torch)]
            if config.stop:
                criteria.append(_StopOnText(tokenizer, prompt_len, config.stop, self._torch))
            if self.progress is not None:
                criteria.append(
                    ProgressReporter(
                        self.progress,
                        prompt_len=prompt_len,
                        max_tokens=config.max_tokens,
                        torch=self._torch,
                    )
                )
            if criteria:
                options["stopping_criteria"] = criteria
            processors: list[Any] = []
            if config.repetition_penalty is not None:
                processors.append(ReplyRepetitionPenalty(prompt_len, config.repetition_penalty))
            constraint = self._grammar_logits(request, tokenizer, prompt_len)
            if constraint is not None:
                processors.append(constraint)
            if processors:
                options["logits_processor"] = processors
            if getattr(model.generation_config, "pad_token_id", None) is None:
                pad = tokenizer.pad_token_id
                options["pad_token_id"] = tokenizer.eos_token_id if pad is None else pad
            try:
                with (
                    self._torch.inference_mode(),
                    self._seeded(config.seed),
                    torch_threads(self._torch, self.threads),
                ):
                    output = model.generate(**inputs, **options)
            except Exception as exc:  # torch / transformers raise many types
                raise run_error(self._torch, self.name, self._device, exc, "generation") from exc
            if cancel is not None and cancel.is_set():  # a cut reply is no reply
                raise GenerationCancelled(f"{self.name}: generation cancelled")
            new_ids = output[0][prompt_len:].tolist()
            decoded = tokenizer.decode(new_ids, skip_special_tokens=True)  # under the lock too
        text, stopped = cut_at_stop(decoded, config.stop)
        eos = self._eos_ids(model, tokenizer)
        ended = stopped or bool(new_ids and new_ids[-1] in eos) or len(new_ids) < config.max_tokens
        raw: dict[str, Any] = {"prompt_format": "chat_template" if templated else "plain"}
        if constraint is not None and request.grammar is not None:
            raw.update(
                grammar=request.grammar.name,
                grammar_mode="logits",
                grammar_s=round(constraint.seconds, 6),
                grammar_steered=constraint.steered,
                **constraint.updates,
            )
        return Generation(
            text=text.strip(),
            model=self.name.split("/", 1)[-1],
            finish_reason="stop" if ended else "length",
            usage=Usage(prompt_tokens=prompt_len, completion_tokens=len(new_ids)),
            latency_s=time.perf_counter() - started,
            raw=raw,
        )

    def _grammar_logits(
        self, request: ChatRequest, tokenizer: Any, prompt_len: int
    ) -> GrammarLogits | None:
        """The logits processor of ``request``'s grammar (None without one)."""
        if request.grammar is None:
            return None
        ll_tokenizer = hf_tokenizer(tokenizer)
        matcher = compile_grammar(ll_tokenizer, request.grammar)
        vocab = ll_tokenizer.vocab_size
        steer = None
        if request.grammar.steering is not None:
            eos = sorted(self._eos_ids(self._model, tokenizer))
            steer = steer_tokens(tokenizer, request.grammar.steering, vocab, eos)
        return GrammarLogits(matcher, prompt_len, vocab, self._torch, steer)

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

    @contextlib.contextmanager
    def _seeded(self, seed: int | None) -> Iterator[None]:
        """Seed torch for one generation, restoring the global CPU RNG state afterwards."""
        if seed is None:
            yield
            return
        devices = [self._device] if self._device.startswith("cuda") else []
        with self._torch.random.fork_rng(devices=devices):
            self._torch.manual_seed(seed)
            yield

    @staticmethod
    def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
        eos = getattr(model.generation_config, "eos_token_id", None)
        ids = set(eos if isinstance(eos, list) else [eos])
        ids.add(tokenizer.eos_token_id)
        return {i for i in ids if i is not None}
