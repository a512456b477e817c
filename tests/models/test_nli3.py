"""Three-way NLI probabilities: the vector type, the HF backend on tiny BERT classifiers with
hand-set logits (weights 0, bias chosen: the logits are the bias for any input), the lexical
stand-in and the factory. A real-model MNLI check runs only when CITEGRAPH_NLI_MODEL is set."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from citegraph.errors import ConfigError
from citegraph.models import NLI3Model, NLIModel, NLIPair, NLIProbs, nli3_model
from citegraph.models.nli import HFNLI3, LexicalNLI3, find_three_way_indices

PAIRS = [
    NLIPair(premise="He was born in Newark.", hypothesis="place of birth: Newark"),
    NLIPair(premise="She died in Paris.", hypothesis="place of death: Newark"),
    NLIPair(premise="Stephen Crane wrote a novel.", hypothesis="occupation: writer"),
    NLIPair(premise="unknown words only zzz", hypothesis="qqq"),
]


def test_probs_label_is_the_first_argmax_in_conner_order() -> None:
    assert NLIProbs(contradiction=0.1, neutral=0.2, entailment=0.7).label == 2
    assert NLIProbs(contradiction=0.6, neutral=0.2, entailment=0.2).label_name == "contradiction"
    # Ties go to the lower index, as numpy.argmax in CONNER's code.
    assert NLIProbs(contradiction=0.2, neutral=0.4, entailment=0.4).label == 1
    assert NLIProbs(contradiction=0.1, neutral=0.2, entailment=0.7).vector == (0.1, 0.2, 0.7)


def test_probs_must_be_a_distribution() -> None:
    with pytest.raises(ValidationError, match="sum to 1"):
        NLIProbs(contradiction=0.5, neutral=0.5, entailment=0.5)
    with pytest.raises(ValidationError):
        NLIProbs(contradiction=-0.1, neutral=0.6, entailment=0.5)


def test_find_three_way_indices_by_name() -> None:
    assert find_three_way_indices({0: "contradiction", 1: "entailment", 2: "neutral"}) == (0, 2, 1)
    assert find_three_way_indices({"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}) == (
        2,
        1,
        0,
    )
    with pytest.raises(ConfigError, match="LABEL_0"):
        find_three_way_indices({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ConfigError, match="not_entailment"):
        find_three_way_indices({0: "not_entailment", 1: "entailment"})


def test_lexical_three_way_is_labelled_lexical() -> None:
    model = LexicalNLI3()
    assert isinstance(model, NLI3Model)
    assert model.name == "lexical"
    probs = asyncio.run(model.probabilities(PAIRS[:2]))
    # Pair 0 states Newark -> (0, 0, 1); pair 1 does not -> (0, 1, 0). Never a contradiction.
    assert [p.vector for p in probs] == [(0.0, 0.0, 1.0), (0.0, 1.0, 0.0)]
    assert nli3_model("lexical", year_only_dates=True).name == "lexical(year_only_dates)"


def test_factory_errors() -> None:
    with pytest.raises(ConfigError, match="unknown three-way NLI spec"):
        nli3_model("t5:some/model")
    with pytest.raises(ConfigError, match="no model name"):
        nli3_model("hf: ")
    with pytest.raises(ConfigError, match="unknown option"):
        nli3_model("lexical", batch_size=2)


# --- the Hugging Face backend on tiny classifiers -------------------------------------------


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)
    from citegraph.testing import build_tiny_nli_classifier

    def build(name: str, **kwargs: object) -> Path:
        return build_tiny_nli_classifier(tmp_path_factory.mktemp(name), **kwargs)  # type: ignore[arg-type]

    return {
        "random": build("random"),
        # default labels {0: contradiction, 1: entailment, 2: neutral}; logits [0, 1, 2]
        "mild": build("mild", bias=[0.0, 1.0, 2.0]),
        "reordered": build(
            "reordered",
            bias=[3.0, 0.0, 0.0],
            id2label={0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"},
        ),
        "generic": build(
            "generic", bias=[0.0, 0.0, 3.0], id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
        ),
        "two_way": build(
            "two_way", bias=[1.0, 0.0], id2label={0: "not_entailment", 1: "entailment"}
        ),
    }


def _probs(model: HFNLI3, pairs: list[NLIPair]) -> list[NLIProbs]:
    return asyncio.run(model.probabilities(pairs))


def test_softmax_probabilities_in_conner_order(tiny_dirs: dict[str, Path]) -> None:
    model = HFNLI3(tiny_dirs["mild"], batch_size=3)
    assert model.class_indices == (0, 2, 1)
    assert model.name == f"hf:{tiny_dirs['mild']}"
    # Logits (contradiction, entailment, neutral) = (0, 1, 2); Z = 1 + e + e^2 = 11.107338.
    # P(c) = 1 / Z = 0.090031, P(e) = e / Z = 0.244728, P(n) = e^2 / Z = 0.665241.
    probs = _probs(model, PAIRS)
    assert len(probs) == 4
    for p in probs:
        assert p.contradiction == pytest.approx(0.090031, abs=1e-6)
        assert p.neutral == pytest.approx(0.665241, abs=1e-6)
        assert p.entailment == pytest.approx(0.244728, abs=1e-6)
        assert p.label == 1


def test_label_order_is_read_from_id2label(tiny_dirs: dict[str, Path]) -> None:
    model = HFNLI3(tiny_dirs["reordered"])
    assert model.class_indices == (2, 1, 0)
    # Logits (entailment, neutral, contradiction) = (3, 0, 0); Z = e^3 + 2 = 22.085537.
    (p,) = _probs(model, PAIRS[:1])
    assert p.entailment == pytest.approx(20.085537 / 22.085537, abs=1e-6)  # 0.909443
    assert p.neutral == pytest.approx(1 / 22.085537, abs=1e-6)  # 0.045279
    assert p.contradiction == pytest.approx(1 / 22.085537, abs=1e-6)
    assert p.label == 2


def test_unmappable_labels_are_a_config_error(tiny_dirs: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="LABEL_0") as info:
        HFNLI3(tiny_dirs["generic"])
    assert "LABEL_2" in str(info.value) and "class_indices" in str(info.value)
    with pytest.raises(ConfigError, match="not_entailment"):
        HFNLI3(tiny_dirs["two_way"])
    with pytest.raises(ConfigError, match="permutation"):
        HFNLI3(tiny_dirs["generic"], class_indices=(0, 0, 2))
    # Mapped by hand: class 2 carries the bias 3, and is declared the entailment class.
    (p,) = _probs(HFNLI3(tiny_dirs["generic"], class_indices=(0, 1, 2)), PAIRS[:1])
    assert p.entailment == pytest.approx(0.909443, abs=1e-6)


def test_batching_matches_an_independent_computation(tiny_dirs: dict[str, Path]) -> None:
    import torch
    import transformers

    path = tiny_dirs["random"]
    batched = _probs(HFNLI3(path, batch_size=3), PAIRS)
    single = _probs(HFNLI3(path, batch_size=1), PAIRS)
    tok = transformers.AutoTokenizer.from_pretrained(path)
    ref = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    for pair, b, s in zip(PAIRS, batched, single, strict=True):
        with torch.inference_mode():
            logits = ref(**tok([pair.premise], [pair.hypothesis], return_tensors="pt")).logits
        c, e, n = torch.softmax(logits.double(), dim=-1)[0].tolist()  # labels c, e, n
        assert b.vector == pytest.approx((c, n, e), abs=1e-5)
        assert s.vector == pytest.approx(b.vector, abs=1e-5)
    # The random model gives different inputs different vectors (so the check bites).
    assert len({round(p.entailment, 6) for p in batched}) > 1
    assert _probs(HFNLI3(path), []) == []


def test_hf_three_way_model_is_also_an_nli_model(tiny_dirs: dict[str, Path]) -> None:
    model = nli3_model(f"hf:{tiny_dirs['reordered']}", batch_size=2)
    assert isinstance(model, HFNLI3) and isinstance(model, NLIModel)
    verdicts = asyncio.run(model.entails(PAIRS[:3]))
    assert all(v.entailed for v in verdicts)
    assert verdicts[0].score == pytest.approx(0.909443, abs=1e-6)
    mild = asyncio.run(HFNLI3(tiny_dirs["mild"]).entails(PAIRS[:1]))
    assert not mild[0].entailed  # neutral is the argmax


@pytest.mark.slow
def test_three_way_accuracy_on_mnli_dev_with_a_real_model(data_dir: Path) -> None:
    spec = os.environ.get("CITEGRAPH_NLI_MODEL")
    if not spec:
        pytest.skip("no real NLI model given (set CITEGRAPH_NLI_MODEL to a 3-way MNLI classifier)")
    kind = spec.split(":", 1)[0] if ":" in spec.split("/")[0] else "hf"
    if kind != "hf":
        pytest.skip(f"CITEGRAPH_NLI_MODEL={spec!r} is not a sequence classifier ('hf:<path>')")
    model = nli3_model(spec if spec.startswith("hf:") else f"hf:{spec}", batch_size=16)
    rows = (data_dir / "nli" / "mnli_dev_matched_with_bert_correct_counts.tsv").read_text()
    pairs, gold = [], []
    for line in rows.splitlines()[1:201]:
        _, premise, hypothesis, label, _ = line.split("\t")
        pairs.append(NLIPair(premise=premise, hypothesis=hypothesis))
        gold.append(("contradiction", "neutral", "entailment").index(label))
    probs = asyncio.run(model.probabilities(pairs))
    accuracy = sum(p.label == g for p, g in zip(probs, gold, strict=True)) / len(gold)
    # Real MNLI models reach ~0.85-0.9 three-way accuracy; 0.75 is a loose floor.
    assert accuracy >= 0.75, f"3-way accuracy {accuracy:.3f} on 200 MNLI dev pairs"
