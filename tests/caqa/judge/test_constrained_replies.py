"""Constrained judge replies (issue 38, item 1): the CAQA judge's reply is one label word.

With the mock provider the scripted replies a free judge cannot read become labels (hand-decoded
under the grammar below); a model that cannot constrain is refused before any item; free runs
keep their run ids; the CLI takes ``--judge-replies``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.caqa import CaqaJudgeConfig, CaqaSample, LLMJudge, judge_caqa, write_samples
from citegraph.caqa.judge import evaluator, label_grammar
from citegraph.caqa.judge._labels import extract_label
from citegraph.caqa.judge._prompts import judge_prompt, judge_prompt_names, prompt_label_set
from citegraph.cli import main
from citegraph.errors import ConfigError
from citegraph.models import ChatRequest, Generation, MockChat
from citegraph.runs import Runtime

pytest.importorskip("llguidance")

ONE = Runtime(concurrency=1, cache=False)
GOLD = ["supportive", "insufficient", "contradictory", "irrelevant"]
#: Scripted replies; free, the last two have no label (an evasion, a list of options).
REPLIES = [
    "Supportive",
    "Irrelevant, the citation is about something else.",
    "I cannot tell.",
    "Supportive, Insufficient or Irrelevant",
]
#: The same scripts decoded under ``Supportive | Insufficient | Contradictory | Irrelevant``
#: byte by byte: a script byte is kept while allowed, then the lowest allowed byte is written.
#: "Irrelevant, ..." keeps "Irrelevant" (the comma is refused: the reply ends); "I cannot" keeps
#: "I", then "n" < "r" gives "Insufficient"; "Supportive, ..." keeps "Supportive".
CONSTRAINED = ["supportive", "irrelevant", "insufficient", "supportive"]
CHAT_PROMPTS = [n for n in judge_prompt_names() if judge_prompt(n)["style"] in ("chat", "alpaca")]


def _samples() -> list[CaqaSample]:
    return [
        CaqaSample(
            id=f"s{i}",
            question=f"Question {i}?",
            answer=f"Answer {i}.",
            citation=f"cite-{i}",
            label=gold,  # type: ignore[arg-type]
            complexity="single",
            source="hand",
            group=f"g{i}",
        )
        for i, gold in enumerate(GOLD)
    ]


def _reply(request: ChatRequest) -> str:
    text = request.messages[-1].content
    return REPLIES[int(text.split("cite-")[1].split()[0].rstrip("."))]


@pytest.fixture()
def split(tmp_path: Path) -> Path:
    path = tmp_path / "test.jsonl"
    write_samples(path, _samples())
    return path


def _records(path: Path) -> list[dict[str, object]]:
    lines = (path / "samples.jsonl").read_text().splitlines()
    return sorted((json.loads(x) for x in lines if x), key=lambda r: str(r["id"]))


@pytest.mark.parametrize("mode", ["paper", "reference"])
@pytest.mark.parametrize("prompt", CHAT_PROMPTS)
def test_every_grammar_word_is_a_label_and_every_label_a_word(prompt: str, mode: str) -> None:
    grammar = label_grammar(prompt, mode)  # type: ignore[arg-type]
    words = grammar.json_schema["properties"]["label"]["enum"]  # type: ignore[index]
    label_set = prompt_label_set(prompt)
    labels = [extract_label(w, label_set, mode=mode) for w in words]  # type: ignore[arg-type]
    expected = {"four": 4, "binary": 2, "attrscore": 3}[label_set]
    assert None not in labels and len(set(labels)) == expected == len(words)


def test_reference_mode_gets_a_word_for_insufficient() -> None:
    # the authors' regex does not know "Insufficient": the grammar offers "Missing" instead
    words = label_grammar("zero-shot", "reference").json_schema["properties"]["label"]["enum"]  # type: ignore[index]
    assert words == ["Supportive", "Contradictory", "Irrelevant", "Missing"]


def test_mock_judge_free_is_unparseable_constrained_always_labels(
    tmp_path: Path, split: Path
) -> None:
    free = judge_caqa(
        tmp_path / "free",
        CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0),
        evaluator=LLMJudge(MockChat(_reply)),
        runtime=ONE,
    )
    assert [r["predicted"] for r in _records(tmp_path / "free")] == [
        "supportive", "irrelevant", None, None,
    ]  # fmt: skip
    assert free.report.n_unparseable == 2
    constrained = judge_caqa(
        tmp_path / "constrained",
        CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0),
        evaluator=LLMJudge(MockChat(_reply), replies="constrained"),
        runtime=ONE,
    )
    records = _records(tmp_path / "constrained")
    assert [r["predicted"] for r in records] == CONSTRAINED
    assert [r["raw"] for r in records] == ["Supportive", "Irrelevant", "Insufficient", "Supportive"]
    assert constrained.report.n_unparseable == 0
    # gold supportive, insufficient, contradictory, irrelevant: s0 right, the rest wrong
    assert constrained.report.n_correct == 1


def test_constrained_run_records_its_mode_free_run_keeps_its_id(
    tmp_path: Path, split: Path
) -> None:
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0)
    assert "judge_replies" not in config.model_dump()
    free_explicit = config.model_copy(update={"judge_replies": "free"})
    assert free_explicit.model_dump() == config.model_dump()  # free: the same identity
    judge_caqa(tmp_path / "a", config, runtime=ONE)
    judge_caqa(tmp_path / "b", free_explicit, runtime=ONE)
    run_a = json.loads((tmp_path / "a" / "run.json").read_text())
    run_b = json.loads((tmp_path / "b" / "run.json").read_text())
    assert run_a["run_id"] == run_b["run_id"] and "judge_replies" not in run_a["config"]
    constrained = config.model_copy(update={"judge_replies": "constrained"})
    judge_caqa(tmp_path / "c", constrained, runtime=ONE)
    run_c = json.loads((tmp_path / "c" / "run.json").read_text())
    assert run_c["run_id"] != run_a["run_id"]
    assert run_c["config"]["judge_replies"] == "constrained"
    assert run_c["config"]["judge_grammar"] == "caqa-labels-v1"
    assert run_c["config"]["evaluator_name"].endswith(":constrained")
    setup = json.loads((tmp_path / "c" / "metrics.json").read_text())["setup"]
    assert setup["judge_replies"] == "constrained" and setup["judge_grammar"] == "caqa-labels-v1"
    free_setup = json.loads((tmp_path / "a" / "metrics.json").read_text())["setup"]
    assert "judge_replies" not in free_setup


class _NoGrammarChat:
    """A user's own chat model: no ``grammar_mode``."""

    name = "mine/model"
    calls = 0

    async def generate(self, request: ChatRequest) -> Generation:
        self.calls += 1
        return Generation(text="Supportive", model=self.name)

    async def aclose(self) -> None:
        return None


def test_a_model_that_cannot_constrain_is_refused_before_any_item() -> None:
    model = _NoGrammarChat()
    with pytest.raises(ConfigError, match="'mine/model' cannot constrain"):
        LLMJudge(model, replies="constrained")  # type: ignore[arg-type]
    assert model.calls == 0
    assert LLMJudge(model).grammar is None  # type: ignore[arg-type]


class _JsonSchemaChat(_NoGrammarChat):
    """A server that constrains only JSON: it answers in the grammar's schema."""

    grammar_mode = "json-schema"
    requests: list[ChatRequest]

    async def generate(self, request: ChatRequest) -> Generation:
        self.requests = [*getattr(self, "requests", []), request]
        return Generation(text='{"label": "Missing"}', model=self.name)


def test_a_json_schema_server_gets_the_schema_and_its_reply_is_read() -> None:
    import asyncio

    model = _JsonSchemaChat()
    judge = LLMJudge(model, prompt="reference-4way", replies="constrained")  # type: ignore[arg-type]
    [judgement] = asyncio.run(judge.judge(_samples()[:1]))
    assert judgement.label == "insufficient" and judgement.raw == '{"label": "Missing"}'
    grammar = model.requests[0].grammar
    assert grammar is not None and grammar.json_schema == {
        "type": "object",
        "properties": {
            "label": {
                "type": "string",
                "enum": ["Support", "Missing", "Contradictory", "Irrelevant"],
            }
        },
        "required": ["label"],
        "additionalProperties": False,
    }


def test_auto_constrains_local_and_hf_only() -> None:
    assert evaluator("mock").grammar is None  # type: ignore[attr-defined]
    assert evaluator("mock", replies="constrained").grammar is not None  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="replies"):
        evaluator("nli/lexical", replies="constrained")
    assert evaluator("nli/lexical", replies="auto").name.startswith("nli:")


def test_cli_judge_replies_option(tmp_path: Path, split: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        ["caqa", "judge", str(split), "--evaluator", "mock", "--judge-replies", "constrained",
         "--bootstrap", "0", "--out", str(tmp_path / "j")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "j" / "run.json").read_text())
    assert run["config"]["judge_replies"] == "constrained"
    # the mock's default reply decoded under the grammar: every sample has a label
    assert all(r["predicted"] for r in _records(tmp_path / "j"))
    bad = runner.invoke(
        main,
        ["caqa", "judge", str(split), "--evaluator", "mock", "--judge-replies", "maybe",
         "--out", str(tmp_path / "k")],
    )  # fmt: skip
    assert bad.exit_code == 2


def test_the_viewer_shows_the_judge_replies() -> None:
    from citegraph.caqa import CaqaJudgeTask
    from citegraph.runs import FieldsBlock

    record = {"id": "s0", "question": "Q?", "answer": "A.", "citation": "c", "gold": "supportive",
              "predicted": "supportive", "raw": "Supportive", "error": None}  # fmt: skip
    base = {"evaluator": "local", "prompt": "zero-shot", "extraction": "paper"}

    def shown(config: dict[str, str]) -> str:
        blocks = CaqaJudgeTask.presenter.sample(record, {"config": config})
        evaluator = next(b for b in blocks if b.title == "Evaluator")
        assert isinstance(evaluator, FieldsBlock)
        return str(dict(evaluator.fields)["judge replies"])

    assert shown(base) == "free"
    constrained = base | {"judge_replies": "constrained", "judge_grammar": "caqa-labels-v1"}
    assert shown(constrained) == "constrained (caqa-labels-v1)"


def test_the_embedded_model_constrained_gives_a_label_for_every_sample(
    tmp_path: Path, split: Path, smollm2_cache: Path
) -> None:
    from citegraph.models.chat import local_chat

    judge = LLMJudge(
        local_chat(smollm2_cache), prompt="alpaca", max_tokens=8, replies="constrained"
    )
    config = CaqaJudgeConfig(data=str(split), evaluator="local", prompt="alpaca", bootstrap=0)
    result = judge_caqa(tmp_path / "local", config, evaluator=judge, runtime=ONE)
    records = _records(tmp_path / "local")
    words = {"Supportive", "Insufficient", "Contradictory", "Irrelevant"}
    assert result.report.n_unparseable == 0 and len(records) == 4
    assert all(r["predicted"] and r["raw"] in words for r in records), records
