"""Cross-encoder reranker and single-text scorer, on tiny BERT classifiers built by the tests.

The models come from ``_tiny_models`` (seeded, 1 layer, 16 wide, 64 positions) and are loaded
back through the real loading code. With the classifier weights zeroed and the bias set by hand
the logits equal the bias for any input, so every score is known exactly:

- 2 labels, bias [0, 1]: softmax[1] = e / (1 + e) = 0.7310585786;
- 1 label, bias [0.5]: sigmoid(0.5) = 1 / (1 + e^-0.5) = 0.6224593312 (reranker), raw 0.5 (text);
- 3 labels, bias [0, 1, 2]: softmax[2] = e^2 / (1 + e + e^2) = 7.389056 / 11.107338 = 0.6652410.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.errors import ConfigError, MissingDependency, ModelError  # noqa: E402
from citegraph.models.rerank._reranker import (  # noqa: E402
    CrossEncoderReranker,
    HFTextScorer,
    reranker_model,
)
from citegraph.testing import (  # noqa: E402
    build_tiny_nli_classifier,
    nli_tokenizer,
    save_model,
    tiny_bert_classifier,
)

TWO = {0: "not_relevant", 1: "relevant"}
ONE = {0: "LABEL_0"}
PAIRS = [
    ("where was stephen crane born", "stephen crane was born in newark ."),
    ("who wrote the novel", "she died in paris ."),
    ("crane", "the writer wrote a novel , he died in paris in 1871 ."),
]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    def build(name: str, **kwargs: object) -> Path:
        return build_tiny_nli_classifier(tmp_path_factory.mktemp(name), **kwargs)  # type: ignore[arg-type]

    spread = tiny_bert_classifier(TWO)  # random (seed 0); scaled so that inputs matter
    with torch.no_grad():
        spread.classifier.weight.mul_(300.0)
    return {
        "two": build("two", bias=[0.0, 1.0], id2label=TWO),
        "one": build("one", bias=[0.5], id2label=ONE),
        "three": build("three", bias=[0.0, 1.0, 2.0]),
        "random": save_model(spread, nli_tokenizer(), tmp_path_factory.mktemp("random")),
    }


def test_two_label_score_is_softmax_of_class_one(dirs: dict[str, Path]) -> None:
    reranker = CrossEncoderReranker(dirs["two"], batch_size=2)
    scores = asyncio.run(reranker.score(PAIRS))
    assert scores == pytest.approx([0.7310585786] * 3, abs=1e-6)
    assert reranker.readout == "softmax[1]" and reranker.labels == TWO
    assert reranker.name == f"hf:{dirs['two']}"
    assert reranker.settings["max_length"] == 64  # 512 lowered to the tiny model's positions
    assert asyncio.run(reranker.score([])) == []


def test_one_label_score_is_sigmoid_and_text_scorer_raw(dirs: dict[str, Path]) -> None:
    reranker = CrossEncoderReranker(dirs["one"])
    assert reranker.readout == "sigmoid"
    assert reranker.score_sync(PAIRS[:2]) == pytest.approx([0.6224593312] * 2, abs=1e-6)
    text = HFTextScorer(dirs["one"])
    assert text.readout == "logit"
    assert asyncio.run(text.score(["he wrote a novel .", "paris"])) == pytest.approx([0.5, 0.5])


def test_many_labels_need_label_index(dirs: dict[str, Path]) -> None:
    with pytest.raises(ModelError, match="label_index"):
        CrossEncoderReranker(dirs["three"])
    reranker = CrossEncoderReranker(dirs["three"], label_index=2)
    assert reranker.score_sync(PAIRS[:1]) == pytest.approx([0.6652410], abs=1e-6)
    with pytest.raises(ConfigError):
        CrossEncoderReranker(dirs["three"], label_index=3)
    with pytest.raises(ConfigError):
        HFTextScorer(dirs["one"], label_index=1)


def test_random_model_matches_plain_transformers_and_batching(dirs: dict[str, Path]) -> None:
    path = dirs["random"]
    tok = transformers.AutoTokenizer.from_pretrained(path)
    ref = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    expected = []
    with torch.inference_mode():
        for query, passage in PAIRS:
            logits = ref(**tok(query, passage, return_tensors="pt")).logits
            expected.append(float(torch.softmax(logits, dim=-1)[0, 1]))
    assert min(expected) < 0.45 or max(expected) > 0.55  # the inputs matter
    assert len({round(e, 3) for e in expected}) == 3
    one_by_one = CrossEncoderReranker(path, batch_size=1).score_sync(PAIRS)
    batched = CrossEncoderReranker(path, batch_size=3).score_sync(PAIRS)
    assert one_by_one == pytest.approx(expected, abs=1e-5)
    assert batched == pytest.approx(expected, abs=1e-5)
    # the pair order matters (query is text_a): swapping changes the token types
    query, passage = PAIRS[0]
    with torch.inference_mode():
        logits = ref(**tok(passage, query, return_tensors="pt")).logits
    swapped_expected = float(torch.softmax(logits, dim=-1)[0, 1])
    swapped = CrossEncoderReranker(path).score_sync([(passage, query)])
    assert swapped == pytest.approx([swapped_expected], abs=1e-6)
    assert abs(swapped_expected - expected[0]) > 1e-5


def test_overlong_pairs_are_truncated(dirs: dict[str, Path]) -> None:
    long_passage = " ".join(["paris"] * 300)  # far beyond the 64 positions
    scores = CrossEncoderReranker(dirs["two"]).score_sync([("where", long_passage)])
    assert scores == pytest.approx([0.7310585786], abs=1e-6)


def test_factory_closing_and_errors(dirs: dict[str, Path], tmp_path: Path) -> None:
    reranker = reranker_model(f"hf:{dirs['two']}", batch_size=4)
    assert isinstance(reranker, CrossEncoderReranker)
    for spec in ("nli:x", "hf:", "monobert"):
        with pytest.raises(ConfigError):
            reranker_model(spec)
    with pytest.raises(ConfigError, match="unknown option"):
        reranker_model(f"hf:{dirs['two']}", threshold=0.5)
    with pytest.raises(ConfigError):
        CrossEncoderReranker(dirs["two"], batch_size=0)
    with pytest.raises(ModelError):
        CrossEncoderReranker(tmp_path / "missing")
    asyncio.run(reranker.aclose())
    with pytest.raises(ModelError, match="closed"):
        reranker.score_sync(PAIRS[:1])


def test_single_output_model_saved_from_scratch(tmp_path: Path) -> None:
    model = tiny_bert_classifier(ONE)  # random weights, one output: raw logit
    path = save_model(model, nli_tokenizer(), tmp_path / "reg")
    texts = ["he was born in newark .", "she died in paris ."]
    tok = transformers.AutoTokenizer.from_pretrained(path)
    ref = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.inference_mode():
        expected = [float(ref(**tok(t, return_tensors="pt")).logits[0, 0]) for t in texts]
    assert HFTextScorer(path, batch_size=2).score_sync(texts) == pytest.approx(expected, abs=1e-5)


def test_missing_transformers_names_the_nli_extra(
    dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependency) as info:
        CrossEncoderReranker(dirs["two"])
    assert info.value.extra == "nli"
