"""A model server's base URL is checked when the client is made (issue 37, item 4): a malformed
one is a ConfigError with the reason and the secret masked, for chat models and scorers alike,
before any request, file or record can show it."""

from __future__ import annotations

from typing import Any

import pytest

from citegraph.errors import ConfigError
from citegraph.models import chat_model, nli_model, reranker_model

SECRET = "S3CRETPASS"
BAD = [
    "alice:S3CRETPASS@127.0.0.1:8000/v1",
    "http:/alice:S3CRETPASS@127.0.0.1:8000/v1",
    "http://alice:S3CRETPASS@[::1/v1",
    "http://alice:S3CRETPASS@127.0.0.1:P/v1",
    "http://127.0.0.1:8000/v1 x?api-key=S3CRETPASS",
    "http://127.0.0.1:8000/v1#api-key=S3CRETPASS",
]
MAKERS: dict[str, Any] = {
    "chat": lambda url: chat_model("vllm/m", base_url=url),
    "nli": lambda url: nli_model("vllm/m", base_url=url),
    "reranker": lambda url: reranker_model("tei/m", base_url=url),
}


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("url", BAD)
def test_a_malformed_base_url_is_refused_when_the_model_is_made(maker: str, url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        MAKERS[maker](url)
    message = str(caught.value)
    assert "base URL" in message
    assert SECRET not in message and "alice" not in message
