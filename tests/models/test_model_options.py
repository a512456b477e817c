"""One options object for every factory: local models take the placement, served ones the
endpoint (never a device), and a run's runtime makes it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from citegraph.errors import ConfigError
from citegraph.io import Deadlines
from citegraph.models import Endpoint, ModelOptions, causal_lm_scorer, nli_model, reranker_model
from citegraph.models.lm import ServerLMScorer
from citegraph.models.nli import ServerNLI, ServerNLI3
from citegraph.models.rerank import ServerReranker
from citegraph.runs import Runtime


def test_a_served_model_gets_the_endpoint_and_a_local_one_the_placement(tmp_path: Path) -> None:
    options = ModelOptions(
        device="cpu",
        dtype="float32",
        concurrency=3,
        max_retries=1,
        deadlines=Deadlines(timeout=7.0, total_timeout=30.0, max_response_bytes=1024),
        cache=tmp_path / "responses.sqlite",
    ).serving("http://nli.example:8002/v1")
    served = options.for_backend("vllm/m", served=True)
    assert served == {
        "base_url": "http://nli.example:8002/v1",
        "api_key_env": None,
        "concurrency": 3,
        "timeout": 7.0,
        "total_timeout": 30.0,
        "max_response_bytes": 1024,
        "max_retries": 1,
        "cache": tmp_path / "responses.sqlite",
    }
    with pytest.raises(ConfigError, match="a base URL applies to a served model"):
        options.for_backend("hf/x", served=False)
    assert ModelOptions(device="cpu", dtype="float32").for_backend("hf/x", served=False) == {
        "device": "cpu",
        "dtype": "float32",
    }


@pytest.mark.parametrize("cls", [ServerNLI, ServerNLI3, ServerReranker, ServerLMScorer])
def test_server_models_take_an_endpoint_and_no_device(cls: type) -> None:
    params = inspect.signature(cls).parameters
    assert "endpoint" in params
    assert not {"device", "dtype", "base_url", "cache"} & set(params)


def test_the_factories_reach_a_server_with_the_options(tmp_path: Path) -> None:
    options = ModelOptions(
        device="cuda:3", deadlines=Deadlines(timeout=5.0), max_retries=0
    ).serving("http://127.0.0.1:9/v1")
    nli = nli_model("vllm/nli-model", options, batch_size=4)
    assert isinstance(nli, ServerNLI) and nli.name == "vllm/nli-model"
    client = nli._items.client
    assert (client.base_url, client.timeout, client.max_retries) == (
        "http://127.0.0.1:9/v1",
        5.0,
        0,
    )
    assert nli._items.batch_size == 4
    reranker = reranker_model("tei/rr", options)
    assert isinstance(reranker, ServerReranker)
    lm = causal_lm_scorer("vllm/lm", options)
    assert isinstance(lm, ServerLMScorer) and lm.endpoint == "http://127.0.0.1:9/v1"
    # the CUDA device was for local models: no server model took it, and none failed on it


def test_a_runs_runtime_makes_the_options_with_its_deadlines_and_cache() -> None:
    runtime = Runtime(
        device="cpu", dtype="float32", timeout=9.0, total_timeout=60.0, max_response_mb=2
    )
    options = runtime.model_options()
    assert (options.device, options.dtype) == ("cpu", "float32")
    assert options.deadlines == Deadlines(9.0, 60.0, 2 * 2**20)
    assert options.cache is not None and str(options.cache).endswith("responses.sqlite")
    assert Runtime(cache=False).model_options().cache is None
    assert Endpoint().max_retries == options.endpoint().max_retries == 5


@pytest.mark.needs("torch", "transformers")
def test_max_batch_reaches_a_local_chat_model(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _tiny_models import build_tiny_causal_lm
    from citegraph.models import chat_model
    from citegraph.models.chat import HFChat

    path = build_tiny_causal_lm(tmp_path / "lm")
    runtime = Runtime(device="cpu", max_batch=3, cache=False)
    assert runtime.record()["max_batch"] == 3
    chat = chat_model(f"hf/{path}", runtime.model_options())
    assert isinstance(chat, HFChat) and chat.max_batch == 3
    alone = chat_model(f"hf/{path}", ModelOptions(device="cpu", max_batch=1))
    assert isinstance(alone, HFChat) and alone.max_batch == 1
    default = chat_model(f"hf/{path}", ModelOptions(device="cpu"))
    assert isinstance(default, HFChat) and default.max_batch == 8  # the CPU default
