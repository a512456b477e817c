"""The TRUE-style T5 backend, on tiny T5ForConditionalGeneration models built and saved here.

To force what the model generates without patching code, the decoder is made transparent: every
attention and feed-forward output projection is zeroed, so the decoder's final hidden state is the
RMS-normalised embedding of its input token (times ``d ** -0.5``: T5 rescales decoder outputs).
transformers 5 always ties ``lm_head`` to the embeddings, so the logits at a step are
``E @ h``. With only three non-zero embedding rows, on two spare dimensions A and B::

    E[pad] = e_A      E["1"] = 2 e_A + e_B      E[eos] = 10 e_B

step 1 (input pad, ``h = e_A``) gives logits pad 1, "1" 2, all others 0: greedy picks "1";
step 2 (input "1", ``h = (2 e_A + e_B) / sqrt(5)``) gives pad 0.89, "1" 2.24, eos 4.47: it stops.

The same trick builds chains that test the one-step decoding against ``generate``: "1" then "0"
(the first token is "1", the text is not), and "<unk>" then "1" (the first token is not "1", the
text is); a decoder reading the input through a random cross-attention and random models cover
the rest, on random word pairs and on MNLI pairs.
"""

from __future__ import annotations

import asyncio
import csv
import math
import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.errors import ConfigError, ModelError  # noqa: E402
from citegraph.models import NLIPair, nli_model  # noqa: E402
from citegraph.models.nli import TrueT5NLI  # noqa: E402
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


# One-step decoding (encoder + two decoder steps, generate for the rows they leave undecided)
# against generate, on models whose greedy outputs are known: the verdict must always be
# generate's, and the score P("1") at step 1 the same up to float rounding.


def _chain(rows: dict[str, dict[int, float]]) -> transformers.T5ForConditionalGeneration:
    """A transparent-decoder T5 (see the module docstring) whose embedding rows are ``rows``
    (token -> {dimension: value}), all others zero: step logits are ``E @ E[previous token]``
    up to a positive factor, so the greedy output is a chain fixed by hand."""
    model = _forced("1")
    with torch.no_grad():
        model.shared.weight.zero_()
        for token, dims in rows.items():
            for dim, value in dims.items():
                model.shared.weight[VOCAB[token], dim] = value
    return model


A, B, C = D_MODEL - 3, D_MODEL - 2, D_MODEL - 1
#: "1", then "0", then end: step 1 (input pad, h ~ e_A): pad 1, "1" 2, "0" 0, eos 0;
#: step 2 (input "1", h ~ 2e_A + e_B): pad 2, "1" 5, "0" 6; step 3 (input "0", h ~ 6e_B + e_C):
#: "1" 6, "0" 37, eos 40. generate's text is "1 0": not entailed, though the first token is "1".
ONE_ZERO = {"<pad>": {A: 1.0}, "1": {A: 2.0, B: 1.0}, "0": {B: 6.0, C: 1.0}, "</s>": {C: 40.0}}
#: "<unk>" (a special token: decodes to nothing), then "1", then end: the same numbers with
#: <unk> in the place of "1" and "1" in the place of "0". The text is "1": entailed, though the
#: first token is not "1".
UNK_ONE = {"<pad>": {A: 1.0}, "<unk>": {A: 2.0, B: 1.0}, "1": {B: 6.0, C: 1.0}, "</s>": {C: 40.0}}


def _mixed() -> transformers.T5ForConditionalGeneration:
    """A T5 whose decoder reads the input (a random cross-attention, seed 2) with "1" and "0"
    tied on the transparent part: on 100 random inputs greedy gives "</s>", "0 </s>",
    "1 </s>", "1 1 1 ..." and "0 0 0 ..." (checked when these tests were written)."""
    model = _t5()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for block in model.decoder.block:
            block.layer[0].SelfAttention.o.weight.zero_()
            block.layer[2].DenseReluDense.wo.weight.zero_()
            cross = block.layer[1].EncDecAttention.o.weight
            cross.copy_(torch.randn(cross.shape, generator=g) * 0.5)
        model.decoder.final_layer_norm.weight.fill_(1.0)
        emb = model.shared.weight
        emb.copy_(torch.randn(emb.shape, generator=g) * 0.3)
        emb[:, [A, B, C]] = 0.0
        for token in ("<pad>", "1", "0", "</s>"):
            emb[VOCAB[token]] = 0.0
        emb[VOCAB["<pad>"], A] = 1.0
        emb[VOCAB["1"], A], emb[VOCAB["1"], B] = 2.0, 1.0
        emb[VOCAB["0"], A], emb[VOCAB["0"], C] = 2.0, 1.0
        emb[VOCAB["</s>"], B], emb[VOCAB["</s>"], C] = 10.0, 10.0
    return model


def _random(seed: int) -> transformers.T5ForConditionalGeneration:
    """All weights N(0, 0.5^2) (seed ``seed``), "1", "0" and "</s>" embeddings x 4: seed 5
    often says "1 0 ..." (never exactly "1"), else "</s>"."""
    model = _t5()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
        for token in ("1", "0", "</s>"):
            model.shared.weight[VOCAB[token]] *= 4
    return model


def _random_pairs(n: int, seed: int) -> list[NLIPair]:
    words = [w for w in VOCAB if w not in ("<pad>", "</s>", "<unk>")] + ["zzz"]
    rng = random.Random(seed)
    return [
        NLIPair(
            premise=" ".join(rng.choices(words, k=rng.randint(1, 12))),
            hypothesis=" ".join(rng.choices(words, k=rng.randint(1, 6))),
        )
        for _ in range(n)
    ]


@pytest.fixture(scope="module")
def decode_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    models = {
        "one_zero": _chain(ONE_ZERO),
        "unk_one": _chain(UNK_ONE),
        "mixed": _mixed(),
        "random0": _random(0),
        "random5": _random(5),
    }
    return {
        name: save_model(model, t5_tokenizer(), tmp_path_factory.mktemp(f"t5_{name}"))
        for name, model in models.items()
    }


def _agree(path: Path, pairs: list[NLIPair], **options: object) -> tuple[list, dict[str, int]]:
    """The one-step verdicts, after checking them against generate's; and how they were made."""
    fast = TrueT5NLI(path, **options)  # type: ignore[arg-type]
    reference = TrueT5NLI(path, decode="generate", **options)  # type: ignore[arg-type]
    assert fast.decode == "one-step"
    got, want = fast.entails_sync(pairs), reference.entails_sync(pairs)
    assert [v.entailed for v in got] == [v.entailed for v in want]
    assert [v.score for v in got] == pytest.approx([v.score for v in want], abs=1e-6)
    assert reference.decode_counts == {"one-step": 0, "generate": len(pairs)}
    return got, fast.decode_counts


def test_one_step_decides_one_then_end_without_generate(t5_dirs: dict[str, Path]) -> None:
    for answer, entailed in (("yes", True), ("no", False)):
        got, counts = _agree(t5_dirs[answer], PAIRS, batch_size=2)
        assert [v.entailed for v in got] == [entailed] * len(PAIRS)
        assert counts == {"one-step": len(PAIRS), "generate": 0}


def test_one_step_leaves_a_longer_text_to_generate(decode_dirs: dict[str, Path]) -> None:
    # "1" then "0": not "1", though the first token is "1"
    got, counts = _agree(decode_dirs["one_zero"], PAIRS, batch_size=3)
    assert not any(v.entailed for v in got)
    assert counts == {"one-step": 0, "generate": len(PAIRS)}
    # <unk> (decodes to nothing) then "1": "1", though the first token is not "1"
    got, counts = _agree(decode_dirs["unk_one"], PAIRS, batch_size=3)
    assert all(v.entailed for v in got)
    assert counts == {"one-step": 0, "generate": len(PAIRS)}
    # with one new token the first step decides everything: "1" alone, and <unk> alone
    got, counts = _agree(decode_dirs["one_zero"], PAIRS, max_new_tokens=1)
    assert all(v.entailed for v in got) and counts["generate"] == 0
    got, counts = _agree(decode_dirs["unk_one"], PAIRS, max_new_tokens=1)
    assert not any(v.entailed for v in got) and counts["generate"] == 0


@pytest.mark.parametrize("name", ["mixed", "random0", "random5"])
@pytest.mark.parametrize("batch_size", [1, 7, 64])
def test_one_step_agrees_with_generate_on_many_pairs(
    decode_dirs: dict[str, Path], name: str, batch_size: int
) -> None:
    pairs = _random_pairs(120, seed=batch_size)
    got, counts = _agree(decode_dirs[name], pairs, batch_size=batch_size)
    assert sum(counts.values()) == len(pairs)
    if name == "mixed":  # both ways, and both verdicts, occur
        assert counts["one-step"] > 0 and counts["generate"] > 0
        assert 0 < sum(v.entailed for v in got) < len(pairs)


def test_one_step_agrees_with_generate_on_mnli(
    decode_dirs: dict[str, Path], data_dir: Path
) -> None:
    path = data_dir / "nli" / "mnli_dev_matched_with_bert_correct_counts.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))[:150]
    pairs = [NLIPair(premise=r["premise"], hypothesis=r["hypothesis"]) for r in rows]
    for name in ("mixed", "random5"):
        _agree(decode_dirs[name], pairs, batch_size=32)


def test_generation_settings_that_change_greedy_decoding_keep_generate(tmp_path: Path) -> None:
    model = _forced("1")
    model.generation_config.repetition_penalty = 1.3
    path = save_model(model, t5_tokenizer(), tmp_path / "penalised")
    nli = TrueT5NLI(path)
    assert nli.decode == "generate"
    assert "repetition_penalty" in nli.decode_note
    with pytest.raises(ConfigError, match="decode"):
        TrueT5NLI(path, decode="beam")  # type: ignore[arg-type]
