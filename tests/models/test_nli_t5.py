"""The TRUE-style T5 backend, on tiny T5ForConditionalGeneration models built and saved here.

To force what the model generates without patching code, the decoder is made transparent: every
attention and feed-forward output projection is zeroed, so the decoder's final hidden state is the
RMS-normalised embedding of its input token (times ``d ** -0.5``: T5 rescales decoder outputs).
transformers 5 always ties ``lm_head`` to the embeddings, so the logits at a step are
``E @ h``. With only three non-zero embedding rows, on two spare dimensions A and B::

    E[pad] = e_A      E["1"] = 2 e_A + e_B      E[eos] = 10 e_B

step 1 (input pad, ``h = e_A``) gives logits pad 1, "1" 2, all others 0: greedy picks "1";
step 2 (input "1", ``h = (2 e_A + e_B) / sqrt(5)``) gives pad 0.89, "1" 2.24, eos 4.47: it stops.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.errors import ConfigError, ModelError  # noqa: E402
from citegraph.models import NLIPair, TrueT5NLI, nli_model  # noqa: E402
from citegraph.testing import T5_VOCAB, save_model, t5_tokenizer, tiny_t5  # noqa: E402

VOCAB = T5_VOCAB
V = len(VOCAB)  # 21
D_MODEL = 24

PAIRS = [
    NLIPair(premise="He was born in Newark.", hypothesis="place of birth: Newark"),
    NLIPair(premise="She died in Paris.", hypothesis="place of death: Paris"),
    NLIPair(premise="He died.", hypothesis="place of birth: Paris"),
    NLIPair(premise="She was born in Paris . He died in Newark .", hypothesis="death: Newark"),
    NLIPair(premise="zzz", hypothesis="qqq"),
]


def _t5() -> transformers.T5ForConditionalGeneration:
    return tiny_t5(D_MODEL)


def _forced(answer: str) -> transformers.T5ForConditionalGeneration:
    """A T5 whose greedy output is ``answer`` then end of sequence, for any input."""
    model = _t5()
    a, b = D_MODEL - 2, D_MODEL - 1  # the two spare dimensions
    with torch.no_grad():
        for block in model.decoder.block:
            block.layer[0].SelfAttention.o.weight.zero_()
            block.layer[1].EncDecAttention.o.weight.zero_()
            block.layer[2].DenseReluDense.wo.weight.zero_()
        model.decoder.final_layer_norm.weight.fill_(1.0)
        emb = model.shared.weight
        emb.zero_()
        emb[VOCAB["<pad>"], a] = 1.0
        emb[VOCAB[answer], a] = 2.0
        emb[VOCAB[answer], b] = 1.0
        emb[VOCAB["</s>"], b] = 10.0
    assert model.lm_head.weight.data_ptr() == emb.data_ptr()  # tied, as the docstring says
    return model


@pytest.fixture(scope="session")
def t5_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        "random": save_model(_t5(), t5_tokenizer(), tmp_path_factory.mktemp("t5_random")),
        "yes": save_model(_forced("1"), t5_tokenizer(), tmp_path_factory.mktemp("t5_yes")),
        "no": save_model(_forced("0"), t5_tokenizer(), tmp_path_factory.mktemp("t5_no")),
    }


def _run(model: TrueT5NLI, pairs: list[NLIPair]) -> list:
    return asyncio.run(model.entails(pairs))


def test_forced_one_is_entailed_with_hand_computed_score(t5_dirs: dict[str, Path]) -> None:
    model = TrueT5NLI(t5_dirs["yes"], batch_size=2)
    assert model.name == f"t5:{t5_dirs['yes']}"
    assert model.positive_token_id == VOCAB["1"]
    verdicts = _run(model, PAIRS)
    assert all(v.entailed for v in verdicts)
    # First-step logits: "1" 2, pad 1, the 19 others 0.
    # P("1") = e^2 / (e^2 + e + 19) = 7.389056 / 29.107338 = 0.253855.
    expected = math.exp(2) / (math.exp(2) + math.e + (V - 2))
    assert expected == pytest.approx(0.253855, abs=1e-6)
    for v in verdicts:
        assert v.score == pytest.approx(expected, abs=1e-4)
        assert v.source == f"t5:{t5_dirs['yes']}"


def test_forced_zero_is_not_entailed(t5_dirs: dict[str, Path]) -> None:
    verdicts = _run(TrueT5NLI(t5_dirs["no"], batch_size=3), PAIRS)
    assert not any(v.entailed for v in verdicts)
    # Here "0" has logit 2, pad 1, "1" 0 like the 18 others: P("1") = 1 / (e^2 + e + 19) = 0.034356.
    assert verdicts[0].score == pytest.approx(0.034356, abs=1e-4)


def test_batching_matches_one_by_one_and_generate(t5_dirs: dict[str, Path]) -> None:
    path = t5_dirs["random"]
    batched = _run(TrueT5NLI(path, batch_size=3), PAIRS)
    single = _run(TrueT5NLI(path, batch_size=1), PAIRS)
    assert [v.entailed for v in batched] == [v.entailed for v in single]
    for b, s in zip(batched, single, strict=True):
        assert b.score == pytest.approx(s.score, abs=1e-5)
    assert len({round(v.score, 6) for v in batched}) > 1  # inputs do change the output
    # Independent check of pair 0 with plain transformers: greedy output and P("1") at step 1.
    tok = transformers.AutoTokenizer.from_pretrained(path)
    ref = transformers.AutoModelForSeq2SeqLM.from_pretrained(path).eval()
    ids = tok(
        ["premise: He was born in Newark. hypothesis: place of birth: Newark"], return_tensors="pt"
    )
    with torch.inference_mode():
        out = ref.generate(**ids, max_new_tokens=10, do_sample=False)
        logits = ref(**ids, decoder_input_ids=torch.tensor([[0]])).logits[0, -1]
    decoded = tok.decode(out[0], skip_special_tokens=True).strip()
    assert batched[0].entailed == (decoded == "1")
    assert batched[0].score == pytest.approx(float(torch.softmax(logits, -1)[VOCAB["1"]]), abs=1e-5)


def test_input_format_and_premise_truncation(t5_dirs: dict[str, Path]) -> None:
    pair = NLIPair(premise="he was born in newark", hypothesis="place of birth: newark")
    full = TrueT5NLI(t5_dirs["yes"])
    assert (
        full.format_input(pair)
        == "premise: he was born in newark hypothesis: place of birth: newark"
    )
    # Tokens: premise : (2) + 5 premise words + hypothesis : (2) + place of birth : newark (5)
    # + </s> = 15. With max_length=12 the premise loses 3 tokens and keeps "he was".
    short = TrueT5NLI(t5_dirs["yes"], max_length=12)
    text = short.format_input(pair)
    assert text == "premise: he was hypothesis: place of birth: newark"
    assert len(short._tokenizer(text).input_ids) == 12
    assert _run(short, [pair])[0].entailed


def test_errors_and_factory(t5_dirs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        TrueT5NLI(tmp_path / "missing")
    with pytest.raises(ConfigError, match="template"):
        TrueT5NLI(t5_dirs["yes"], template="{premise} only")
    with pytest.raises(ConfigError, match="max_new_tokens"):
        TrueT5NLI(t5_dirs["yes"], max_new_tokens=0)
    model = nli_model(f"t5:{t5_dirs['no']}", batch_size=4)
    assert isinstance(model, TrueT5NLI)
    cascade = nli_model(f"lexical+t5:{t5_dirs['no']}")
    verdicts = asyncio.run(cascade.entails(PAIRS[:3]))
    # Lexical accepts 0 (Newark) and 1 (Paris); pair 2 ("He died." vs Paris) goes to T5 -> "0".
    assert [(v.entailed, v.source) for v in verdicts] == [
        (True, "lexical"),
        (True, "lexical"),
        (False, f"t5:{t5_dirs['no']}"),
    ]
