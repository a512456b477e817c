"""LLM, NLI and AttrScore judges and the evaluator factory: scripted replies with hand-decided
labels, failures, structured output over real HTTP, premise/hypothesis direction."""

from __future__ import annotations

import asyncio
import doctest
import json
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.judge import (
    AttrScoreJudge,
    Evaluator,
    Judgement,
    LLMJudge,
    NLIJudge,
    chat_messages,
    evaluator,
)
from citegraph.caqa.judge._llm import label_response_format
from citegraph.errors import ConfigError, MissingDependency, ModelError, ServerError
from citegraph.io import SQLiteCache
from citegraph.models import ChatRequest, MockChat, NLIPair, NLIVerdict, nli_model
from citegraph.models.chat import CachedChatModel, OpenAICompatibleChat, chat_cache_key
from citegraph.testing import FakeOpenAIServer, FakeReply


def sample(key: str, *, citation: str = "Dudley is located in the West Midlands.") -> CaqaSample:
    return CaqaSample(
        id=key,
        question=f"question {key}?",
        answer=f"Answer {key}.",
        citation=citation,
        label="supportive",
        source="test",
    )


def judge_all(judge: Evaluator, samples: Sequence[CaqaSample]) -> list[Judgement]:
    async def go() -> list[Judgement]:
        try:
            return await judge.judge(samples)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def scripted(replies: dict[str, str | Exception]) -> MockChat:
    """A mock answering by the sample key found in the prompt ("question <key>?")."""

    def reply(request: ChatRequest) -> str:
        text = request.messages[-1].content
        key = next(k for k in replies if f"question {k}?" in text)
        outcome = replies[key]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return MockChat(reply)


def verdict(judgement: Judgement) -> Judgement:
    """``judgement`` without what the model reported of its reply (its latency varies)."""
    return judgement.model_copy(update={"generation": None})


# -- LLMJudge ------------------------------------------------------------------------------------


def test_llm_judge_labels_failures_and_unparseable() -> None:
    model = scripted(
        {
            "a": "Relationship Category: Supportive",
            "b": "Not supportive; the reference is about another person, so irrelevant.",
            "c": "I am not sure.",
            "d": ServerError("server down", status=503),
            "e": "**Insufficient**. The citation supports only one of the places.",
        }
    )
    judge = LLMJudge(model, concurrency=2)
    assert isinstance(judge, Evaluator)
    assert judge.name == "llm:mock/mock:caqa-table11-gpt-v1"
    assert judge.label_set == "four"
    samples = [sample(k) for k in "abcde"]
    got = judge_all(judge, samples)
    assert [j.label for j in got] == ["supportive", "irrelevant", None, None, "insufficient"]
    assert verdict(got[0]) == Judgement(label="supportive", raw="Relationship Category: Supportive")
    assert verdict(got[2]) == Judgement(label=None, raw="I am not sure.", error="unparseable")
    # a served or mock model's reply is recorded as kalma run records it: no batch_size
    assert got[0].generation is not None and got[0].generation["cached"] is False
    assert "batch_size" not in got[0].generation and got[3].generation is None
    assert got[3] == Judgement(
        label=None,
        raw="",
        error="ServerError: server down",
        error_type="citegraph.errors.ServerError",
    )
    # what was sent: the zero-shot messages, greedy, seed 0, no response_format
    assert len(model.requests) == 5
    sent = {r.messages[-1].content: r for r in model.requests}
    for s in samples:
        request = sent[chat_messages("zero-shot", s)[0].content]
        assert request.messages == tuple(chat_messages("zero-shot", s))
        assert (request.config.temperature, request.config.seed) == (0.0, 0)
        assert request.config.max_tokens == 512
        assert request.response_format is None


def test_llm_judge_reference_extraction_and_binary_prompt() -> None:
    four = LLMJudge(MockChat("The reference does not support the claim."), extraction="reference")
    assert four.name == "llm:mock/mock:caqa-table11-gpt-v1:reference-extraction"
    assert [j.label for j in judge_all(four, [sample("a")])] == ["supportive"]  # the code's quirk

    binary = LLMJudge(
        MockChat(["Unsupported", "Supported"]), prompt="reference-2way", extraction="reference"
    )
    assert binary.label_set == "binary"
    got = judge_all(binary, [sample("a"), sample("b")])
    assert [(j.label, j.error) for j in got] == [("unsupported", None), (None, "unparseable")]


def test_model_errors_become_judgements_but_missing_dependency_raises() -> None:
    judge = LLMJudge(MockChat(["Supportive"]), concurrency=1)  # one scripted reply for two
    got = judge_all(judge, [sample("a"), sample("b")])
    assert got[0].label == "supportive"
    assert got[1].label is None and got[1].error is not None
    assert got[1].error.startswith("ModelError: MockChat 'mock/mock' ran out of scripted outputs")

    broken = LLMJudge(MockChat(error=MissingDependency("torch", "hf"), fail_times=1))
    with pytest.raises(MissingDependency):
        judge_all(broken, [sample("a")])


def test_attrscore_judge_maps_appendix_c_labels() -> None:
    model = scripted({"a": "Attributable", "b": "Extrapolatory", "c": "Contradictory"})
    judge = AttrScoreJudge(model)
    assert judge.label_set == "attrscore"
    assert judge.name == "llm:mock/mock:caqa-table11-attrscore-v1"
    got = judge_all(judge, [sample(k) for k in "abc"])
    assert [j.label for j in got] == ["supportive", "irrelevant", "contradictory"]
    prompt = model.requests[0].messages[0].content
    assert "Options: Attributable, Extrapolatory or Contradictory." in prompt
    with pytest.raises(ConfigError, match="always uses the 'attrscore' prompt"):
        AttrScoreJudge(MockChat(), prompt="zero-shot")


def test_llm_judge_rejects_bad_options() -> None:
    with pytest.raises(ConfigError, match="NLI"):
        LLMJudge(MockChat(), prompt="autois")
    with pytest.raises(ConfigError, match="unknown judge prompt"):
        LLMJudge(MockChat(), prompt="four-shot")
    with pytest.raises(ConfigError, match="extraction"):
        LLMJudge(MockChat(), extraction="code")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="concurrency"):
        LLMJudge(MockChat(), concurrency=0)


# -- structured output ---------------------------------------------------------------------------


def test_response_format_enum_follows_the_prompt_options() -> None:
    def enum(prompt: str) -> list[str]:
        schema = label_response_format(prompt)["json_schema"]["schema"]
        return list(schema["properties"]["label"]["enum"])

    assert enum("zero-shot") == ["Supportive", "Insufficient", "Contradictory", "Irrelevant"]
    assert enum("alpaca") == ["Supportive", "Insufficient", "Contradictory", "Irrelevant"]
    assert enum("reference-4way") == ["Support", "Missing", "Contradictory", "Irrelevant"]
    assert enum("reference-4way-examples") == ["Support", "Missing", "Contradictory", "Irrelevant"]
    assert enum("reference-2way") == ["Supportive", "Unsupported"]
    assert enum("attrscore") == ["Attributable", "Extrapolatory", "Contradictory"]


def test_structured_output_is_sent_over_http() -> None:
    pytest.importorskip("openai")

    def reply(body: dict[str, Any]) -> str | FakeReply:
        if "question bad?" in body["messages"][0]["content"]:
            return FakeReply(text="response_format is not supported", status=400)
        return json.dumps({"label": "Missing"}) if "response_format" in body else "Irrelevant"

    with FakeOpenAIServer(reply=reply) as server:
        judge = evaluator(
            "vllm/fake-model", prompt="reference-4way", structured=True, base_url=server.base_url
        )
        assert judge.name == "llm:vllm/fake-model:caqa-ref-attribution-no-definition:json"
        got = judge_all(judge, [sample("a"), sample("bad")])
        plain = judge_all(
            LLMJudge(OpenAICompatibleChat("fake-model", provider="vllm", base_url=server.base_url)),
            [sample("c")],
        )
        bodies = server.requests
    assert verdict(got[0]) == Judgement(label="insufficient", raw='{"label": "Missing"}')
    assert got[1].label is None and got[1].error is not None
    assert got[1].error.startswith("ClientError: ") and "HTTP 400" in got[1].error
    assert plain[0].label == "irrelevant"
    structured = [b for b in bodies if "response_format" in b]
    assert len(structured) == 2 and len(bodies) == 3
    assert structured[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "attribution_label",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "label": {
                        "type": "string",
                        "enum": ["Support", "Missing", "Contradictory", "Irrelevant"],
                    }
                },
                "required": ["label"],
                "additionalProperties": False,
            },
        },
    }
    assert (structured[0]["temperature"], structured[0]["seed"]) == (0.0, 0)


def test_response_format_joins_the_cache_key_only_when_set() -> None:
    messages = [{"role": "user", "content": "Q"}]
    plain = ChatRequest.of(messages)
    shaped = ChatRequest.of(messages, response_format=label_response_format("zero-shot"))
    assert chat_cache_key("mock", "mock/mock", plain) == chat_cache_key(
        "mock", "mock/mock", ChatRequest.of(messages, response_format=None)
    )
    assert chat_cache_key("mock", "mock/mock", plain) != chat_cache_key("mock", "mock/mock", shaped)

    mock = MockChat(lambda r: "json" if r.response_format else "text")
    model = CachedChatModel(mock, SQLiteCache(":memory:"))
    judge = LLMJudge(model, structured=True)
    first = judge_all(judge, [sample("a")])
    again = judge_all(LLMJudge(model, structured=True), [sample("a")])
    assert [first[0].raw, again[0].raw] == ["json", "json"]
    assert (model.hits, model.misses, mock.calls) == (1, 1, 1)


# -- NLIJudge ------------------------------------------------------------------------------------


class StubNLI:
    """Entailed iff the hypothesis contains "Dudley"; probability 0.75 or 0.25."""

    name = "stub"

    def __init__(self, error: Exception | None = None) -> None:
        self.pairs: list[NLIPair] = []
        self.error = error

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        if self.error is not None:
            raise self.error
        self.pairs.extend(pairs)
        return [
            NLIVerdict(
                entailed="Dudley" in p.hypothesis,
                score=0.75 if "Dudley" in p.hypothesis else 0.25,
                source="stub",
            )
            for p in pairs
        ]


def test_nli_judge_paper_direction_puts_the_claim_first() -> None:
    nli = StubNLI()
    judge = NLIJudge(nli)
    assert judge.name == "nli:stub:caqa-table11-autois-v1" and judge.label_set == "binary"
    samples = [sample("a"), sample("b", citation="Aldridge is in Walsall.")]
    got = judge_all(judge, samples)
    assert nli.pairs == [
        NLIPair(
            premise="question a? Answer a.", hypothesis="Dudley is located in the West Midlands."
        ),
        NLIPair(premise="question b? Answer b.", hypothesis="Aldridge is in Walsall."),
    ]
    assert got == [
        Judgement(label="supportive", raw="1", scores={"supportive": 0.75, "unsupported": 0.25}),
        Judgement(label="unsupported", raw="0", scores={"supportive": 0.25, "unsupported": 0.75}),
    ]


def test_nli_judge_evidence_direction_and_irrelevant_mapping() -> None:
    nli = StubNLI()
    judge = NLIJudge(nli, direction="evidence", label_set="four")
    assert judge.name == "nli:stub:caqa-table11-autois-v1:evidence:not-entailed=irrelevant"
    got = judge_all(judge, [sample("a")])
    assert nli.pairs == [
        NLIPair(
            premise="Dudley is located in the West Midlands.", hypothesis="question a? Answer a."
        )
    ]
    assert got[0].label == "irrelevant"  # the claim does not mention Dudley
    assert got[0].scores == {"supportive": 0.25, "irrelevant": 0.75}


def test_nli_judge_with_the_lexical_matcher() -> None:
    # lexical: entailed iff the hypothesis's value (text after "relation: ") is in the premise
    newark = CaqaSample(
        id="n",
        question="Where was Stephen Crane born?",
        answer="Stephen Crane was born in Newark.",
        citation="place of birth: Newark",
        label="supportive",
        source="test",
    )
    boston = newark.model_copy(update={"id": "b", "citation": "place of birth: Boston"})
    paper = judge_all(NLIJudge(nli_model("lexical")), [newark, boston])
    assert [(j.label, j.raw, j.scores) for j in paper] == [
        ("supportive", "1", None),
        ("unsupported", "0", None),
    ]
    # evidence direction: the hypothesis is the whole claim, which the citation does not hold
    evidence = judge_all(NLIJudge(nli_model("lexical"), direction="evidence"), [newark])
    assert evidence[0].label == "unsupported"


def test_nli_judge_failures_and_options() -> None:
    failing = NLIJudge(StubNLI(error=ModelError("out of memory")))
    out_of_memory = Judgement(
        label=None, error="ModelError: out of memory", error_type="citegraph.errors.ModelError"
    )
    assert judge_all(failing, [sample("a"), sample("b")]) == [out_of_memory, out_of_memory]
    with pytest.raises(MissingDependency):
        judge_all(NLIJudge(StubNLI(error=MissingDependency("torch", "hf"))), [sample("a")])
    assert judge_all(NLIJudge(StubNLI()), []) == []
    with pytest.raises(ConfigError):
        NLIJudge(StubNLI(), direction="backwards")
    with pytest.raises(ConfigError):
        NLIJudge(StubNLI(), label_set="binary", not_entailed_as="irrelevant")
    with pytest.raises(ConfigError):
        NLIJudge(StubNLI(), label_set="attrscore")  # type: ignore[arg-type]


# -- the factory ---------------------------------------------------------------------------------


def test_factory_specs(tmp_path: Path) -> None:
    nli = evaluator("nli/lexical", temperature=0.7, cache=True)  # chat options ignored
    assert isinstance(nli, NLIJudge) and nli.name == "nli:lexical:caqa-table11-autois-v1"
    reference = evaluator("nli/lexical", extraction="reference", direction="evidence")
    assert reference.label_set == "four"
    assert reference.name == "nli:lexical:caqa-table11-autois-v1:evidence:not-entailed=irrelevant"

    attr = evaluator("attrscore/mock", mock_outputs="Extrapolatory")
    assert isinstance(attr, AttrScoreJudge) and attr.label_set == "attrscore"
    assert [j.label for j in judge_all(attr, [sample("a")])] == ["irrelevant"]

    llm = evaluator("mock", prompt="alpaca", mock_outputs="Missing", max_tokens=16, seed=3)
    assert isinstance(llm, LLMJudge) and llm.name == "llm:mock/mock:caqa-table11-other-v1"
    assert (llm.config.max_tokens, llm.config.seed, llm.config.temperature) == (16, 3, 0.0)
    assert [j.label for j in judge_all(llm, [sample("a")])] == ["insufficient"]

    # a mock is never put behind the shared cache; an explicit cache file is used
    assert isinstance(evaluator("mock", cache=True), LLMJudge)
    assert isinstance(evaluator("mock", cache=True).model, MockChat)  # type: ignore[attr-defined]
    cached = evaluator("mock", cache=tmp_path / "c.sqlite")
    assert isinstance(cached.model, CachedChatModel)  # type: ignore[attr-defined]
    asyncio.run(cached.aclose())


@pytest.mark.parametrize(
    ("spec", "options", "match"),
    [
        ("foo/bar", {}, "unknown model provider"),
        ("nli/", {}, "no model name"),
        ("cls/", {}, "no model name"),
        ("attrscore/", {}, "no model name"),
        ("nli/bert", {}, "unknown NLI spec"),
        ("nli/lexical", {"structured": True}, "apply to chat evaluators"),
        ("nli/lexical", {"base_url": "http://x/v1"}, "apply to chat evaluators"),
        ("mock", {"prompt": "autois"}, "NLI evaluators"),
        ("mock", {"prompt": "nope"}, "unknown judge prompt"),
    ],
)
def test_factory_rejects(spec: str, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        evaluator(spec, **options)


def test_factory_builds_a_classifier_judge_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[str, dict[str, Any]]] = []

    class FakeClassifierJudge:
        def __init__(self, path: str, **options: Any) -> None:
            made.append((path, options))

    module = types.ModuleType("citegraph.caqa.finetune._classifier_judge")
    module.ClassifierJudge = FakeClassifierJudge  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "citegraph.caqa.finetune._classifier_judge", module)
    judge = evaluator("cls/runs/finetuned", batch_size=4, temperature=0.5)
    assert isinstance(judge, FakeClassifierJudge)
    assert made == [("runs/finetuned", {"batch_size": 4})]


def test_docstring_examples() -> None:
    from citegraph.caqa.judge import _factory, _labels, _llm, _nli

    for module in (_labels, _llm, _nli, _factory):
        assert doctest.testmod(module).failed == 0
