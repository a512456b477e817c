"""Served rerankers (vLLM /v1/rerank, TEI /rerank) and NLI cross-encoders (vLLM /classify)
against FakeOpenAIServer. The fake relevance is the share of query words in the document; the
fake NLI gives entailment 0.8 when every hypothesis word is in the premise, contradiction 0.7
when the hypothesis says "not", else neutral 0.6 (citegraph.testing._fake_scores)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ClientError, ConfigError, ModelError, ResponseFormatError
from citegraph.io import SQLiteCache
from citegraph.models import (
    ModelOptions,
    NLI3Model,
    NLIModel,
    NLIPair,
    NLIProbs,
    NLIVerdict,
    nli3_model,
    nli_model,
    reranker_model,
)
from citegraph.models.nli import ServerNLI3
from citegraph.testing import FakeOpenAIServer, FakeReply

PAIRS = [
    ("capital of France", "Paris is the capital of France"),  # 1.0
    ("capital of France", "France is large"),  # 1/3
    ("who wrote Hamlet", "Hamlet is a play"),  # 1/3
]
NLI_PAIRS = [
    NLIPair(premise="Ada was born in London", hypothesis="born in London"),  # entailment
    NLIPair(premise="Ada was born in London", hypothesis="not born"),  # contradiction
    NLIPair(premise="Ada was born in London", hypothesis="Ada wrote poems"),  # neutral
]


def test_vllm_rerank_requests_and_scores_in_input_order() -> None:
    with FakeOpenAIServer() as server:
        reranker = reranker_model("vllm/fake-reranker", base_url=server.base_url)
        scores = asyncio.run(reranker.score(PAIRS))
        bodies = server.requests
        paths = {r.path for r in server.received}
    assert scores == pytest.approx([1.0, 1 / 3, 1 / 3])
    assert paths == {"/v1/rerank"}
    assert sorted(bodies, key=lambda b: b["query"]) == [
        {
            "model": "fake-reranker",
            "query": "capital of France",
            "documents": ["Paris is the capital of France", "France is large"],
            "top_n": 2,
        },
        {
            "model": "fake-reranker",
            "query": "who wrote Hamlet",
            "documents": ["Hamlet is a play"],
            "top_n": 1,
        },
    ]
    assert reranker.name == "vllm/fake-reranker"


def test_tei_rerank_posts_to_the_server_root() -> None:
    with FakeOpenAIServer() as server:
        root = server.base_url.removesuffix("/v1")
        reranker = reranker_model("tei/fake-reranker", base_url=root, batch_size=1)
        scores = asyncio.run(reranker.score(PAIRS[:2]))
        bodies = sorted(server.requests, key=lambda b: b["texts"])
        paths = {r.path for r in server.received}
    assert scores == pytest.approx([1.0, 1 / 3])
    assert paths == {"/rerank"}
    assert bodies == [
        {"query": "capital of France", "texts": ["France is large"], "raw_scores": False},
        {
            "query": "capital of France",
            "texts": ["Paris is the capital of France"],
            "raw_scores": False,
        },
    ]


def test_rerank_cache_hit_costs_no_request(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "r.sqlite")
    with FakeOpenAIServer() as server:
        first = asyncio.run(
            reranker_model("vllm/r", base_url=server.base_url, cache=cache).score(PAIRS)
        )
        again = asyncio.run(
            reranker_model("vllm/r", base_url=server.base_url, cache=cache).score(PAIRS[::-1])
        )
        assert len(server.requests) == 2  # the first call's two queries only
    assert again == first[::-1]


def test_rerank_retries_429_with_retry_after() -> None:
    replies = [FakeReply(status=429, headers={"Retry-After": "0.1"})]
    with FakeOpenAIServer(lambda _b: replies.pop(0) if replies else "ok") as server:
        scores = asyncio.run(reranker_model("vllm/r", base_url=server.base_url).score(PAIRS[:1]))
        times = server.times
    assert scores == [1.0] and len(times) == 2 and times[1] - times[0] >= 0.09


def test_nli3_maps_the_server_labels_to_conner_order() -> None:
    # the fake model's classes: 0 contradiction, 1 entailment, 2 neutral
    with FakeOpenAIServer() as server:
        nli = nli3_model(
            "vllm/fake-nli",
            base_url=server.base_url,
            labels=("contradiction", "entailment", "neutral"),
        )
        assert isinstance(nli, NLI3Model)
        probs = asyncio.run(nli.probabilities(NLI_PAIRS))
        assert server.requests == [
            {
                "model": "fake-nli",
                "input": [
                    "Ada was born in London[SEP]born in London",
                    "Ada was born in London[SEP]not born",
                    "Ada was born in London[SEP]Ada wrote poems",
                ],
            }
        ]
        assert server.received[0].path == "/classify"
    assert probs == [
        NLIProbs(contradiction=0.1, neutral=0.1, entailment=0.8),
        NLIProbs(contradiction=0.7, neutral=0.2, entailment=0.1),
        NLIProbs(contradiction=0.3, neutral=0.6, entailment=0.1),
    ]
    assert [p.label_name for p in probs] == ["entailment", "contradiction", "neutral"]


def test_labels_read_from_the_model_folder(tmp_path: Path) -> None:
    folder = tmp_path / "nli-model"
    folder.mkdir()
    labels = {"0": "ENTAILMENT", "1": "Neutral", "2": "contradiction"}
    (folder / "config.json").write_text(json.dumps({"id2label": labels}), encoding="utf-8")
    with FakeOpenAIServer(labels=("entailment", "neutral", "contradiction")) as server:
        nli = nli_model(f"vllm/{folder}", base_url=server.base_url)
        assert isinstance(nli, NLIModel)
        verdicts = asyncio.run(nli.entails(NLI_PAIRS))
    name = f"vllm/{folder}"
    assert verdicts == [
        NLIVerdict(entailed=True, score=0.8, source=name),
        NLIVerdict(entailed=False, score=0.1, source=name),
        NLIVerdict(entailed=False, score=0.1, source=name),
    ]


def test_threshold_and_entailment_index() -> None:
    with FakeOpenAIServer() as server:
        nli = nli_model(
            "vllm/m", base_url=server.base_url, entailment_index=2, threshold=0.5
        )  # reads class 2 ("neutral" on the fake server) as entailment
        verdicts = asyncio.run(nli.entails(NLI_PAIRS))
    assert [v.entailed for v in verdicts] == [False, False, True]


def test_server_labels_that_disagree_fail_loudly() -> None:
    with FakeOpenAIServer(labels=("entailment", "neutral", "contradiction")) as server:
        nli = nli3_model(
            "vllm/m", base_url=server.base_url, labels=("contradiction", "entailment", "neutral")
        )
        with pytest.raises(ResponseFormatError, match="another model"):
            asyncio.run(nli.probabilities(NLI_PAIRS[:1]))


def test_unreadable_labels_say_how_to_give_them() -> None:
    nli = nli3_model("vllm/no-such-local-model-folder")
    assert isinstance(nli, ServerNLI3)
    with pytest.raises(ConfigError, match="labels="):
        asyncio.run(nli.probabilities(NLI_PAIRS[:1]))


def test_roberta_models_join_pairs_with_their_separator() -> None:
    with FakeOpenAIServer() as server:
        nli = nli3_model(
            "vllm/roberta-large-mnli",
            base_url=server.base_url,
            labels=("contradiction", "entailment", "neutral"),
        )
        asyncio.run(nli.probabilities(NLI_PAIRS[:1]))
        assert server.requests[0]["input"] == ["Ada was born in London</s></s>born in London"]


def test_missing_classify_route_names_server_and_model() -> None:
    labels = ("contradiction", "entailment", "neutral")
    with FakeOpenAIServer(lambda _b: FakeReply(status=404, text="Not Found")) as server:
        nli = nli3_model("vllm/m", base_url=server.base_url, labels=labels)
        with pytest.raises(ClientError, match=r"/classify \(vllm/m\).*404.*--runner pooling"):
            asyncio.run(nli.probabilities(NLI_PAIRS[:1]))


def test_a_refused_pair_is_an_error_naming_it() -> None:
    def script(body: dict[str, Any]) -> str | FakeReply:
        if any("poems" in text for text in body["input"]):
            return FakeReply(status=400, text="input too long")
        return "ok"

    labels = ("contradiction", "entailment", "neutral")
    with FakeOpenAIServer(script) as server:
        nli = nli3_model("vllm/m", base_url=server.base_url, labels=labels)
        with pytest.raises(ModelError, match=r"refused pair 2.*too long"):
            asyncio.run(nli.probabilities(NLI_PAIRS))


def test_concurrency_bound_for_classify() -> None:
    labels = ("contradiction", "entailment", "neutral")
    with FakeOpenAIServer(delay=0.05) as server:
        nli = nli3_model(
            "vllm/m", base_url=server.base_url, labels=labels, batch_size=1, concurrency=2
        )
        asyncio.run(nli.probabilities(NLI_PAIRS * 2))
        assert len(server.requests) == 6 and server.max_in_flight <= 2


def test_bad_server_specs() -> None:
    with pytest.raises(ConfigError, match="no model name"):
        reranker_model("vllm/")
    with pytest.raises(ConfigError, match="unknown option"):
        reranker_model("tei/m", label_index=1)
    with pytest.raises(ConfigError, match="vllm/<model>"):
        nli3_model("openai/m")


def test_conner_score_config_urls_reach_the_served_scorers() -> None:
    from citegraph.conner.score._config import ConnerScoreConfig
    from citegraph.conner.score._models import load_score_models

    config = ConnerScoreConfig(
        knowledge="gold",
        metrics=("coherence_sent", "relevance", "factuality"),
        lm="vllm/lm",
        lm_base_url="http://lm.example:8001/v1",
        nli="vllm/nli",
        nli_base_url="http://nli.example:8002/v1",
        reranker="tei/rr",
        reranker_base_url="http://rr.example:8080",
    )
    models = load_score_models(config, [], ModelOptions())
    assert models.names() == {
        "lm": "vllm/lm",
        "nli": "vllm/nli",
        "reranker": "tei/rr",
        "evidence_kind": "gold",
    }
    assert getattr(models.lm, "endpoint", None) == "http://lm.example:8001/v1"
    with pytest.raises(ConfigError, match="served model"):
        load_score_models(
            config.model_copy(update={"lm": "local", "lm_base_url": "http://x/v1"}), []
        )
