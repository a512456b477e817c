"""The dry-run chat model: records each request's prompt tokens and answers nothing.

Under :func:`~citegraph.models.dry_running`, :func:`~citegraph.models.chat_model` builds a
:class:`DryRunChat` instead of the model a spec names: it counts each request's prompt tokens
(a local model's own tokenizer, else an estimate, characters / 4, named as such in
:data:`~citegraph.models.DRY_RUN_TOKENS`) and answers ``""`` without loading weights or calling a
server. Kept apart from :mod:`._chat_usage`, which every provider imports, because counting with
a local tokenizer needs the local providers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citegraph.models.chat._types import (
    ChatMessage,
    ChatRequest,
    GenerateConfig,
    Generation,
    Usage,
)
from citegraph.models.chat._usage import DRY_RUN_TOKENS, estimate_tokens, report_usage

__all__ = ["DryRunChat", "PromptCounter", "prompt_counter"]

PromptCounter = Callable[[Sequence[ChatMessage]], int]
"""Counts the prompt tokens of a request's messages."""


def _estimate(messages: Sequence[ChatMessage]) -> int:
    return estimate_tokens("\n".join(m.content for m in messages))


def _tokenizer_counter(tokenizer: Any) -> PromptCounter:
    """Prompt tokens as a local model counts them: its chat template with the generation
    prompt (or the plain format when it has none), encoded without added specials."""
    from citegraph.models.chat._hf import format_plain  # imported when a local spec is dry-run

    def count(messages: Sequence[ChatMessage]) -> int:
        if getattr(tokenizer, "chat_template", None):
            dicts = [{"role": m.role, "content": m.content} for m in messages]
            text = tokenizer.apply_chat_template(dicts, add_generation_prompt=True, tokenize=False)
        else:
            text = format_plain(messages)
        return len(tokenizer(str(text), add_special_tokens=False)["input_ids"])

    return count


def prompt_counter(provider: str, model: str) -> tuple[PromptCounter, str]:
    """How a dry run counts the prompt tokens of ``provider/model``, and that method's label:
    a local model's (``local``, ``hf/...``) own tokenizer, loaded without its weights; else
    (or when the tokenizer cannot be loaded, saying why) :data:`DRY_RUN_TOKENS`."""
    if provider not in ("local", "hf"):
        return _estimate, DRY_RUN_TOKENS
    try:
        from transformers import AutoTokenizer

        if provider == "local":
            from citegraph.models.chat._local import converted_model_dir

            tokenizer = AutoTokenizer.from_pretrained(str(converted_model_dir()))
        elif model.lower().endswith(".gguf"):
            path = Path(model)
            tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        else:
            tokenizer = AutoTokenizer.from_pretrained(model)
    except Exception as exc:  # any failure falls back to the named estimate
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return _estimate, f"{DRY_RUN_TOKENS} (the model's tokenizer did not load: {why})"
    name = "local" if provider == "local" else f"hf/{model}"
    return _tokenizer_counter(tokenizer), f"the tokenizer of {name} (its chat template)"


class DryRunChat:
    """A chat model that records requests, counts their prompt tokens (estimated) and answers
    ``""``: no server is called and no weights are loaded.

    Args:
        name: The spec of the model it stands for (``openai/gpt-4o-mini``).
        endpoint: Where that model would have been reached (informational).
    """

    #: Requests may carry grammars (the dry run cannot tell whether the real model can apply them).
    grammar_mode = "logits"

    def __init__(
        self,
        name: str,
        endpoint: str = "dry-run",
        *,
        count: PromptCounter | None = None,
        counted: str = DRY_RUN_TOKENS,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.count = count or _estimate
        self.counted = counted
        #: The stood-in model's sampling defaults (``local``'s; see ``generate_config_for``).
        self.default_config: GenerateConfig | None = None
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> Generation:
        """Record ``request`` and answer ``""`` (finish reason ``dry-run``)."""
        self.requests.append(request)
        generation = Generation(
            text="",
            model=self.name,
            finish_reason="dry-run",
            usage=Usage(prompt_tokens=self.count(request.messages), completion_tokens=0),
            raw={"max_tokens": request.config.max_tokens, "counted": self.counted},
        )
        report_usage(self, generation)
        return generation

    async def aclose(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"DryRunChat({self.name!r}, requests={len(self.requests)})"
