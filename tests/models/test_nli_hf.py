"""The Hugging Face cross-encoder backend, on tiny randomly initialised BERT classifiers.

Each model is built by ``_tiny_models`` (seeded), saved with an offline WordLevel tokenizer into a
temporary directory, and loaded back through the real loading code (AutoTokenizer +
AutoModelForSequenceClassification). Decision rules are tested by setting the classifier's
weights to 0 and its bias by hand, so the logits are known exactly.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.errors import ConfigError, MissingDependency, ModelError  # noqa: E402
from citegraph.models import NLIPair, NLIVerdict, nli_model  # noqa: E402
from citegraph.models.nli import CascadeNLI, HFClassifierNLI, LexicalNLI, find_entailment_index  # noqa: E402
from citegraph.testing import NLI_LABELS, build_tiny_nli_classifier  # noqa: E402

PAIRS = [
    NLIPair(premise="He was born in Newark.", hypothesis="place of birth: Newark"),
    NLIPair(premise="She died in Paris.", hypothesis="place of death: Paris"),
    NLIPair(premise="Stephen Crane wrote a novel.", hypothesis="occupation: writer"),
    NLIPair(premise="He was born in 1871.", hypothesis="place of birth: Paris"),
    NLIPair(premise="Crane", hypothesis="writer"),
    NLIPair(
        premise="Stephen Crane was born in Newark , he wrote a novel , he died in Paris .",
        hypothesis="place of death: Newark",
    ),
    NLIPair(premise="unknown words only zzz", hypothesis="qqq"),
]


@pytest.fixture(scope="session")
def biased_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Classifiers with weights 0 and a hand-set bias: the logits are the bias for any input."""
    biases = {"neutral": [0.0, 0.0, 10.0], "mild": [0.0, 1.0, 2.0]}
    dirs = {
        name: build_tiny_nli_classifier(tmp_path_factory.mktemp(f"bert_{name}"), bias=bias)
        for name, bias in biases.items()
    }
    # entail_bias=10 is the bias [0, 10, 0]
    dirs["entail"] = build_tiny_nli_classifier(tmp_path_factory.mktemp("bert_e"), entail_bias=10)
    return dirs


def _run(model: HFClassifierNLI, pairs: list[NLIPair]) -> list:
    return asyncio.run(model.entails(pairs))


def test_loader_reads_entailment_index_from_id2label(tiny_nli_classifier_dir: Path) -> None:
    model = HFClassifierNLI(tiny_nli_classifier_dir)
    assert model.entailment_index == 1
    assert model.labels == NLI_LABELS
    assert model.name == f"hf:{tiny_nli_classifier_dir}"


def test_score_is_softmax_of_entailment_logit(tiny_nli_classifier_dir: Path) -> None:
    model = HFClassifierNLI(tiny_nli_classifier_dir)
    verdicts = _run(model, PAIRS[:1])
    # Independent computation: same files, plain transformers, P(class 1) and argmax.
    tok = transformers.AutoTokenizer.from_pretrained(tiny_nli_classifier_dir)
    ref = transformers.AutoModelForSequenceClassification.from_pretrained(
        tiny_nli_classifier_dir
    ).eval()
    with torch.inference_mode():
        logits = ref(**tok([PAIRS[0].premise], [PAIRS[0].hypothesis], return_tensors="pt")).logits
    probs = torch.softmax(logits, dim=-1)[0]
    assert verdicts[0].score == pytest.approx(float(probs[1]), abs=1e-6)
    assert verdicts[0].entailed == (int(logits.argmax()) == 1)
    assert verdicts[0].source == f"hf:{tiny_nli_classifier_dir}"


def test_batching_matches_one_by_one_and_is_deterministic(tiny_nli_classifier_dir: Path) -> None:
    batched = _run(HFClassifierNLI(tiny_nli_classifier_dir, batch_size=3), PAIRS)
    single = _run(HFClassifierNLI(tiny_nli_classifier_dir, batch_size=1), PAIRS)
    again = _run(HFClassifierNLI(tiny_nli_classifier_dir, batch_size=3), PAIRS)
    assert len(batched) == len(PAIRS)
    assert [v.entailed for v in batched] == [v.entailed for v in single]
    for b, s in zip(batched, single, strict=True):
        assert b.score == pytest.approx(s.score, abs=1e-5)
    assert batched == again
    # The random model gives different scores to different inputs (so the check above bites).
    assert len({round(v.score, 6) for v in batched}) > 1


def test_long_inputs_are_cut_to_the_position_limit(tiny_nli_classifier_dir: Path) -> None:
    # 200 + 5 tokens would overflow the 64 position embeddings; max_length=512 is lowered to 64.
    long = NLIPair(premise=" ".join(["newark"] * 200), hypothesis="place of birth: newark")
    default = _run(HFClassifierNLI(tiny_nli_classifier_dir), [long])
    assert default == _run(HFClassifierNLI(tiny_nli_classifier_dir, max_length=64), [long])


def test_empty_input_gives_no_verdicts(tiny_nli_classifier_dir: Path) -> None:
    assert _run(HFClassifierNLI(tiny_nli_classifier_dir), []) == []


def test_wrong_verdict_count_is_a_model_error(tiny_nli_classifier_dir: Path) -> None:
    class DropsOne(HFClassifierNLI):
        def _batch(self, inputs: dict[str, Any]) -> list[NLIVerdict]:
            return super()._batch(inputs)[:-1]

    # every batch of n pairs gives n - 1 verdicts; the error names the model
    model = DropsOne(tiny_nli_classifier_dir, batch_size=3)
    with pytest.raises(ModelError, match=r"^hf:.*: \d+ results for a batch of \d+ inputs"):
        _run(model, PAIRS)


def test_argmax_decision_follows_the_classifier_bias(biased_dirs: dict[str, Path]) -> None:
    # Weights 0, bias [0, 10, 0]: logits [0, 10, 0] for every input; argmax = 1 = entailment.
    # P(entail) = e^10 / (e^10 + 2) = 22026.466 / 22028.466 = 0.9999092.
    entail = _run(HFClassifierNLI(biased_dirs["entail"], batch_size=4), PAIRS)
    assert all(v.entailed for v in entail)
    assert entail[0].score == pytest.approx(0.9999092, abs=1e-6)
    # Bias [0, 0, 10]: argmax = 2 = neutral; P(entail) = 1 / (e^10 + 2) = 4.5396e-5.
    neutral = _run(HFClassifierNLI(biased_dirs["neutral"], batch_size=4), PAIRS)
    assert not any(v.entailed for v in neutral)
    assert neutral[0].score == pytest.approx(4.5396e-5, rel=1e-3)


def test_negative_entail_bias_never_entails(tmp_path: Path) -> None:
    # Logits [0, -10, 0]: argmax is 0 (contradiction, the first maximum);
    # P(entail) = e^-10 / (e^-10 + 2) = 4.53999e-5 / 2.0000454 = 2.26995e-5.
    path = build_tiny_nli_classifier(tmp_path / "never", entail_bias=-10.0)
    verdicts = _run(HFClassifierNLI(path, batch_size=4), PAIRS)
    assert not any(v.entailed for v in verdicts)
    assert verdicts[0].score == pytest.approx(2.26995e-5, rel=1e-4)


def test_threshold_decision(biased_dirs: dict[str, Path]) -> None:
    # Logits [0, 1, 2]: P(entail) = e / (1 + e + e^2) = 2.71828 / 11.10734 = 0.244728;
    # argmax is 2 (neutral), so the default rule says not entailed.
    path = biased_dirs["mild"]
    (default,) = _run(HFClassifierNLI(path), PAIRS[:1])
    assert default.score == pytest.approx(0.244728, abs=1e-5)
    assert not default.entailed
    assert _run(HFClassifierNLI(path, threshold=0.2), PAIRS[:1])[0].entailed
    assert not _run(HFClassifierNLI(path, threshold=0.3), PAIRS[:1])[0].entailed


def test_find_entailment_index_by_name() -> None:
    assert find_entailment_index({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}) == 0
    assert find_entailment_index({"0": "not_entailment", "1": "entailment"}) == 1
    assert find_entailment_index({0: "neutral", 1: "contradiction", 2: "Entails"}) == 2
    with pytest.raises(ModelError, match="not_entailment"):
        find_entailment_index({0: "not_entailment", 1: "other"})


def test_model_without_entailment_label(tmp_path: Path) -> None:
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    path = build_tiny_nli_classifier(tmp_path / "generic", bias=[0.0, 0.0, 10.0], id2label=generic)
    with pytest.raises(ModelError, match="LABEL_0") as info:
        HFClassifierNLI(path)
    assert "LABEL_2" in str(info.value) and "entailment_index" in str(info.value)
    # An explicit index works: class 2 carries the bias, so everything is entailed.
    model = HFClassifierNLI(path, entailment_index=2)
    assert all(v.entailed for v in _run(model, PAIRS[:3]))
    with pytest.raises(ConfigError, match="outside"):
        HFClassifierNLI(path, entailment_index=3)


def test_two_way_model(tmp_path: Path) -> None:
    labels = {0: "not_entailment", 1: "entailment"}
    path = build_tiny_nli_classifier(tmp_path / "two_way", bias=[10.0, 0.0], id2label=labels)
    nli = HFClassifierNLI(path)
    assert nli.entailment_index == 1
    assert not any(v.entailed for v in _run(nli, PAIRS[:2]))


def test_missing_and_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        HFClassifierNLI(tmp_path / "no_such_model")
    afile = tmp_path / "weights.bin"
    afile.write_text("x")
    with pytest.raises(ModelError, match="is a file"):
        HFClassifierNLI(afile)
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    with pytest.raises(ModelError, match="could not load the tokenizer"):
        HFClassifierNLI(empty)
    with pytest.raises(ConfigError):
        HFClassifierNLI("")
    with pytest.raises(ConfigError, match="threshold"):
        HFClassifierNLI(tmp_path, threshold=1.5)


def test_hub_id_offline_is_a_model_error() -> None:
    # conftest sets HF_HUB_OFFLINE=1, so the hub lookup fails fast without network.
    with pytest.raises(ModelError, match="hub lookup failed"):
        HFClassifierNLI("citegraph-tests/no-such-model")


def test_missing_transformers_names_the_extra(
    tiny_nli_classifier_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import now raises ImportError
    with pytest.raises(MissingDependency) as info:
        HFClassifierNLI(tiny_nli_classifier_dir)
    assert info.value.extra == "nli" and "citegraph[nli]" in str(info.value)


def test_factory_and_cascade(biased_dirs: dict[str, Path]) -> None:
    path = biased_dirs["neutral"]  # the model never entails
    model = nli_model(f"hf:{path}", batch_size=2)
    assert isinstance(model, HFClassifierNLI) and model.name == f"hf:{path}"
    cascade = nli_model(f"lexical+hf:{path}")
    assert isinstance(cascade, CascadeNLI) and cascade.name == f"lexical+hf:{path}"
    verdicts = asyncio.run(cascade.entails(PAIRS[:4]))
    # Lexical accepts pairs 0 (Newark) and 1 (Paris); 2 and 3 go to the model, which rejects.
    assert [v.entailed for v in verdicts] == [True, True, False, False]
    assert [v.source for v in verdicts] == ["lexical", "lexical", f"hf:{path}", f"hf:{path}"]
    assert isinstance(nli_model("lexical"), LexicalNLI)
    with pytest.raises(ConfigError, match="unknown NLI spec"):
        nli_model("bert:x")
    with pytest.raises(ConfigError, match="no model name"):
        nli_model("hf:")
    with pytest.raises(ConfigError, match="unknown option"):
        nli_model(f"hf:{path}", batchsize=2)


@pytest.mark.slow
def test_accuracy_on_mnli_dev_with_a_real_model(data_dir: Path) -> None:
    spec = os.environ.get("CITEGRAPH_NLI_MODEL")
    if not spec:
        pytest.skip("no real NLI model given (set CITEGRAPH_NLI_MODEL)")
    model = nli_model(spec if ":" in spec.split("/")[0] else f"hf:{spec}", batch_size=16)
    rows = (data_dir / "nli" / "mnli_dev_matched_with_bert_correct_counts.tsv").read_text()
    pairs, gold = [], []
    for line in rows.splitlines()[1:201]:
        _, premise, hypothesis, label, _ = line.split("\t")
        pairs.append(NLIPair(premise=premise, hypothesis=hypothesis))
        gold.append(label == "entailment")
    verdicts = asyncio.run(model.entails(pairs))
    accuracy = sum(v.entailed == g for v, g in zip(verdicts, gold, strict=True)) / len(gold)
    # A real MNLI model separates entailment from the rest at ~0.9; 0.75 is a loose floor.
    assert accuracy >= 0.75, f"entailment-vs-rest accuracy {accuracy:.3f} on 200 MNLI dev pairs"
