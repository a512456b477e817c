"""CONNER informativeness (Eq. 5): the prompt, the truncation, the first-token option, the value.

Hand-computed values. Knowledge token log probs [-1, -2]: "keep" = 1 - exp(-(1 + 2) / 2) =
1 - e^-1.5 = 0.7768698; "drop" (first prediction left out) = 1 - e^-2 = 0.8646647. The tiny
causal LM (``_tiny_models.build_tiny_causal_lm``) gives logit 2 to "paris" and 0 to the 21 other
tokens, Z = e^2 + 21 = 28.389056: every predicted "paris" has P = e^2 / Z, so knowledge made of
"paris" scores 1 - e^2 / Z = 0.7397196, and any other token 1 - 1 / Z = 0.9647752.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.conner import ConnerSample
from citegraph.conner.metrics import (
    INFO_PROMPT,
    informativeness_async,
    informativeness_prefix,
    truncate_words,
)
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.models import TokenScores

Z = math.exp(2.0) + 21.0

NQ = ConnerSample(
    id="nq:0",
    task="nq",
    topic=" Adobe Flash Player ",
    query="what is the most current adobe flash player version",
    gold_knowledge="...",
    gold_answer="28.0.0.137",
)
WOW = ConnerSample(
    id="wow-seen:0",
    task="wow",
    topic="Beard",
    query="yea makes sense.",
    history=("i like beards.", "yea makes sense."),
    gold_knowledge="...",
    gold_answer="...",
)


class StubLM:
    """Every continuation gets the given token log probs; records the pairs and the flag."""

    name = "stub-lm"

    def __init__(self, logprobs: Sequence[float]) -> None:
        self.logprobs = tuple(logprobs)
        self.pairs: list[tuple[str, str]] = []
        self.flags: list[bool] = []

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        raise AssertionError("not used")

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        self.pairs.extend(pairs)
        self.flags.append(token_logprobs)
        return [
            TokenScores(
                sum_nll=-sum(self.logprobs),
                n_tokens=len(self.logprobs),
                token_logprobs=self.logprobs if token_logprobs else None,
            )
            for _ in pairs
        ]

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        raise AssertionError("not used")


def test_prefix_matches_the_reference_prompt() -> None:
    assert informativeness_prefix(NQ) == (
        "Generate a Wikipedia to answer the given question.\nTopic: Adobe Flash Player.\n"
        "Question: what is the most current adobe flash player version?\nWikipedia: "
    )
    asked = NQ.model_copy(update={"query": "who wrote hamlet ?"})
    assert "Question: who wrote hamlet ?\n" in informativeness_prefix(asked)  # no second "?"
    assert informativeness_prefix(WOW) == INFO_PROMPT.format(
        topic="Beard", query="i like beards. [SEP] yea makes sense."
    )
    assert "Question: yea makes sense.\n" in informativeness_prefix(WOW, wow_query="last")


def test_truncate_words() -> None:
    assert truncate_words("a  b\nc d", 3) == ("a b c", 1)
    assert truncate_words(" a  b ", None) == ("a  b", 0)
    assert truncate_words("a b", 300) == ("a b", 0)


def test_keep_and_drop_first_token() -> None:
    lm = StubLM([-1.0, -2.0])
    keep = asyncio.run(informativeness_async([NQ], ["Flash Player 32."], lm))
    assert keep[0].value == pytest.approx(1 - math.exp(-1.5))  # 0.7768698
    assert keep[0].details["mean_nll"] == pytest.approx(1.5)
    assert keep[0].details["n_tokens"] == 2 and keep[0].model == "stub-lm"
    drop = asyncio.run(informativeness_async([NQ], ["Flash Player 32."], lm, first_token="drop"))
    assert drop[0].value == pytest.approx(1 - math.exp(-2.0))  # 0.8646647
    assert drop[0].details["n_tokens"] == 1 and drop[0].details["first_token"] == "drop"
    assert lm.flags == [False, True]  # log probs are asked for only when needed
    assert lm.pairs[0] == (informativeness_prefix(NQ), "Flash Player 32.")


def test_truncation_empty_and_unscorable() -> None:
    lm = StubLM([-0.5])
    long_text = " ".join(f"w{i}" for i in range(305))
    values = asyncio.run(informativeness_async([NQ, WOW, NQ], [long_text, "  ", "x"], lm))
    assert lm.pairs[0][1] == " ".join(f"w{i}" for i in range(300))
    assert values[0].details["words_dropped"] == 5
    assert values[1].value is None and values[1].reason == "empty knowledge"
    assert len(lm.pairs) == 2  # the empty text never reaches the LM
    one = asyncio.run(informativeness_async([NQ], ["x"], StubLM([-0.5]), first_token="drop"))
    assert one[0].value is None and "first_token='drop'" in (one[0].reason or "")
    whole = asyncio.run(informativeness_async([NQ], [long_text], StubLM([-0.5]), max_words=None))
    assert whole[0].details["words_dropped"] == 0


def test_errors() -> None:
    lm = StubLM([-1.0])
    with pytest.raises(DataError):
        asyncio.run(informativeness_async([NQ], ["a", "b"], lm))
    with pytest.raises(ConfigError):
        asyncio.run(informativeness_async([NQ], ["a"], lm, first_token="skip"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        asyncio.run(informativeness_async([NQ], ["a"], lm, max_words=0))

    class NoLogprobs(StubLM):
        async def score_continuations(
            self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
        ) -> list[TokenScores]:
            return await super().score_continuations(pairs, token_logprobs=False)

    with pytest.raises(ModelError, match="token_logprobs"):
        asyncio.run(
            informativeness_async([NQ], ["a b"], NoLogprobs([-1.0, -1.0]), first_token="drop")
        )


def test_tiny_causal_lm_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _tiny_models import build_tiny_causal_lm
    from citegraph.models import causal_lm_scorer

    lm = causal_lm_scorer(f"hf:{build_tiny_causal_lm(tmp_path / 'lm', chat_template=None)}")
    texts = ["paris paris", "the city", "paris the"]
    values = asyncio.run(informativeness_async([NQ, NQ, WOW], texts, lm))
    # paris paris: both predictions "paris"; the city: both other tokens; mixed: mean of both
    mixed = 1 - math.exp(-((math.log(Z) - 2.0) + math.log(Z)) / 2)  # 1 - e / Z = 0.9042
    assert [v.value for v in values] == pytest.approx(
        [1 - math.exp(2.0) / Z, 1 - 1 / Z, mixed], rel=1e-4
    )
    assert [v.details["n_tokens"] for v in values] == [2, 2, 2]
    dropped = asyncio.run(informativeness_async([WOW], ["paris the"], lm, first_token="drop"))
    assert dropped[0].value == pytest.approx(1 - 1 / Z, rel=1e-4)  # only "the" is left
