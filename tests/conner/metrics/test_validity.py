"""CONNER validity: span answers (Eq. 7) and open-ended answers (Eq. 8), with a scripted
three-way NLI model (fixed vectors per pair, calls recorded) and the tiny HF classifier."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.conner import MetricValue
from citegraph.conner.metrics import (
    FixedEvidence,
    OpenValidityConfig,
    SpanValidityConfig,
    open_validity_async,
    span_validity_async,
    span_validity_batch_async,
    validity_summary,
)
from citegraph.errors import ConfigError
from citegraph.models import NLIPair, NLIProbs, nli3_model

Vector = tuple[float, float, float]


class ScriptedNLI:
    """Returns ``table[(premise, hypothesis)]`` (contradiction, neutral, entailment), else
    neutral; records the pairs of every call."""

    name = "scripted"

    def __init__(self, table: dict[tuple[str, str], Vector]) -> None:
        self.table = table
        self.calls: list[list[NLIPair]] = []

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        self.calls.append(list(pairs))
        out = []
        for p in pairs:
            c, n, e = self.table.get((p.premise, p.hypothesis), (0.0, 1.0, 0.0))
            out.append(NLIProbs(contradiction=c, neutral=n, entailment=e))
        return out


Q, GOLD, ANSWER = "who wrote hamlet", "Shakespeare", "William Shakespeare"


def test_span_validity_premise_is_question_and_gold_answer() -> None:
    # Eq. 7: premise = (q, a*), hypothesis = (q, a); the value is P(entailment).
    table = {(f"{Q} {GOLD}", f"{Q} {ANSWER}"): (0.05, 0.15, 0.8)}
    nli = ScriptedNLI(table)
    value = asyncio.run(span_validity_async(Q, ANSWER, GOLD, nli))
    assert nli.calls == [[NLIPair(premise=f"{Q} {GOLD}", hypothesis=f"{Q} {ANSWER}")]]
    assert value.value == 0.8 and value.model == "scripted"
    assert value.details == {
        "factual_inconsistent": 0.05,
        "non_verified": 0.15,
        "factual_consistent": 0.8,
        "label": 2,
    }


def test_span_validity_reference_join() -> None:
    nli = ScriptedNLI({})
    asyncio.run(span_validity_async(Q, ANSWER, GOLD, nli, SpanValidityConfig.reference()))
    assert nli.calls[0][0] == NLIPair(premise=f"{Q}?\t{GOLD}", hypothesis=f"{Q}?\t{ANSWER}")
    # A question that already ends with "?" keeps a single one.
    assert SpanValidityConfig.reference().join(" is it? ", " yes ") == "is it?\tyes"


def test_span_validity_batch_is_one_call_and_skips_empty_answers() -> None:
    table = {
        ("q1 a", "q1 a"): (0.0, 0.0, 1.0),
        ("q3 c", "q3 d"): (0.9, 0.05, 0.05),
    }
    nli = ScriptedNLI(table)
    values = asyncio.run(
        span_validity_batch_async(
            ["q1", "q2", "q3", "q4"], ["a", "  ", "d", "x"], ["a", "b", "c", ""], nli
        )
    )
    assert len(nli.calls) == 1 and len(nli.calls[0]) == 2
    assert [v.value for v in values] == [1.0, None, 0.05, None]
    assert values[1].reason == "empty generated answer"
    assert values[3].reason == "empty gold answer"
    assert values[2].details["label"] == 0
    with pytest.raises(ConfigError, match="2 queries, 1 answers"):
        asyncio.run(span_validity_batch_async(["q", "r"], ["a"], ["b", "c"], nli))
    # Nothing to score: no NLI call at all.
    quiet = ScriptedNLI({})
    assert asyncio.run(span_validity_batch_async([], [], [], quiet)) == []
    assert quiet.calls == []


def test_open_validity_takes_the_best_supported_evidence() -> None:
    answer = "The Eiffel Tower is in Paris."
    table = {
        ("gold response", answer): (0.1, 0.5, 0.4),
        ("doc1", answer): (0.0, 0.3, 0.7),
        ("doc2", answer): (0.0, 0.3, 0.7),  # a tie with doc1: the first wins
    }
    nli = ScriptedNLI(table)
    value = asyncio.run(open_validity_async(answer, ["gold response", "doc1", "doc2", " "], nli))
    assert [(p.premise, p.hypothesis) for p in nli.calls[0]] == [
        ("gold response", answer), ("doc1", answer), ("doc2", answer),
    ]  # fmt: skip
    assert value.value == 0.7 and value.details["label"] == 2
    assert value.details["evidence_index"] == 1 and value.details["n_pairs"] == 3


def test_open_validity_reference_cut_and_sources() -> None:
    answer = "An answer."
    docs = [f"doc{i}" for i in range(40)]
    table = {("doc35", answer): (0.0, 0.2, 0.8)}
    paper = asyncio.run(open_validity_async(answer, docs, ScriptedNLI(table)))
    assert paper.value == 0.8 and paper.details["evidence_index"] == 35
    ref = asyncio.run(
        open_validity_async(answer, docs, ScriptedNLI(table), OpenValidityConfig.reference())
    )
    assert ref.value == 0.0 and ref.details["n_pairs"] == 32 and ref.details["label"] == 1
    # An EvidenceSource and a single string work as evidence too.
    source = asyncio.run(open_validity_async(answer, FixedEvidence(["doc35"]), ScriptedNLI(table)))
    assert source.value == 0.8
    assert asyncio.run(open_validity_async(answer, "doc35", ScriptedNLI(table))).value == 0.8


def test_open_validity_unmeasured() -> None:
    nli = ScriptedNLI({})
    empty = asyncio.run(open_validity_async(" ", ["doc"], nli))
    assert empty.value is None and empty.reason == "empty generated answer"
    none = asyncio.run(open_validity_async("An answer.", [], nli))
    assert none.value is None and none.reason == "no evidence for the answer"
    assert nli.calls == []


def test_validity_summary_is_the_entailment_share() -> None:
    def value(label: int, e: float) -> MetricValue:
        rest = (1.0 - e) / 2
        details: dict[str, float | int | str | None] = {
            "factual_inconsistent": rest,
            "non_verified": rest,
            "factual_consistent": e,
            "label": label,
        }
        return MetricValue(value=e, model="m", details=details)

    values = [
        value(2, 0.9),
        value(2, 0.8),
        value(1, 0.2),
        MetricValue(value=None, reason="empty generated answer", model="m"),
    ]
    summary = validity_summary(values)
    # 2 of the 3 measured answers are entailed: validity 66.7 %.
    assert summary.factual_consistent == pytest.approx(2 / 3)
    assert summary.n_unmeasured == 1
    assert summary.mean_factual_consistent == pytest.approx((0.9 + 0.8 + 0.2) / 3)


def test_tiny_hf_model_end_to_end(tmp_path: Path) -> None:
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)
    from citegraph.testing import build_tiny_nli_classifier

    # Default labels (contradiction, entailment, neutral), logits (0, 3, 0):
    # P(entailment) = e^3 / (e^3 + 2) = 20.085537 / 22.085537 = 0.909443, label 2.
    path = build_tiny_nli_classifier(tmp_path / "nli", bias=[0.0, 3.0, 0.0])
    nli = nli3_model(f"hf:{path}")
    span = asyncio.run(span_validity_async(Q, ANSWER, GOLD, nli))
    assert span.value == pytest.approx(0.909443, abs=1e-6) and span.details["label"] == 2
    opened = asyncio.run(open_validity_async(ANSWER, ["he wrote hamlet", "paris"], nli))
    assert opened.value == pytest.approx(0.909443, abs=1e-6)
    assert opened.details["evidence_index"] == 0 and opened.model == f"hf:{path}"
