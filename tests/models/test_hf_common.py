"""Model loading shared by the transformers backends: the fast attention (SDPA) is asked for, and
an architecture without it (DeBERTa-v2 in transformers 5) still loads, with its own attention."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.models import NLIPair  # noqa: E402
from citegraph.models.hf._common import FAST_ATTENTION, fast_attention  # noqa: E402
from citegraph.models.nli import HFClassifierNLI  # noqa: E402
from citegraph.testing import NLI_LABELS, NLI_VOCAB, nli_tokenizer, save_model  # noqa: E402


def test_fast_attention_asks_for_sdpa_and_falls_back_on_refusal() -> None:
    calls: list[dict[str, Any]] = []

    def refusing(path: str, **kwargs: Any) -> str:
        calls.append(kwargs)
        if "attn_implementation" in kwargs:
            raise ValueError("does not support scaled_dot_product_attention")
        return f"loaded {path}"

    assert fast_attention(refusing)("m", dtype="x") == "loaded m"
    assert calls == [{"attn_implementation": FAST_ATTENTION, "dtype": "x"}, {"dtype": "x"}]
    calls.clear()
    assert fast_attention(lambda path, **kw: kw)("m") == {"attn_implementation": "sdpa"}

    def broken(path: str, **kwargs: Any) -> None:
        raise ValueError(f"bad config {sorted(kwargs)}")

    with pytest.raises(ValueError, match=r"bad config \[\]"):  # the second error surfaces
        fast_attention(broken)("m")


def test_bert_loads_with_sdpa(tiny_nli_classifier_dir: Path) -> None:
    model = HFClassifierNLI(tiny_nli_classifier_dir)
    assert model._model.config._attn_implementation == "sdpa"


def test_deberta_v2_without_sdpa_loads_with_its_own_attention(tmp_path: Path) -> None:
    config = transformers.DebertaV2Config(
        vocab_size=len(NLI_VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        id2label=dict(NLI_LABELS),
        label2id={v: k for k, v in NLI_LABELS.items()},
    )
    torch.manual_seed(0)
    model = transformers.DebertaV2ForSequenceClassification(config).eval()
    path = save_model(model, nli_tokenizer(), tmp_path / "deberta")
    nli = HFClassifierNLI(path)
    assert nli._model.config._attn_implementation == "eager"
    assert nli.entailment_index == 1
    pair = NLIPair(premise="he was born in newark .", hypothesis="place of birth : newark")
    (verdict,) = nli.entails_sync([pair])
    assert verdict.score is not None and 0.0 < verdict.score < 1.0
