"""CONNER helpfulness (Eq. 6) with a stub scorer of known losses, and on the tiny causal LM.

The stub reads the knowledge text out of each prompt ("Passage: <k>\\n...") and returns a fixed
mean loss for it, so the expected scores are plain arithmetic: with L(k) = 1 and negatives of
loss 2 and 4, S = 1 - 1 / 3 = 2/3.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.conner import ConnerSample, Knowledge, MetricValue
from citegraph.conner.metrics import (
    HELPFULNESS_PROMPT,
    ZERO_SHOT_PROMPTS,
    answer_demonstrations,
    helpfulness_async,
)
from citegraph.errors import ConfigError
from citegraph.models import LMScorer, TokenScores

_PASSAGE = re.compile(r"Passage: (.*?)\n", re.S)


class StubScorer:
    """An :class:`LMScorer` whose answer loss depends only on the passage in the prompt."""

    name = "stub-lm"

    def __init__(self, losses: dict[str, float], n_tokens: int = 2) -> None:
        self.losses = losses
        self.n_tokens = n_tokens
        self.calls: list[list[tuple[str, str]]] = []

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        raise AssertionError("helpfulness scores continuations only")

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        raise AssertionError("helpfulness scores continuations only")

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        self.calls.append(list(pairs))
        out = []
        for prefix, answer in pairs:
            if not answer:
                out.append(TokenScores(sum_nll=0.0, n_tokens=0, reason="empty continuation"))
                continue
            passages = _PASSAGE.findall(prefix)
            loss = self.losses[passages[-1]]  # the last passage: the one being scored
            out.append(TokenScores(sum_nll=loss * self.n_tokens, n_tokens=self.n_tokens))
        return out


def sample(i: str, answer: str = "ans", task: str = "nq") -> ConnerSample:
    return ConnerSample(
        id=i,
        task=task,  # type: ignore[arg-type]
        topic=f"topic {i}",
        query=f"question {i}?",
        gold_knowledge=f"gold {i}",
        gold_answer=answer,
    )


def know(i: str, text: str, source: str = "llm:test") -> Knowledge:
    return Knowledge(id=i, text=text, source=source)


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def three_items() -> tuple[list[ConnerSample], list[Knowledge], StubScorer]:
    samples = [sample("a"), sample("b"), sample("c")]
    knowledge = [know("a", "K_a"), know("b", "K_b"), know("c", "K_c")]
    return samples, knowledge, StubScorer({"K_a": 1.0, "K_b": 2.0, "K_c": 4.0})


def test_stub_is_an_lm_scorer() -> None:
    assert isinstance(StubScorer({}), LMScorer)


def test_eq6_values_clipping_and_details() -> None:
    samples, knowledge, scorer = three_items()
    values = run(helpfulness_async(samples, knowledge, scorer, u=2))
    a, b, c = values
    # a: L = 1, negatives b, c -> baseline (2 + 4) / 2 = 3 -> 1 - 1/3
    assert a.value == pytest.approx(2 / 3)
    assert a.details["loss"] == pytest.approx(1.0)
    assert a.details["baseline_loss"] == pytest.approx(3.0)
    assert a.details["unclipped"] == pytest.approx(2 / 3)
    assert a.details["u"] == 2 and a.details["n_answer_tokens"] == 2
    assert sorted(json.loads(str(a.details["negatives"]))) == ["b", "c"]
    # b: L = 2, baseline (1 + 4) / 2 = 2.5 -> 1 - 0.8 = 0.2
    assert b.value == pytest.approx(0.2)
    # c: L = 4 > baseline (1 + 2) / 2 = 1.5 -> 0, unclipped 1 - 4 / 1.5 = -5/3
    assert c.value == 0.0
    assert c.details["unclipped"] == pytest.approx(-5 / 3)
    assert all(v.model == "stub-lm" and v.reason is None for v in values)
    assert a.details["prompt"] == "conner-passage-query/1" and a.details["few_shot"] == "none"


def test_one_scorer_call_per_batch_and_exact_prompt() -> None:
    samples, knowledge, scorer = three_items()
    run(helpfulness_async(samples, knowledge, scorer, u=2))
    assert len(scorer.calls) == 1 and len(scorer.calls[0]) == 9  # 3 items x (1 + u) pairs
    assert scorer.calls[0][0] == ("Passage: K_a\nQuery: question a?\nAnswer: ", "ans")
    seen: list[tuple[int, int]] = []
    scorer.calls.clear()
    run(
        helpfulness_async(
            samples, knowledge, scorer, u=2, batch_size=2, progress=lambda d, t: seen.append((d, t))
        )
    )
    assert [len(call) for call in scorer.calls] == [6, 3]
    assert seen == [(2, 3), (3, 3)]


def test_negatives_are_seeded_exclude_the_item_and_ignore_order() -> None:
    ids = [f"s{i}" for i in range(8)]
    samples = [sample(i) for i in ids]
    knowledge = [know(i, f"K_{i}") for i in ids]
    scorer = StubScorer({f"K_{i}": 1.0 + n for n, i in enumerate(ids)})

    def negatives(seed: int, order: slice = slice(None)) -> dict[str, list[str]]:
        values = run(helpfulness_async(samples[order], knowledge[order], scorer, u=3, seed=seed))
        return {
            s.id: json.loads(str(v.details["negatives"]))
            for s, v in zip(samples[order], values, strict=True)
        }

    first = negatives(0)
    for sid, negs in first.items():
        assert sid not in negs and len(set(negs)) == 3
    assert negatives(0) == first  # reproducible
    assert negatives(0, slice(None, None, -1)) == first  # independent of the items' order
    assert any(negatives(seed) != first for seed in range(1, 4))  # the seed matters


def test_explicit_pool_blank_texts_and_too_few_negatives() -> None:
    samples, knowledge, scorer = three_items()
    pool = [know("x", "K_b"), know("y", "   "), know("a", "K_c")]
    values = run(helpfulness_async(samples[:1], knowledge[:1], scorer, u=1, negatives=pool))
    # "y" is blank and "a" is the item's own id: the only negative is "x" (loss 2)
    assert json.loads(str(values[0].details["negatives"])) == ["x"]
    assert values[0].value == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="u=2"):
        run(helpfulness_async(samples[:1], knowledge[:1], scorer, u=2, negatives=pool))


def test_unmeasurable_answer_is_none_with_reason() -> None:
    samples = [sample("a", answer=""), sample("b"), sample("c")]
    knowledge = [know("a", "K_a"), know("b", "K_b"), know("c", "K_c")]
    scorer = StubScorer({"K_a": 1.0, "K_b": 2.0, "K_c": 4.0})
    values = run(helpfulness_async(samples, knowledge, scorer, u=2))
    assert values[0].value is None and "empty continuation" in str(values[0].reason)
    assert values[1].value == pytest.approx(0.2)


def test_zero_baseline_is_none() -> None:
    samples, knowledge, _ = three_items()
    scorer = StubScorer({"K_a": 1.0, "K_b": 0.0, "K_c": 0.0})
    values = run(helpfulness_async(samples, knowledge, scorer, u=2))
    assert values[0].value is None and "baseline loss is 0" in str(values[0].reason)


def test_few_shot_prefix_and_zero_shot_templates() -> None:
    samples, knowledge, scorer = three_items()
    demos = answer_demonstrations([(sample("d"), " K_d ")])
    assert demos == "Passage: K_d\nQuery: question d?\nAnswer: ans\n\n"
    run(helpfulness_async(samples[:2], knowledge[:2], scorer, u=1, few_shot=demos))
    assert scorer.calls[-1][0][0] == demos + HELPFULNESS_PROMPT.format(
        knowledge="K_a", query="question a?"
    )
    wow = [sample("w1", task="wow"), sample("w2", task="wow")]
    wk = [know("w1", "K_a"), know("w2", "K_b")]
    values = run(helpfulness_async(wow, wk, scorer, u=1, prompt=ZERO_SHOT_PROMPTS))
    assert scorer.calls[-1][0][0] == (
        "Using the knowledge from the passage, complete the dialogue below:\n"
        "Passage: K_a\nSpeaker 1: question w1?\nSpeaker 2: "
    )
    assert values[0].details["prompt"] == "conner-zero-shot-wow/1"
    per_item = {"a": "A-demos\n\n", "b": "B-demos\n\n"}
    run(helpfulness_async(samples[:2], knowledge[:2], scorer, u=1, few_shot=per_item))
    assert scorer.calls[-1][2][0].startswith("B-demos\n\nPassage: K_b")
    with pytest.raises(ConfigError, match="few-shot"):
        run(helpfulness_async(samples, knowledge, scorer, u=1, few_shot=per_item))


def test_reference_mode_truncates_gold_to_500_words() -> None:
    long_gold = " ".join(f"w{i}" for i in range(600))
    kept = " ".join(f"w{i}" for i in range(500))
    samples = [sample("a"), sample("b")]
    knowledge = [know("a", long_gold, source="gold"), know("b", "K_b")]
    scorer = StubScorer({long_gold: 1.0, kept: 1.0, "K_b": 2.0})
    values = run(helpfulness_async(samples, knowledge, scorer, u=1, mode="reference"))
    assert scorer.calls[-1][0][0] == f"Passage: {kept}\nQuery: question a?\nAnswer: "
    assert values[0].details["words_truncated"] == 100
    # the negative drawn for "b" is the untruncated gold text (as in the reference script)
    assert scorer.calls[-1][3][0].startswith(f"Passage: {long_gold}\n")
    run(helpfulness_async(samples, knowledge, scorer, u=1))
    assert scorer.calls[-1][0][0] == f"Passage: {long_gold}\nQuery: question a?\nAnswer: "


def test_bad_inputs() -> None:
    samples, knowledge, scorer = three_items()
    with pytest.raises(ConfigError, match="aligned"):
        run(helpfulness_async(samples, list(reversed(knowledge)), scorer))
    with pytest.raises(ConfigError, match="samples"):
        run(helpfulness_async(samples, knowledge[:2], scorer))
    with pytest.raises(ConfigError, match="u must be"):
        run(helpfulness_async(samples, knowledge, scorer, u=0))
    with pytest.raises(ConfigError, match="unknown fields"):
        run(
            helpfulness_async(
                samples, knowledge, scorer, u=1, prompt="{knowledge} {query} {answer}"
            )
        )
    with pytest.raises(ConfigError, match="needs the fields"):
        run(helpfulness_async(samples, knowledge, scorer, u=1, prompt="Query: {query}\nAnswer: "))
    with pytest.raises(ConfigError, match="mode"):
        run(helpfulness_async(samples, knowledge, scorer, u=1, mode="code"))  # type: ignore[arg-type]


# ---------------------------------------------------------------- the tiny causal LM
def test_end_to_end_on_the_tiny_causal_lm(tmp_path: Path) -> None:
    """The tiny LM gives logit 2 to "paris" and 0 to its 21 other tokens whatever the input, so
    the one-token answer "paris" costs ln(e^2 + 21) - 2 with any knowledge: S = 0, unclipped 0."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from _tiny_models import build_tiny_causal_lm
    from citegraph.models.lm import CausalLMScorer

    scorer = CausalLMScorer.load(build_tiny_causal_lm(tmp_path / "lm", chat_template=None))
    samples = [
        ConnerSample(
            id=f"q{i}",
            task="nq",
            topic="paris",
            query="where is paris",
            gold_knowledge="paris",
            gold_answer="paris",
        )
        for i in range(3)
    ]
    texts = ["the capital of france", "the city", "hello . be brief"]
    knowledge = [know(s.id, t) for s, t in zip(samples, texts, strict=True)]
    values: list[MetricValue] = run(helpfulness_async(samples, knowledge, scorer, u=2))
    expected = math.log(math.exp(2.0) + 21.0) - 2.0  # 1.345997
    for v in values:
        assert v.model == scorer.name
        assert v.details["n_answer_tokens"] == 1
        assert v.details["loss"] == pytest.approx(expected, abs=1e-4)
        assert v.details["baseline_loss"] == pytest.approx(expected, abs=1e-4)
        assert v.details["unclipped"] == pytest.approx(0.0, abs=1e-4)
        assert v.value == pytest.approx(0.0, abs=1e-4)
