"""Build an attribution evaluator from a spec string (``caqa judge --evaluator``, run configs).

==========================  ==================================================================
spec                        evaluator
==========================  ==================================================================
``<chat spec>``             :class:`LLMJudge` on :func:`~citegraph.models.chat_model` (``mock``,
                            ``local``, ``openai/<model>``, ``vllm/<model>``, ``hf/<path>``...)
                            with ``prompt`` (default ``zero-shot``)
``attrscore/<chat spec>``   :class:`AttrScoreJudge` (always the ``attrscore`` prompt)
``nli/<nli spec>``          :class:`NLIJudge` on :func:`~citegraph.models.nli_model`
                            (``nli/lexical``, ``nli/hf/<path>``, ``nli/t5/<path>``...)
``cls/<path>``              ``ClassifierJudge``: a fine-tuned sequence classifier
                            (``caqa finetune`` output)
==========================  ==================================================================

One set of options drives every spec, so a run configuration can switch evaluators freely:
options that do not apply to the chosen backend are ignored (``temperature`` for an NLI model,
``direction`` for a chat model), except the ones that can only have been set on purpose for a
chat model (``structured``, ``base_url``, ``api_key_env``, ``mock_outputs``, constrained
``replies``), which raise. ``replies="auto"`` (the default) constrains the replies of ``local``
and ``hf/...`` chat judges to a label word and leaves the others free.
With ``extraction="reference"`` an NLI evaluator follows the authors' code too: "0" (not
entailed) is Irrelevant, on the four-way label set.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citegraph.caqa.judge._evaluator import Evaluator
from citegraph.caqa.judge._labels import ExtractionMode
from citegraph.caqa.judge._llm import AttrScoreJudge, LLMJudge
from citegraph.caqa.judge._nli import NLIJudge
from citegraph.caqa.judge._prompts import judge_prompt
from citegraph.caqa.judge._rules import CaqaRules, NotEntailedAs
from citegraph.errors import ConfigError
from citegraph.io import SQLiteCache
from citegraph.models import (
    SERVED_PROVIDERS,
    ChatModel,
    ChatRequest,
    ModelOptions,
    NLIOptions,
    chat_model,
    default_response_cache,
    nli_model,
    parse_model_spec,
    parse_spec,
)
from citegraph.models.chat import JudgeReplies, resolve_judge_replies

__all__ = ["evaluator"]


def _classifier_judge() -> Any:
    """``ClassifierJudge``, imported only when used (it needs torch and transformers)."""
    module = "citegraph.caqa.finetune._classifier_judge"
    try:
        return importlib.import_module(module).ClassifierJudge
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise ConfigError(f"'cls/' evaluators need {module}, which is not installed") from exc


def _cache_for(
    spec: str, cache: bool | str | Path | SQLiteCache | None
) -> str | Path | SQLiteCache | None:
    if cache is True:
        provider, _ = parse_model_spec(spec)
        # a scripted mock answers what its script says; a shared cache would replay old scripts
        return None if provider == "mock" else default_response_cache()
    if cache is False:
        return None
    return cache


def evaluator(
    spec: str,
    options: ModelOptions | None = None,
    *,
    prompt: str | None = None,
    extraction: ExtractionMode | CaqaRules = "paper",
    temperature: float = 0.0,
    seed: int | None = 0,
    max_tokens: int = 512,
    structured: bool = False,
    concurrency: int | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache: bool | str | Path | SQLiteCache | None = None,
    timeout: float | None = None,
    max_retries: int = 5,
    mock_outputs: Sequence[str] | Callable[[ChatRequest], str] | str | None = None,
    direction: str = "paper",
    not_entailed_as: NotEntailedAs | None = None,
    batch_size: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    replies: JudgeReplies = "auto",
) -> Evaluator:
    """Build the evaluator ``spec`` names (see the module table).

    Args:
        spec: ``<chat spec>``, ``attrscore/<chat spec>``, ``nli/<nli spec>`` or ``cls/<path>``.
        options: Where a local model runs and a server's deadlines (its base URL and cache
            come from ``base_url`` and ``cache`` below, and ``device`` / ``dtype`` win).
        prompt: Judge prompt of a chat evaluator (default ``zero-shot``); ignored elsewhere.
        extraction: ``"paper"`` or ``"reference"`` label extraction (chat), or the
            :class:`~citegraph.caqa.CaqaRules` of one; for NLI, ``"reference"`` maps "not
            entailed" to Irrelevant as the authors' code does.
        temperature: Chat sampling temperature.
        seed: Chat sampling seed.
        max_tokens: Most tokens per chat reply.
        structured: Ask a chat server for JSON ``{"label": ...}`` (``response_format``).
        concurrency: Most chat requests in flight.
        base_url: OpenAI-compatible server URL (chat, or an NLI classifier behind vLLM).
        api_key_env: Environment variable holding the server's API key (chat).
        cache: Response cache of a chat model: ``True`` for the shared one
            (``$CITEGRAPH_CACHE/responses.sqlite``; never for ``mock``), a path or a
            :class:`~citegraph.io.SQLiteCache`; ``None``/``False``: none.
        timeout: Seconds per HTTP attempt (chat).
        max_retries: Retries of transient HTTP failures (chat).
        mock_outputs: Scripted replies of a ``mock`` chat model.
        direction: NLI premise/hypothesis direction (``"paper"`` or ``"evidence"``).
        not_entailed_as: NLI label of a not-entailed pair (``unsupported`` or ``irrelevant``).
        batch_size: Batch size of an NLI model or a classifier (default: the backend's).
        device: Where a local model (NLI, classifier, ``hf/`` or ``local`` chat) runs
            (default ``auto``: a GPU when present).
        dtype: A local model's dtype (default ``auto``: bf16 on a GPU that has it, fp32 on CPU).
        replies: A chat judge's replies: ``"free"``, ``"constrained"`` (one label word) or
            ``"auto"`` (constrained for ``local`` and ``hf/...``, free otherwise).

    Returns:
        An object satisfying :class:`~citegraph.caqa.Evaluator`.

    Raises:
        ConfigError: Unknown spec or prompt, a missing model, or a chat-only option given to a
            non-chat evaluator.
        MissingDependency: The backend's optional packages are not installed.

    Example:
        >>> evaluator("nli/lexical").name
        'nli:lexical:caqa-table11-autois-v1'
        >>> evaluator("mock", mock_outputs="Supportive", prompt="alpaca").name
        'llm:mock/mock:caqa-table11-other-v1'
    """
    spec = spec.strip()
    parsed = parse_spec("evaluator", spec)
    placed = dataclasses.replace(options or ModelOptions(), base_url=None, cache=None)
    device = device if device is not None else (None if options is None else placed.device)
    dtype = dtype if dtype is not None else (None if options is None else placed.dtype)
    wrapped = parsed.inner is None or parsed.inner.provider != parsed.provider
    prefix = f"{parsed.provider}/" if wrapped else None
    rest = parsed.model if wrapped else spec

    if prefix in ("nli/", "cls/"):
        served = parsed.inner is not None and parsed.inner.provider in SERVED_PROVIDERS
        chat_only = {
            "structured": structured,
            "base_url": None if served else base_url,
            "api_key_env": api_key_env,
            "mock_outputs": mock_outputs,
            "replies": replies if replies == "constrained" else None,
        }
        given = sorted(k for k, v in chat_only.items() if v not in (None, False))
        if given:
            raise ConfigError(f"option(s) {given} apply to chat evaluators, not {spec!r}")
        model_options: NLIOptions = {}
        if batch_size is not None:
            model_options["batch_size"] = batch_size
        if device is not None:
            model_options["device"] = device
        if dtype is not None:
            model_options["dtype"] = dtype
        if prefix == "cls/":
            judge: Evaluator = _classifier_judge()(rest, **model_options)
            return judge
        not_entailed_as = not_entailed_as or CaqaRules.for_mode(extraction).nli_not_entailed
        if served:  # an NLI classifier behind vLLM: its URL and the response cache
            model_options["base_url"] = base_url
            model_options["cache"] = _cache_for(rest, cache)
        return NLIJudge(
            nli_model(rest, placed, **model_options),
            direction=direction,
            label_set="four" if not_entailed_as == "irrelevant" else "binary",
            not_entailed_as=not_entailed_as,
        )

    chat_spec = rest if prefix == "attrscore/" else spec
    resolved = resolve_judge_replies(replies, chat_spec)
    # check the prompt before a model is built (hf/ loads weights)
    if prefix is None and judge_prompt(prompt or "zero-shot")["style"] not in ("chat", "alpaca"):
        raise ConfigError(f"judge prompt {prompt!r} is for NLI evaluators: use 'nli/<spec>'")
    model: ChatModel = chat_model(
        chat_spec,
        placed,
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries,
        cache=_cache_for(chat_spec, cache),
        mock_outputs=mock_outputs,
        device=device or "auto",
        dtype=dtype or "auto",
    )
    judge_type = AttrScoreJudge if prefix == "attrscore/" else LLMJudge
    return judge_type(
        model,
        prompt=None if judge_type.fixed_prompt else prompt,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        structured=structured,
        extraction=extraction,
        concurrency=concurrency,
        replies=resolved,
    )
