"""Shared model-server machinery: the HTTP client, body caps, provider presets and scored items."""

from citegraph.models.server._body import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_REPLY_CHARS,
    reply_too_long,
)
from citegraph.models.server._endpoint import ENDPOINT_OPTIONS, Endpoint
from citegraph.models.server._http import (
    OPENAI_URL,
    PRESETS,
    SCORE_PRESETS,
    ProviderPreset,
    ServerClient,
    server_root,
)
from citegraph.models.server._items import (
    Refused,
    ServerItems,
    default_response_cache,
)
from citegraph.models.server._served import ServedModel

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ENDPOINT_OPTIONS",
    "MAX_REPLY_CHARS",
    "OPENAI_URL",
    "PRESETS",
    "SCORE_PRESETS",
    "Endpoint",
    "ProviderPreset",
    "Refused",
    "ServedModel",
    "ServerClient",
    "ServerItems",
    "default_response_cache",
    "reply_too_long",
    "server_root",
]
