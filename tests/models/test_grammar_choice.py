"""Choice grammars (a judge's label or score): the GBNF form says what the Lark form says, and a
tiny random local model decoding under one always writes one of the choices, where free it
writes none."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from citegraph.caqa.judge import label_grammar
from citegraph.errors import ConfigError
from citegraph.kalma.score._text_quality import score_grammar
from citegraph.models import ChatRequest, GenerateConfig, Grammar
from citegraph.models.chat import choice_grammar, choice_reply_text, resolve_judge_replies
from citegraph.models.grammar import grammar_accepts

llg = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402

GRAMMARS = [
    label_grammar("zero-shot"),
    label_grammar("zero-shot", "reference"),
    label_grammar("attrscore"),
    label_grammar("reference-2way"),
    score_grammar(),
    choice_grammar("hostile-v1", ['say "yes"', "back\\slash", "Zürich"], key="answer"),
]
TEXTS = [
    "Supportive", "Insufficient", "Missing", "Irrelevant", "Contradictory", "Attributable",
    "Extrapolatory", "Unsupported", "Support", "supportive", "Supportive.", " Supportive",
    "1", "5", "0", "6", "45", "4.0", "", 'say "yes"', "back\\slash", "Zürich", "Zurich",
]  # fmt: skip


@pytest.mark.parametrize("grammar", GRAMMARS, ids=lambda g: g.lark[:30])
def test_gbnf_accepts_what_lark_accepts(grammar: Grammar) -> None:
    from_gbnf = Grammar(name="gbnf", lark=gbnf_to_lark(grammar.gbnf), gbnf=grammar.gbnf)
    assert grammar.json_schema is not None
    [enum] = grammar.json_schema["properties"].values()
    choices = [str(v) for v in enum["enum"]]
    for text in [*TEXTS, *choices]:
        accepted = grammar_accepts(grammar, text)
        assert accepted == grammar_accepts(from_gbnf, text), text
        assert accepted == (text in choices), text  # the JSON schema's enum is the language


def test_choice_grammar_refuses_bad_choices_and_reads_replies_back() -> None:
    with pytest.raises(ConfigError, match="distinct non-empty"):
        choice_grammar("x", ["a", "a"], key="k")
    with pytest.raises(ConfigError, match="distinct non-empty"):
        choice_grammar("x", [], key="k")
    grammar = choice_grammar("x", ["Yes", "No"], key="answer")
    assert choice_reply_text('{"answer": "No"}', grammar) == "No"
    assert choice_reply_text("Yes", grammar) == "Yes"
    assert choice_reply_text('{"other": "No"}', grammar) == '{"other": "No"}'
    assert choice_reply_text("{not json", grammar) == "{not json"


def test_resolve_judge_replies() -> None:
    assert resolve_judge_replies("auto", "local") == "constrained"
    assert resolve_judge_replies("auto", "hf/some/path") == "constrained"
    assert resolve_judge_replies("auto", "mock") == "free"
    assert resolve_judge_replies("auto", "vllm/m") == "free"
    assert resolve_judge_replies("free", "local") == "free"
    assert resolve_judge_replies("constrained", "openai/gpt-4o") == "constrained"
    with pytest.raises(ConfigError, match="'maybe'"):
        resolve_judge_replies("maybe", "local")


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def byte_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer random Llama over bytes (256 byte tokens and </s>)."""
    from _tiny_models import build_byte_lm

    return build_byte_lm(
        tmp_path_factory.mktemp("byte-lm"),
        layers=1,
        width=16,
        heads=2,
        kv_heads=1,
        max_positions=512,
        bracket_bias=None,
    )


def test_a_random_local_model_always_writes_a_choice(byte_lm: Path) -> None:
    from citegraph.models.chat import HFChat

    torch.set_num_threads(1)
    chat = HFChat.load(byte_lm, device="cpu")
    labels = label_grammar("zero-shot")
    words = set(labels.json_schema["properties"]["label"]["enum"])  # type: ignore[index]
    free, constrained = [], []
    for seed in range(4):
        config = GenerateConfig(temperature=1.0, max_tokens=16, seed=seed)
        request = ChatRequest.of([{"role": "user", "content": "Label?"}], config)
        free.append(asyncio.run(chat.generate(request)).text)
        grammar_request = request.model_copy(update={"grammar": labels})
        constrained.append(asyncio.run(chat.generate(grammar_request)).text)
        score_request = request.model_copy(update={"grammar": score_grammar()})
        assert asyncio.run(chat.generate(score_request)).text in {"1", "2", "3", "4", "5"}
    assert not words & set(free)  # free, random bytes: never a label
    assert set(constrained) <= words, constrained
