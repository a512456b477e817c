"""The chat-generation protocol every provider implements, and its request/response records.

A provider is addressed as ``provider/model`` (``openai/gpt-4o-mini``, ``vllm/meta-llama/...``,
``hf/HuggingFaceTB/SmolLM2-135M-Instruct``, ``local``, ``mock``); :func:`chat_model` builds one.
Every provider takes the same :class:`ChatRequest` and returns a :class:`Generation`, so runs,
caches and tests never depend on which provider answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from citegraph.models.grammar import Grammar

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    """One message of a chat prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str


class GenerateConfig(BaseModel):
    """Sampling parameters of one request. Written into every run and every cache key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(
        default=0.5, ge=0.0, le=2.0, description="Sampling temperature (0: greedy)."
    )
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(default=512, ge=1, description="Most tokens to generate.")
    seed: int | None = Field(
        default=0,
        description="Sampling seed, sent to servers that accept one and used by local models.",
    )
    stop: tuple[str, ...] = Field(default=(), description="Stop sequences.")
    repetition_penalty: float | None = Field(
        default=None,
        gt=0.0,
        description="Divide (CTRL-style) the logits of tokens the reply already holds by this "
        "(> 1 discourages repeats; the prompt's tokens are not penalised, so copying KG ids into "
        "citations stays free). Local models (hf/, local) apply it; servers ignore it. None: "
        "off, and left out of cache keys so keys of requests without it are unchanged.",
    )


class GenerationProgress(NamedTuple):
    """How far a local generation has got, as passed to a :data:`ProgressCallback`."""

    tokens: int
    """Tokens generated so far."""
    max_tokens: int
    """The request's ``max_tokens``."""
    prompt_tokens: int
    """Tokens of the prompt."""
    prefill_s: float
    """Seconds spent on the prompt before the first new token."""
    elapsed_s: float
    """Seconds since generation started (prefill included)."""

    @property
    def decode_tokens_per_s(self) -> float | None:
        """New tokens per second after the prompt (None before the second token)."""
        decode_s = self.elapsed_s - self.prefill_s
        return (self.tokens - 1) / decode_s if self.tokens > 1 and decode_s > 0 else None


#: Called from the generating thread after each new token (keep it quick and thread-safe).
ProgressCallback = Callable[[GenerationProgress], None]


class ChatRequest(BaseModel):
    """A full request: what a cache key is computed from (with the endpoint and model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[ChatMessage, ...]
    config: GenerateConfig = GenerateConfig()
    response_format: dict[str, Any] | None = Field(
        default=None,
        description="OpenAI ``response_format`` (e.g. a ``json_schema`` for structured output). "
        "Only OpenAI-compatible servers receive it; local and mock models ignore it. Part of the "
        "cache key only when set, so keys of requests without it are unchanged.",
    )
    grammar: Grammar | None = Field(
        default=None,
        description="A constraint on the reply, applied as the model's ``grammar_mode`` says "
        "(see :mod:`citegraph.models.grammar`). Part of the cache key (its digest) only "
        "when set.",
    )

    @classmethod
    def of(
        cls,
        messages: Sequence[ChatMessage | dict[str, str]],
        config: GenerateConfig | None = None,
        *,
        response_format: dict[str, Any] | None = None,
        grammar: Grammar | None = None,
    ) -> ChatRequest:
        """Build from messages given as records or ``{"role", "content"}`` dicts."""
        msgs = tuple(
            m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages
        )
        return cls(
            messages=msgs,
            config=config or GenerateConfig(),
            response_format=response_format,
            grammar=grammar,
        )


class Usage(BaseModel):
    """Token counts, when the provider reports them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Generation(BaseModel):
    """What a model returned for one request."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The generated text ('' when the model returned nothing).")
    model: str = Field(description="The model that answered, as the provider names it.")
    finish_reason: str | None = Field(
        default=None, description="'stop', 'length', ... as the provider reports it."
    )
    usage: Usage = Usage()
    cached: bool = Field(default=False, description="Served from the response cache.")
    attempts: int = Field(default=1, ge=1, description="HTTP attempts made (1 + retries).")
    latency_s: float | None = Field(default=None, description="Wall time of the call, seconds.")
    raw: dict[str, Any] | None = Field(
        default=None, description="Provider-specific extras worth keeping (small)."
    )


@runtime_checkable
class ChatModel(Protocol):
    """A chat-generation model behind one async call.

    ``name`` is ``provider/model`` and identifies the model in run records. ``endpoint`` is the
    server URL or local path (part of the cache key). Implementations bound their own concurrency,
    retry transient failures and raise :class:`citegraph.errors.EndpointError` subclasses or
    :class:`citegraph.errors.ModelError` when they give up.
    """

    name: str
    endpoint: str

    async def generate(self, request: ChatRequest) -> Generation:
        """Generate one reply for ``request``."""
        ...

    async def aclose(self) -> None:
        """Release connections, threads and model weights."""
        ...


def generate_config_for(
    model: object, overrides: Mapping[str, object] | None = None
) -> GenerateConfig:
    """The sampling settings ``model`` answers with unless told otherwise, then ``overrides``
    (those that are not None) on top.

    A model's defaults are its ``default_config`` attribute where it has one (the embedded
    ``local`` model built by ``chat_model("local")`` carries
    :data:`~citegraph.models.LOCAL_GENERATE_DEFAULTS`), else :class:`GenerateConfig`'s. The CLI
    (``citegraph ask``, ``demo``) and the Python API (:func:`citegraph.kalma.ask` with no
    ``config``) both read them here, so a script gets what the command line gets.

    Example:
        >>> from citegraph.models import MockChat
        >>> generate_config_for(MockChat(["x"]), {"max_tokens": 64}).max_tokens
        64
    """
    base = getattr(model, "default_config", None)
    values = base.model_dump() if isinstance(base, GenerateConfig) else {}
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return GenerateConfig.model_validate(values)
