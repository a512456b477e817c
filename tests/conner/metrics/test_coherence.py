"""CONNER coherence: sentence level (Eq. 3, paper and reference forms) and paragraph level (Eq. 4).

Hand-computed values. Sentence PPLs [2, 4]: paper = (1/2 + 1/4) / 2 = 0.375, reference =
1 / ((2 + 4) / 2) = 1/3. PPLs [100, 400]: paper without a cap = (0.01 + 0.0025) / 2 = 0.00625,
paper with cap 200 = (0.01 + 0.005) / 2 = 0.0075, reference (cap 200) = 1 / 150, reference
without a cap = 1 / 250. The tiny causal LM (``_tiny_models.build_tiny_causal_lm``) gives logit 2
to "paris" and 0 to the 21 other tokens for any input, Z = e^2 + 21 = 28.389056: a predicted
"paris" has PPL Z / e^2 = 3.842022, any other token PPL Z.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.conner.metrics import (
    NO_PARAGRAPH_MODEL,
    ParagraphScorer,
    paragraph_coherence_async,
    paragraph_scorer,
    sentence_coherence_async,
    sentence_coherence_value,
)
from citegraph.errors import ConfigError, ModelError
from citegraph.models import LMScorer, TokenScores

Z = math.exp(2.0) + 21.0


def bars(text: str) -> list[str]:
    """Test splitter: sentences are separated by '|'."""
    return [s.strip() for s in text.split("|") if s.strip()]


class StubLM:
    """Known perplexities: each sentence scores 2 tokens with sum NLL 2 ln(PPL)."""

    name = "stub-lm"

    def __init__(self, ppl: dict[str, float | None]) -> None:
        self.ppl = ppl
        self.calls: list[list[str]] = []

    def _one(self, text: str) -> TokenScores:
        ppl = self.ppl[text]
        if ppl is None:
            return TokenScores(sum_nll=0.0, n_tokens=0, reason="only the first token")
        return TokenScores(sum_nll=2.0 * math.log(ppl), n_tokens=2)

    async def score(
        self, texts: Sequence[str], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        self.calls.append(list(texts))
        return [self._one(t) for t in texts]

    async def score_continuations(
        self, pairs: Sequence[tuple[str, str]], *, token_logprobs: bool = False
    ) -> list[TokenScores]:
        raise AssertionError("not used")

    async def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        return [s.perplexity for s in await self.score(texts)]


class ListScorer:
    """A paragraph scorer returning the given raw scores in order."""

    name = "stub-para"

    def __init__(self, scores: Sequence[float]) -> None:
        self.scores = list(scores)
        self.texts: list[str] = []

    async def score(self, texts: Sequence[str]) -> list[float]:
        self.texts.extend(texts)
        return self.scores[: len(texts)]


def test_value_paper_and_reference_forms() -> None:
    assert sentence_coherence_value([2.0, 4.0]) == pytest.approx(0.375)
    assert sentence_coherence_value([2.0, 4.0], mode="reference") == pytest.approx(1 / 3)
    assert sentence_coherence_value([100.0, 400.0]) == pytest.approx(0.00625)
    assert sentence_coherence_value([100.0, 400.0], ppl_cap=200) == pytest.approx(0.0075)
    assert sentence_coherence_value([100.0, 400.0], mode="reference") == pytest.approx(1 / 150)
    assert sentence_coherence_value(
        [100.0, 400.0], mode="reference", ppl_cap=math.inf
    ) == pytest.approx(1 / 250)
    # an unscored sentence: left out (paper) or spoils the example (reference, like NaN)
    assert sentence_coherence_value([2.0, None]) == pytest.approx(0.5)
    assert sentence_coherence_value([2.0, math.nan], mode="reference") is None
    assert sentence_coherence_value([]) is None
    assert sentence_coherence_value([math.inf]) == 0.0
    with pytest.raises(ConfigError):
        sentence_coherence_value([2.0], ppl_cap=0.5)
    with pytest.raises(ConfigError):
        sentence_coherence_value([2.0], mode="mean")  # type: ignore[arg-type]


def test_sentence_coherence_with_known_perplexities() -> None:
    lm = StubLM({"a": 2.0, "b": 4.0, "c": 400.0, "d": None})
    assert isinstance(lm, LMScorer)
    texts = ["a | b", "a | c", "a | d", "   ", "d"]
    paper = asyncio.run(sentence_coherence_async(texts, lm, splitter=bars))
    assert lm.calls == [["a", "b", "a", "c", "a", "d", "d"]]  # one batched call
    assert [v.value for v in paper[:3]] == pytest.approx([0.375, (0.5 + 1 / 400) / 2, 0.5])
    assert paper[3].value is None and paper[3].reason == "empty knowledge"
    assert paper[4].value is None and paper[4].reason == "no sentence has a scored token"
    assert paper[1].details == {
        "mode": "paper",
        "ppl_cap": None,
        "n_sentences": 2,
        "n_unscored": 0,
        "mean_ppl": pytest.approx(201.0),
    }
    assert paper[2].details["n_unscored"] == 1
    assert {v.model for v in paper} == {"stub-lm"}

    ref = asyncio.run(sentence_coherence_async(texts, lm, splitter=bars, mode="reference"))
    assert [v.value for v in ref[:2]] == pytest.approx([1 / 3, 1 / 101])  # 400 capped to 200
    assert ref[1].details["ppl_cap"] == 200.0 and ref[1].details["mean_ppl"] == pytest.approx(101)
    assert ref[2].value is None and "reference mode" in (ref[2].reason or "")

    capped = asyncio.run(sentence_coherence_async(["a | c"], lm, splitter=bars, ppl_cap=200))
    assert capped[0].value == pytest.approx((0.5 + 0.005) / 2)


def test_sentence_coherence_errors() -> None:
    class Short(StubLM):
        async def score(
            self, texts: Sequence[str], *, token_logprobs: bool = False
        ) -> list[TokenScores]:
            return []

    with pytest.raises(ModelError):
        asyncio.run(sentence_coherence_async(["a"], Short({"a": 2.0}), splitter=bars))
    assert asyncio.run(sentence_coherence_async([], StubLM({}), splitter=bars)) == []


def test_default_splitter_is_used() -> None:
    lm = StubLM({"Paris is big.": 2.0, "It is old.": 4.0})
    values = asyncio.run(sentence_coherence_async(["Paris is big. It is old."], lm))
    assert values[0].value == pytest.approx(0.375)


def test_tiny_causal_lm_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _tiny_models import build_tiny_causal_lm
    from citegraph.models import causal_lm_scorer

    lm = causal_lm_scorer(f"hf:{build_tiny_causal_lm(tmp_path / 'lm', chat_template=None)}")
    text = "paris paris paris | the city of france"
    values = asyncio.run(sentence_coherence_async([text], lm, splitter=bars))
    # sentence 1: two predicted "paris" -> PPL Z/e^2; sentence 2: three other tokens -> PPL Z
    expected = (math.exp(2.0) / Z + 1.0 / Z) / 2  # (0.260280 + 0.035225) / 2 = 0.147752
    assert values[0].value == pytest.approx(expected, rel=1e-4)
    assert values[0].model == lm.name


def test_paragraph_without_model_is_unmeasured() -> None:
    values = asyncio.run(paragraph_coherence_async(["some text", ""], None))
    assert [v.value for v in values] == [None, None]
    assert values[0].reason == NO_PARAGRAPH_MODEL
    assert "aisingapore/coherence-momentum" in NO_PARAGRAPH_MODEL
    assert paragraph_scorer(None) is None and paragraph_scorer(" ") is None


def test_paragraph_minmax_bounds_and_raw() -> None:
    texts = ["t1", "t2", "", "t3"]
    scorer = ListScorer([-2.0, 6.0, 0.0])
    assert isinstance(scorer, ParagraphScorer)
    minmax = asyncio.run(paragraph_coherence_async(texts, scorer))
    assert scorer.texts == ["t1", "t2", "t3"]
    assert [v.value for v in minmax] == [0.0, 1.0, None, 0.25]
    assert minmax[3].details == {"raw": 0.0, "normalize": "minmax", "min": -2.0, "max": 6.0}
    assert minmax[2].reason == "empty knowledge"
    fixed = asyncio.run(
        paragraph_coherence_async(texts, ListScorer([-2.0, 6.0, 0.0]), bounds=(-4, 4))
    )
    assert [v.value for v in fixed] == [0.25, 1.0, None, 0.5]  # 6 clipped to 1
    raw = asyncio.run(
        paragraph_coherence_async(texts, ListScorer([-2.0, 6.0, 0.0]), normalize="none")
    )
    assert [v.value for v in raw] == [-2.0, 6.0, None, 0.0]
    single = asyncio.run(paragraph_coherence_async(["t1"], ListScorer([3.0])))
    assert single[0].value is None and "two different scores" in (single[0].reason or "")
    with pytest.raises(ConfigError):
        asyncio.run(paragraph_coherence_async(texts, scorer, bounds=(1.0, 1.0)))
    with pytest.raises(ConfigError):
        asyncio.run(paragraph_coherence_async(texts, scorer, normalize="z"))  # type: ignore[arg-type]
    with pytest.raises(ModelError):
        asyncio.run(paragraph_coherence_async(texts, ListScorer([1.0])))


def test_hf_paragraph_scorer_on_a_tiny_regressor(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from citegraph.testing import build_tiny_nli_classifier

    path = build_tiny_nli_classifier(tmp_path / "coh", bias=[1.5], id2label={0: "coherence"})
    scorer = paragraph_scorer(f"hf:{path}", batch_size=2)
    assert scorer is not None and scorer.name == f"hf:{path}"
    values = asyncio.run(
        paragraph_coherence_async(["he wrote a novel .", "paris"], scorer, normalize="none")
    )
    assert [v.value for v in values] == pytest.approx([1.5, 1.5])
    with pytest.raises(ConfigError):
        paragraph_scorer("sgnlp:coherence-momentum")


def test_reference_outputs_reproduce_their_aggregates(data_dir: Path) -> None:
    """CONNER's outputs on the NQ gold passages, as far as they can be checked here.

    ``nq_ref_avg_sent_ppl``: line 1 = the 500 example PPLs (mean capped sentence PPL under
    GPT-Neo-2.7B, which cannot be loaded here), line 2 = coh_sent = nanmean(1 / PPL_example).
    The reference form applied to each example PPL reproduces line 2; the PPLs top out at
    exactly 100 (the released run capped at 100, not the 200 of the released code), and 3 are NaN.
    ``nq_ref_avg_coh_para``: 500 raw CoherenceMomentum scores, then their max and min; min-max
    normalisation maps them onto [0, 1] with those ends.
    """
    folder = data_dir / "conner" / "nq" / "random_testset"
    if not (folder / "nq_ref_avg_sent_ppl").is_file():
        pytest.skip("CONNER NQ reference outputs not present")
    lines = (folder / "nq_ref_avg_sent_ppl").read_text().splitlines()
    ppls = json.loads(lines[0])
    assert len(ppls) == 500 and sum(math.isnan(p) for p in ppls) == 3
    assert max(p for p in ppls if not math.isnan(p)) == 100.0
    per_example = [sentence_coherence_value([p], mode="reference") for p in ppls]
    measured = [v for v in per_example if v is not None]
    assert len(measured) == 497
    assert sum(measured) / len(measured) == pytest.approx(float(lines[1]), rel=1e-12)

    para_lines = (folder / "nq_ref_avg_coh_para").read_text().splitlines()
    raw = json.loads(para_lines[0])
    top, bottom = map(float, para_lines[1].split("\t"))
    assert len(raw) == 500 and (max(raw), min(raw)) == (top, bottom)
    texts = [f"text {i}" for i in range(len(raw))]
    values = asyncio.run(paragraph_coherence_async(texts, ListScorer(raw)))
    normalised = [v.value for v in values]
    assert all(v is not None and 0.0 <= v <= 1.0 for v in normalised)
    assert normalised[raw.index(top)] == 1.0 and normalised[raw.index(bottom)] == 0.0
