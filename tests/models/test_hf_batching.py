"""Length-sorted batching: how inputs are cut into batches and padded, and that every backend
(NLI, three-way NLI, T5 NLI, reranker, embeddings) gives the same numbers batched as one at a
time, on tiny seeded models and inputs of very different lengths (so padding matters)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.errors import ModelError  # noqa: E402
from citegraph.models import (  # noqa: E402
    HFNLI3,
    CrossEncoderReranker,
    HFClassifierNLI,
    NLIPair,
    TrueT5NLI,
    embedding_model,
)
from citegraph.models._hf_batching import length_batches, pad_rows  # noqa: E402
from citegraph.testing import (  # noqa: E402
    build_tiny_encoder,
    nli_tokenizer,
    save_model,
    t5_tokenizer,
    tiny_bert_classifier,
    tiny_t5,
)

LONG = " ".join(["stephen crane was born in newark , he wrote a novel ."] * 8)  # > 64 tokens
PAIRS = [
    NLIPair(premise="crane", hypothesis="writer"),
    NLIPair(premise=LONG, hypothesis="place of birth : newark"),
    NLIPair(premise="he died in paris .", hypothesis="place of death : paris"),
    NLIPair(premise="she", hypothesis=LONG),
    NLIPair(premise="stephen crane was born in 1871 in newark .", hypothesis="born : 1871"),
    NLIPair(premise="a", hypothesis="b"),
    NLIPair(premise="he wrote a novel", hypothesis="occupation : writer"),
]


def test_length_batches_sort_longest_first_and_cover_every_input_once() -> None:
    lengths = [3, 9, 1, 9, 4, 2, 7]
    # sorted: 9 9 7 4 3 2 1; three calls are needed, and (4 3)(2 1) pads less than (4 3 2)(1)
    assert length_batches(lengths, batch_size=3, call_cost=100) == [[1, 3, 6], [4, 0], [5, 2]]
    assert length_batches([], 4) == []
    for size in (1, 2, 5):
        batches = length_batches(lengths, size)
        assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
        assert all(1 <= len(b) <= size for b in batches)


def test_length_batches_keep_short_inputs_away_from_long_ones() -> None:
    # 64 MNLI texts (all-MiniLM-L6-v2 token counts): fixed batches of 32 pad to 3,808 tokens
    lengths = [6, 7, 7, 7, 8, 8, 9] + [10] * 6 + [11] * 7 + [12] * 4 + [13] + [14] * 4
    lengths += [15] * 3 + [16] + [17] * 6 + [18, 19, 19, 20, 21, 21, 23, 25, 25, 26, 28, 28]
    lengths += [32, 33, 33, 35, 39, 39, 44, 45, 47, 50, 54, 93, 104]
    batches = length_batches(lengths, 32)
    assert sum(len(b) * max(lengths[i] for i in b) for b in batches) == 1549
    assert len(batches) == 7
    # calls that cost nothing: every batch holds one length only
    assert all(len({lengths[i] for i in b}) == 1 for b in length_batches(lengths, 32, 0))


def test_pad_rows_pads_on_the_tokenizer_side() -> None:
    encoded = {"input_ids": [[5, 6, 7], [8]], "attention_mask": [[1, 1, 1], [1]]}
    tok = SimpleNamespace(pad_token_id=0, padding_side="right")
    right = pad_rows(encoded, [1, 0], tok, torch)
    assert right["input_ids"].tolist() == [[8, 0, 0], [5, 6, 7]]
    assert right["attention_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    tok.padding_side = "left"
    assert pad_rows(encoded, [1], tok, torch)["input_ids"].tolist() == [[8]]  # no padding
    assert pad_rows(encoded, [1, 0], tok, torch)["input_ids"].tolist() == [[0, 0, 8], [5, 6, 7]]
    tok.pad_token_id = None
    with pytest.raises(ModelError, match="no pad token"):
        pad_rows(encoded, [0, 1], tok, torch)


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    spread = tiny_bert_classifier()  # random (seed 0), scaled so that inputs matter
    with torch.no_grad():
        spread.classifier.weight.mul_(300.0)
    return {
        "bert": save_model(spread, nli_tokenizer(), tmp_path_factory.mktemp("spread")),
        "t5": save_model(tiny_t5(), t5_tokenizer(), tmp_path_factory.mktemp("t5")),
        "encoder": build_tiny_encoder(tmp_path_factory.mktemp("encoder")),
    }


def _nli(path: Path, size: int) -> list[float]:
    return [v.score or 0.0 for v in HFClassifierNLI(path, batch_size=size).entails_sync(PAIRS)]


def _nli3(path: Path, size: int) -> list[float]:
    probs = HFNLI3(path, batch_size=size).probabilities_sync(PAIRS)
    return [x for p in probs for x in p.vector]


def _t5(path: Path, size: int) -> list[float]:
    verdicts = TrueT5NLI(path, batch_size=size).entails_sync(PAIRS)
    return [x for v in verdicts for x in (v.score or 0.0, float(v.entailed))]


def _reranker(path: Path, size: int) -> list[float]:
    pairs = [(p.hypothesis, p.premise) for p in PAIRS]
    return CrossEncoderReranker(path, batch_size=size, label_index=1).score_sync(pairs)


def _embed(path: Path, size: int) -> list[float]:
    texts = [t for p in PAIRS for t in (p.premise, p.hypothesis)]
    return [x for v in embedding_model(f"hf:{path}").encode(texts, batch_size=size) for x in v]


@pytest.mark.parametrize(
    ("run", "model"),
    [(_nli, "bert"), (_nli3, "bert"), (_t5, "t5"), (_reranker, "bert"), (_embed, "encoder")],
    ids=["nli", "nli3", "t5-nli", "reranker", "embeddings"],
)
def test_batched_equals_one_at_a_time(run: object, model: str, dirs: dict[str, Path]) -> None:
    assert callable(run)
    one = run(dirs[model], 1)
    assert len(set(one)) > 2  # the inputs do change the numbers
    for size in (2, 3, 32):
        assert run(dirs[model], size) == pytest.approx(one, abs=1e-5)
