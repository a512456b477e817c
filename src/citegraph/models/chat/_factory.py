"""Build a chat model from a ``provider/model`` spec (CLI flags and run configs use these).

============================  ===========================================================
spec                          model
============================  ===========================================================
``openai/<model>``            :class:`OpenAICompatibleChat` on api.openai.com (key in
                              ``OPENAI_API_KEY``, required)
``vllm/<model>``              the same on a vLLM server (default ``localhost:8000``; key, if
                              any, in ``VLLM_API_KEY``)
``ollama/<model>``            the same on Ollama (default ``localhost:11434``; optional key
                              in ``OLLAMA_API_KEY``)
``llamacpp/<model>``          the same on a llama.cpp server (default ``localhost:8080``;
                              optional key in ``LLAMACPP_API_KEY``)
``hf/<hub id or path>``       a local transformers model (``HFChat``); a ``.gguf`` path loads
                              that GGUF file from its folder
``local``                     the bundled offline demo model (``local_chat()``)
``mock`` / ``mock/<name>``    :class:`MockChat` answering ``mock_outputs``
============================  ===========================================================

Model names may themselves contain ``/`` (``vllm/meta-llama/Llama-3.1-8B-Instruct``).
``openai/<model>`` with a ``base_url`` talks to any OpenAI-compatible server; on another host
than api.openai.com it reads ``OPENAI_COMPATIBLE_API_KEY`` (optional), never ``OPENAI_API_KEY``;
``api_key_env`` names another variable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from citegraph.errors import ConfigError
from citegraph.io import Deadlines, SQLiteCache
from citegraph.models._options import ModelOptions
from citegraph.models._providers import custom_builder, parse_spec
from citegraph.models._spec import ModelSpec
from citegraph.models.chat._cache import CachedChatModel
from citegraph.models.chat._dry_run import DryRunChat, prompt_counter
from citegraph.models.chat._mock import MockChat
from citegraph.models.chat._openai import OpenAICompatibleChat
from citegraph.models.chat._types import ChatModel, ChatRequest, GenerateConfig
from citegraph.models.chat._usage import dry_run_active
from citegraph.models.server import PRESETS

__all__ = ["PROVIDERS", "chat_model", "default_generate_config", "parse_model_spec"]

#: Every provider a spec may name (the ``chat`` role of :data:`~citegraph.models.ROLES`).
PROVIDERS: tuple[str, ...] = ("openai", "vllm", "ollama", "llamacpp", "hf", "local", "mock")

_OPENAI_FAMILY = frozenset(PRESETS)


def parse_model_spec(spec: str, parsed: ModelSpec | None = None) -> tuple[str, str]:
    """Split a model spec into ``(provider, model)``.

    Args:
        spec: ``provider/model`` (see the module table), ``local`` or ``mock``.

    Returns:
        The provider and the model (``""`` for ``local``, ``"mock"`` for a bare ``mock``).

    Raises:
        ConfigError: Unknown provider, or a provider that needs a model and has none.

    Example:
        >>> parse_model_spec("vllm/meta-llama/Llama-3.1-8B-Instruct")
        ('vllm', 'meta-llama/Llama-3.1-8B-Instruct')
        >>> parse_model_spec("mock")
        ('mock', 'mock')
    """
    parsed = parsed or parse_spec("chat", spec)
    if parsed.provider == "mock":
        return "mock", parsed.model or "mock"
    return parsed.provider, parsed.model


def _hf_model(model: str, device: str | None, dtype: Any, max_batch: int | None) -> ChatModel:
    from citegraph.models.chat._hf import HFChat  # written separately; imported only when used

    placed = {"device": device, "dtype": dtype, "max_batch": max_batch}
    if model.lower().endswith(".gguf"):
        path = Path(model)
        return HFChat.load(str(path.parent), gguf_file=path.name, **placed)
    return HFChat.load(model, gguf_file=None, **placed)


def _local_model(device: str | None, dtype: Any, max_batch: int | None) -> ChatModel:
    from citegraph.models.chat._local import local_chat

    return local_chat(device=device, dtype=dtype, max_batch=max_batch)


def default_generate_config(
    spec: str, overrides: Mapping[str, object] | None = None
) -> GenerateConfig:
    """The sampling settings a one-off call to ``spec`` should use unless told otherwise.

    ``local`` gets the embedded model's defaults (short answers, stop sequences, a repetition
    penalty: see :data:`~citegraph.models.chat._local.LOCAL_GENERATE_DEFAULTS`); every other
    spec gets :class:`GenerateConfig`'s. ``overrides`` that are not None win.

    Example:
        >>> default_generate_config("mock", {"temperature": 0}).max_tokens
        512
        >>> default_generate_config("local").max_tokens
        128
    """
    provider, _ = parse_model_spec(spec)
    if provider == "local":
        from citegraph.models.chat._local import local_generate_config

        return local_generate_config(overrides)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    return GenerateConfig.model_validate(given)


def chat_model(
    spec: str,
    options: ModelOptions | None = None,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    total_timeout: float | None = None,
    cache: SQLiteCache | str | Path | None = None,
    mock_outputs: Sequence[str] | Callable[[ChatRequest], str] | str | None = None,
    device: str | None = None,
    dtype: Any = None,
) -> ChatModel:
    """Build the chat model ``spec`` names (see the module table).

    Args:
        spec: ``provider/model``, ``local`` or ``mock[/<name>]``.
        options: Where a local model runs and how a server is reached (device, dtype, base
            URL, key variable, concurrency, retries, deadlines, response cache); the keyword
            options below of the same names win over it.
        base_url: Server URL overriding the provider's default (OpenAI-compatible providers).
        api_key_env: Environment variable holding the API key (OpenAI-compatible providers);
            ``None``: the provider's own (``OPENAI_API_KEY``, ``VLLM_API_KEY``,
            ``OLLAMA_API_KEY``, ``LLAMACPP_API_KEY``), so a key is only sent where it belongs.
        concurrency: Most requests in flight to the server (default: the provider's).
        timeout: Seconds one HTTP attempt may take as a whole, answer included (``None``: the
            ``options``' deadlines, else 120); a server's models only.
        max_retries: Retries of 429, 5xx, connection errors and timeouts.
        total_timeout: Seconds one call may take, every attempt and wait included (``None``:
            ``options``' deadlines, else no bound); a server's models only.
        cache: A response cache, or a path for one (namespace ``chat``); ``None``: no cache.
        mock_outputs: The scripted outputs of a ``mock`` model (see :class:`MockChat`).
        device: Where a local model (``hf/...``, ``local``) runs: ``"auto"`` (a GPU when
            present), ``"cpu"``, ``"cuda[:i]"``, ``"mps"``; a server's models ignore it.
        dtype: A local model's dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a
            dtype name; a server's models ignore it.

    Returns:
        An object satisfying :class:`~citegraph.models.ChatModel`, wrapped in
        :class:`CachedChatModel` when ``cache`` is given.

    Raises:
        ConfigError: Unknown provider, missing model name, missing OpenAI key, or an option that
            does not apply to the provider.
        MissingDependency: The provider's optional packages are not installed.

    Example:
        >>> model = chat_model("mock", mock_outputs=["Paris [1]."])
        >>> model.name
        'mock/mock'
    """
    parsed = parse_spec("chat", spec)
    provider, model = parse_model_spec(spec, parsed)
    given = options or ModelOptions()
    explicit = {
        "base_url": base_url,
        "api_key_env": api_key_env,
        "concurrency": concurrency,
        "max_retries": max_retries,
        "cache": cache,
        "device": device,
        "dtype": dtype,
    }
    deadlines = Deadlines(
        timeout if timeout is not None else given.deadlines.timeout,
        total_timeout if total_timeout is not None else given.deadlines.total_timeout,
        given.deadlines.max_response_bytes,
    )
    chosen = {k: v for k, v in explicit.items() if v is not None}
    given = dataclasses.replace(given, deadlines=deadlines, **chosen)  # the keywords win
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        built = {"base_url": given.base_url, "cache": given.cache, **given.placement()}
        return cast(ChatModel, build(parsed, built))
    if provider not in _OPENAI_FAMILY and given.base_url is not None:
        raise ConfigError(f"base_url applies to {sorted(_OPENAI_FAMILY)} specs, not {spec!r}")
    if provider not in _OPENAI_FAMILY and given.api_key_env is not None:
        raise ConfigError(f"api_key_env applies to {sorted(_OPENAI_FAMILY)} specs, not {spec!r}")
    if provider != "mock" and mock_outputs is not None:
        raise ConfigError(f"mock_outputs applies to 'mock' specs only, not {spec!r}")
    if dry_run_active():  # a dry run: count the prompts, call and load nothing
        count, counted = prompt_counter(provider, model)
        dry = DryRunChat(spec.strip(), given.base_url or provider, count=count, counted=counted)
        if provider == "local":  # the embedded model's own defaults (its max_tokens)
            from citegraph.models.chat._local import local_generate_config

            dry.default_config = local_generate_config()
        return dry
    chat: ChatModel
    if provider in _OPENAI_FAMILY:
        chat = OpenAICompatibleChat(model, provider=provider, **given.endpoint().client_options())
    elif provider == "hf":
        chat = _hf_model(model, given.device, given.dtype, given.max_batch)
    elif provider == "local":
        chat = _local_model(given.device, given.dtype, given.max_batch)
    else:
        chat = MockChat(mock_outputs, name=f"mock/{model}")
    if given.cache is None:
        return chat
    if isinstance(given.cache, SQLiteCache):
        return CachedChatModel(chat, given.cache)
    return CachedChatModel(chat, SQLiteCache(given.cache, namespace="chat"), owns_cache=True)
