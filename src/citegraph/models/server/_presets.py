"""The defaults of each model-server family: URL, concurrency and the API key's variable.

:class:`~citegraph.models.server._http.ServerClient` reads them (and re-exports them); a
``--base-url`` overrides the URL.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COMPATIBLE_KEY_ENV",
    "OPENAI_HOST",
    "OPENAI_URL",
    "PRESETS",
    "SCORE_PRESETS",
    "ProviderPreset",
]

OPENAI_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
"""Where ``openai/<model>`` with a ``base_url`` on another host than ``api.openai.com`` reads its
key (``OPENAI_API_KEY`` is sent to OpenAI only)."""


@dataclass(frozen=True)
class ProviderPreset:
    """Defaults of one server family.

    Attributes:
        base_url: The server's usual URL (including ``/v1`` for OpenAI-compatible servers).
        concurrency: Default number of requests in flight to one endpoint.
        key_required: Whether a key must be set when the default URL is used.
        api_key_env: The environment variable the API key is read from. Each family has its
            own, so that a key meant for one service is never sent to another.
    """

    base_url: str
    concurrency: int
    key_required: bool
    api_key_env: str


#: Chat provider name -> defaults. ``--base-url`` overrides the URL.
PRESETS: dict[str, ProviderPreset] = {
    "openai": ProviderPreset(
        OPENAI_URL, concurrency=8, key_required=True, api_key_env="OPENAI_API_KEY"
    ),
    "vllm": ProviderPreset(
        "http://localhost:8000/v1", concurrency=4, key_required=False, api_key_env="VLLM_API_KEY"
    ),
    "ollama": ProviderPreset(
        "http://localhost:11434/v1",
        concurrency=4,
        key_required=False,
        api_key_env="OLLAMA_API_KEY",
    ),
    "llamacpp": ProviderPreset(
        "http://localhost:8080/v1",
        concurrency=1,
        key_required=False,
        api_key_env="LLAMACPP_API_KEY",
    ),
}

#: The presets of the scoring servers: the chat presets and text-embeddings-inference (``tei``,
#: whose routes have no ``/v1``; key, if the server was started with one, in ``TEI_API_KEY``).
SCORE_PRESETS: dict[str, ProviderPreset] = {
    **PRESETS,
    "tei": ProviderPreset(
        "http://localhost:8080", concurrency=4, key_required=False, api_key_env="TEI_API_KEY"
    ),
}
