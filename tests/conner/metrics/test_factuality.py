"""CONNER factuality (Eq. 1) against hand-computed values, with a scripted three-way NLI model.

The scripted model returns a fixed vector per (premise, hypothesis) pair and records each call,
so every aggregation (inner max, outer min / mean / max, by entailment or by label) is checked
against numbers worked out by hand, and so is the batching (one NLI call per knowledge text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.conner import MetricValue
from citegraph.conner.metrics import (
    EVIDENCE_CHARS,
    CombinedEvidence,
    EvidenceSource,
    FactualityConfig,
    FixedEvidence,
    RetrievedEvidence,
    factuality_async,
    factuality_summary,
    gold_evidence,
    reference_evidence,
)
from citegraph.errors import DataError, ModelError
from citegraph.models import NLIPair, NLIProbs, nli3_model
from citegraph.models.nli import LexicalNLI3

Vector = tuple[float, float, float]
NEUTRAL: Vector = (0.0, 1.0, 0.0)


class ScriptedNLI:
    """Returns ``table[(premise, hypothesis)]`` (contradiction, neutral, entailment), else
    ``default``; records the pairs of every call."""

    name = "scripted"

    def __init__(self, table: dict[tuple[str, str], Vector], default: Vector = NEUTRAL) -> None:
        self.table = table
        self.default = default
        self.calls: list[list[NLIPair]] = []

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        self.calls.append(list(pairs))
        out = []
        for p in pairs:
            c, n, e = self.table.get((p.premise, p.hypothesis), self.default)
            out.append(NLIProbs(contradiction=c, neutral=n, entailment=e))
        return out


S1, S2 = "Paris is in France.", "It has a tower."
KNOWLEDGE = f"{S1} {S2}"
EVIDENCE = FixedEvidence(["e1", "e2", "e3"], name="three")

# 2 sentences x 3 evidence. Inner max by P(entailment):
#   S1: e1 .6, e2 .8, e3 .1          -> e2 (0.05, 0.15, 0.80), label 2
#   S2: e1 .3, e2 .1, e3 .3 (a tie)  -> e1, the first (0.20, 0.50, 0.30), label 1
TABLE: dict[tuple[str, str], Vector] = {
    ("e1", S1): (0.1, 0.3, 0.6),
    ("e2", S1): (0.05, 0.15, 0.8),
    ("e3", S1): (0.7, 0.2, 0.1),
    ("e1", S2): (0.2, 0.5, 0.3),
    ("e2", S2): (0.6, 0.3, 0.1),
    ("e3", S2): (0.1, 0.6, 0.3),
}


def _run(
    knowledge: str, evidence: EvidenceSource, nli: ScriptedNLI, **config: object
) -> MetricValue:
    return asyncio.run(factuality_async(knowledge, evidence, nli, FactualityConfig(**config)))  # type: ignore[arg-type]


def _parts(value: MetricValue) -> tuple[object, ...]:
    d = value.details
    return (d["factual_inconsistent"], d["non_verified"], d["factual_consistent"])


def test_min_is_the_default_and_takes_the_least_supported_sentence() -> None:
    nli = ScriptedNLI(TABLE)
    value = asyncio.run(factuality_async(KNOWLEDGE, EVIDENCE, nli))
    assert value.value == pytest.approx(0.3)
    assert _parts(value) == pytest.approx((0.2, 0.5, 0.3))
    assert value.details["label"] == 1 and value.details["sentence"] == 1
    assert value.model == "scripted" and value.reason is None
    assert value.details["evidence"] == "three" and value.details["outer"] == "min:entailment"
    assert value.details["n_sentences"] == 2 and value.details["n_pairs"] == 6
    assert value.details["n_consistent_sentences"] == 1
    assert value.details["n_non_verified_sentences"] == 1
    assert value.details["n_inconsistent_sentences"] == 0


def test_details_name_each_sentence_its_label_and_deciding_evidence() -> None:
    value = asyncio.run(factuality_async(KNOWLEDGE, EVIDENCE, ScriptedNLI(TABLE)))
    assert value.details["sentences"] == [
        {"index": 0, "text": S1, "label": "consistent", "entailment": 0.8,
         "evidence_index": 1, "evidence": "e2"},
        {"index": 1, "text": S2, "label": "non-verified", "entailment": 0.3,
         "evidence_index": 0, "evidence": "e1"},  # the first of the tied e1 / e3
    ]  # fmt: skip
    # a contradicted sentence is "inconsistent"; long evidence is cut to EVIDENCE_CHARS
    long = "x" * (EVIDENCE_CHARS + 50)
    table = {(long, S1): (0.9, 0.05, 0.05), (long, S2): (0.0, 0.1, 0.9)}
    cut = asyncio.run(factuality_async(KNOWLEDGE, FixedEvidence([long]), ScriptedNLI(table)))
    rows = cut.details["sentences"]
    assert isinstance(rows, list)
    assert [r["label"] for r in rows] == ["inconsistent", "consistent"]
    evidence = str(rows[0]["evidence"])
    assert len(evidence) == EVIDENCE_CHARS and evidence.endswith("…")
    assert cut.value == pytest.approx(0.05)  # the value is untouched by the new details


def test_all_pairs_of_a_knowledge_go_in_one_call() -> None:
    nli = ScriptedNLI(TABLE)
    _run(KNOWLEDGE, EVIDENCE, nli)
    assert len(nli.calls) == 1
    assert [(p.premise, p.hypothesis) for p in nli.calls[0]] == [
        ("e1", S1), ("e2", S1), ("e3", S1), ("e1", S2), ("e2", S2), ("e3", S2),
    ]  # fmt: skip


def test_max_and_mean() -> None:
    top = _run(KNOWLEDGE, EVIDENCE, ScriptedNLI(TABLE), outer="max")
    assert top.value == pytest.approx(0.8)
    assert _parts(top) == pytest.approx((0.05, 0.15, 0.8))
    assert top.details["label"] == 2 and top.details["sentence"] == 0
    # mean of (0.05, 0.15, 0.80) and (0.20, 0.50, 0.30) = (0.125, 0.325, 0.55): label 2
    mean = _run(KNOWLEDGE, EVIDENCE, ScriptedNLI(TABLE), outer="mean")
    assert mean.value == pytest.approx(0.55)
    assert _parts(mean) == pytest.approx((0.125, 0.325, 0.55))
    assert mean.details["label"] == 2 and mean.details["sentence"] is None
    assert mean.details["outer"] == "mean"


def test_outer_by_label_differs_from_outer_by_entailment() -> None:
    # Best vectors: S1 (0.5, 0.1, 0.4) label 0 (contradiction); S2 (0.0, 0.7, 0.3) label 1.
    table: dict[tuple[str, str], Vector] = {
        ("e1", S1): (0.5, 0.1, 0.4),
        ("e1", S2): (0.0, 0.7, 0.3),
    }
    one = FixedEvidence(["e1"])
    by_e_min = _run(KNOWLEDGE, one, ScriptedNLI(table), outer="min")
    by_l_min = _run(KNOWLEDGE, one, ScriptedNLI(table), outer="min", outer_by="label")
    by_e_max = _run(KNOWLEDGE, one, ScriptedNLI(table), outer="max")
    by_l_max = _run(KNOWLEDGE, one, ScriptedNLI(table), outer="max", outer_by="label")
    assert (by_e_min.value, by_e_min.details["label"]) == (pytest.approx(0.3), 1)
    assert (by_l_min.value, by_l_min.details["label"]) == (pytest.approx(0.4), 0)
    assert (by_e_max.value, by_e_max.details["label"]) == (pytest.approx(0.4), 0)
    assert (by_l_max.value, by_l_max.details["label"]) == (pytest.approx(0.3), 1)
    # Label ties go to the first sentence (list.index of the max label in CONNER's code).
    tied = {("e1", S1): (0.1, 0.6, 0.3), ("e1", S2): (0.0, 0.9, 0.1)}
    assert _run(KNOWLEDGE, one, ScriptedNLI(tied), outer="max", outer_by="label").value == 0.3


def test_reference_pool_and_32_pair_truncation() -> None:
    gold = "Paris is the capital. It is in France."
    retrieved = [f"doc{i}" for i in range(40)]
    pool = asyncio.run(reference_evidence(gold, retrieved).evidence_for(S1, [S1]))
    assert pool == [["Paris is the capital.", "It is in France.", gold, *retrieved[:10]]]
    # With 40 retrieved passages kept, the pool is 3 + 40 = 43 and only the first 32 are scored.
    # The only entailing evidence, doc35, is pool item 38: beyond the cut.
    evidence = reference_evidence(gold, retrieved, retrieved_num=40)
    table: dict[tuple[str, str], Vector] = {("doc35", S1): (0.0, 0.1, 0.9)}
    nli = ScriptedNLI(table)
    ref = asyncio.run(factuality_async(S1, evidence, nli, FactualityConfig.reference()))
    assert len(nli.calls[0]) == 32 and ref.details["n_pairs"] == 32
    assert ref.value == 0.0 and ref.details["label"] == 1
    assert ref.details["outer"] == "max:label"
    assert ref.details["evidence"] == "gold+retrieved"
    paper = asyncio.run(factuality_async(S1, evidence, ScriptedNLI(table)))
    assert paper.value == 0.9 and paper.details["n_pairs"] == 43


def test_reference_config() -> None:
    assert FactualityConfig.reference() == FactualityConfig(
        outer="max", outer_by="label", max_pairs=32
    )
    assert FactualityConfig() == FactualityConfig(
        inner="max", outer="min", outer_by="entailment", max_pairs=None
    )


@pytest.mark.parametrize("knowledge", ["", "   ", "\n\n"])
def test_empty_knowledge_is_unmeasured(knowledge: str) -> None:
    nli = ScriptedNLI(TABLE)
    value = _run(knowledge, EVIDENCE, nli)
    assert value.value is None and "empty knowledge" in (value.reason or "")
    assert nli.calls == []


def test_sentence_without_evidence_is_unmeasured() -> None:
    nli = ScriptedNLI(TABLE)
    value = _run(KNOWLEDGE, FixedEvidence(["", "  "], name="blank"), nli)
    assert value.value is None
    assert value.reason == (
        "no evidence for 2 of 2 sentences (first: 'Paris is in France.') from blank"
    )
    assert nli.calls == []


def test_gold_evidence_is_sentences_then_passage() -> None:
    gold = gold_evidence("Paris is the capital. It is in France.")
    assert gold.name == "gold"
    assert (
        asyncio.run(gold.evidence_for("k", ["a", "b"]))
        == [["Paris is the capital.", "It is in France.", "Paris is the capital. It is in France."]]
        * 2
    )
    assert asyncio.run(gold_evidence(" ").evidence_for("k", ["a"])) == [[]]


class FakeSearcher:
    """Hit ``i`` of a query is passage ``(len(query) + i) % 4``, score ``1 / (i + 1)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], int]] = []

    def search(self, queries: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        self.calls.append((list(queries), k))
        return [[((len(q) + i) % 4, 1 / (i + 1)) for i in range(k)] for q in queries]


CORPUS = ["p0", "p1", "p2", "p3"]


def test_retrieved_evidence_per_sentence_and_per_knowledge() -> None:
    searcher = FakeSearcher()
    sentences = ["abcd", "abcde"]  # lengths 4 and 5 -> passages (0, 1) and (1, 2)
    per_sentence = RetrievedEvidence(searcher, CORPUS, k=2)
    assert per_sentence.name == "retrieved(k=2)"
    assert asyncio.run(per_sentence.evidence_for("x", sentences)) == [["p0", "p1"], ["p1", "p2"]]
    assert searcher.calls == [(["abcd", "abcde"], 2)]
    per_knowledge = RetrievedEvidence(searcher, CORPUS, k=3, query="knowledge")
    # the knowledge "abcdef" has length 6 -> passages 2, 3, 0 for every sentence
    assert asyncio.run(per_knowledge.evidence_for("abcdef", sentences)) == [["p2", "p3", "p0"]] * 2
    assert searcher.calls[-1] == (["abcdef"], 3)


def test_retriever_index_outside_the_corpus() -> None:
    evidence = RetrievedEvidence(FakeSearcher(), CORPUS[:2], k=4)
    with pytest.raises(DataError, match="outside the 2 passages"):
        asyncio.run(evidence.evidence_for("k", ["abcd"]))


def test_combined_evidence_concatenates_in_order() -> None:
    combined = CombinedEvidence(FixedEvidence(["a"], name="x"), FixedEvidence(["b", "c"], name="y"))
    assert combined.name == "x+y"
    assert asyncio.run(combined.evidence_for("k", ["s1", "s2"])) == [["a", "b", "c"]] * 2


def test_miscounting_sources_and_models_raise() -> None:
    class OneListOnly:
        name = "broken"

        async def evidence_for(self, knowledge: str, sentences: Sequence[str]) -> list[list[str]]:
            return [["e1"]]

    with pytest.raises(DataError, match="1 evidence lists for 2 sentences"):
        _run(KNOWLEDGE, OneListOnly(), ScriptedNLI(TABLE))

    class DropsOne(ScriptedNLI):
        async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
            return (await super().probabilities(pairs))[:-1]

    with pytest.raises(ModelError, match="5 probability vectors for 6 pairs"):
        _run(KNOWLEDGE, EVIDENCE, DropsOne(TABLE))


def _value(label: int, vector: Vector, counts: tuple[int, int, int] = (0, 0, 0)) -> MetricValue:
    c, n, e = vector
    details: dict[str, float | int | str | None] = {
        "factual_inconsistent": c,
        "non_verified": n,
        "factual_consistent": e,
        "label": label,
        "n_inconsistent_sentences": counts[0],
        "n_non_verified_sentences": counts[1],
        "n_consistent_sentences": counts[2],
    }
    return MetricValue(value=e, model="m", details=details)


def test_summary_ratios_and_means_over_measured_values() -> None:
    values = [
        _value(2, (0.0, 0.2, 0.8), (0, 0, 2)),
        _value(2, (0.1, 0.3, 0.6), (0, 1, 1)),
        _value(1, (0.2, 0.5, 0.3), (0, 3, 0)),
        _value(0, (0.7, 0.2, 0.1), (1, 0, 1)),
        MetricValue(value=None, reason="empty knowledge", model="m"),
    ]
    summary = factuality_summary(values)
    assert (summary.n, summary.n_unmeasured, summary.n_labels) == (5, 1, 4)
    assert summary.factual_consistent == 0.5
    assert summary.non_verified == 0.25 and summary.factual_inconsistent == 0.25
    # means: consistent (0.8 + 0.6 + 0.3 + 0.1) / 4 = 0.45; non-verified 1.2 / 4 = 0.3;
    # inconsistent 1.0 / 4 = 0.25
    assert summary.mean_factual_consistent == pytest.approx(0.45)
    assert summary.mean_non_verified == pytest.approx(0.3)
    assert summary.mean_factual_inconsistent == pytest.approx(0.25)
    assert summary.models == ("m",)
    # Pooled sentence labels (CONNER's outer=mean): counts (1, 4, 4) of 9 sentences.
    pooled = factuality_summary(values, labels="sentence")
    assert pooled.n_labels == 9
    assert pooled.factual_inconsistent == pytest.approx(1 / 9)
    assert pooled.non_verified == pytest.approx(4 / 9)
    assert pooled.factual_consistent == pytest.approx(4 / 9)


def test_summary_of_nothing_measured() -> None:
    summary = factuality_summary([MetricValue(value=None, reason="x", model="m")])
    assert summary.n_unmeasured == 1 and summary.factual_consistent is None
    assert summary.mean_factual_consistent is None and summary.models == ()


def test_lexical_end_to_end_on_a_gold_passage() -> None:
    gold = "Paris is the capital of France. It has a tower."
    knowledge = "Paris is the capital of France. Berlin is in Spain."
    value = asyncio.run(factuality_async(knowledge, gold_evidence(gold), LexicalNLI3()))
    # Sentence 1 is in the gold passage (entailment 1); sentence 2 is not (neutral 1); min.
    assert value.model == "lexical"
    assert value.value == 0.0 and value.details["label"] == 1
    assert value.details["n_consistent_sentences"] == 1


def test_tiny_hf_model_end_to_end(tmp_path: Path) -> None:
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)
    from citegraph.testing import build_tiny_nli_classifier

    path = build_tiny_nli_classifier(tmp_path / "nli", bias=[0.0, 1.0, 2.0])
    nli = nli3_model(f"hf:{path}", batch_size=4)
    value = asyncio.run(factuality_async(KNOWLEDGE, EVIDENCE, nli))
    # Every pair: logits (c, e, n) = (0, 1, 2) -> (0.090031, 0.665241, 0.244728), label 1.
    assert value.value == pytest.approx(0.244728, abs=1e-6)
    assert _parts(value) == pytest.approx((0.090031, 0.665241, 0.244728), abs=1e-6)
    assert value.details["label"] == 1 and value.model == f"hf:{path}"
