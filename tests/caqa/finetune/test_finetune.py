"""``caqa finetune`` on tiny models built by the tests, and the fine-tuned classifier judge.

The 24 synthetic samples are trivially learnable: the citation ends with one marker word per
category (paris -> supportive, novel -> insufficient, occupation -> contradictory, death ->
irrelevant) after a filler of one to three words, so a model that attends to that word can get
every sample right. Training and scoring on the same 24 samples is deliberate: the tests check
that the plumbing (inputs, labels, masking, loop, saving, reloading) lets a model learn a signal
it can learn, not generalisation. The model sizes and learning rates below reach 100% for every
seed tried (0-7 for the classifier, 0-4 for the causal LM); the tests use seed 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tolerance import model_approx  # noqa: E402
from citegraph.caqa import CATEGORIES, CaqaSample, load_caqa_split, write_samples  # noqa: E402
from citegraph.caqa.finetune import (  # noqa: E402
    CaqaFinetuneConfig,
    ClassifierJudge,
    finetune,
    map_class_labels,
)
from citegraph.caqa.finetune._config import META_FILE  # noqa: E402
from citegraph.caqa.finetune._data import (  # noqa: E402
    causal_prompt,
    classifier_texts,
    encode_causal,
    samples_digest,
    training_targets,
)
from citegraph.caqa.judge._prompts import alpaca_text, chat_messages, prompt_version  # noqa: E402
from citegraph.errors import ConfigError, DataError, DataNotFoundError, ModelError  # noqa: E402
from citegraph.models import ChatRequest, GenerateConfig, chat_model  # noqa: E402
from citegraph.models.chat import HFChat  # noqa: E402
from citegraph.testing import (  # noqa: E402
    NLI_LABELS,
    NLI_VOCAB,
    build_tiny_nli_classifier,
    nli_tokenizer,
    save_model,
    word_level_tokenizer,
)

MARKERS = {
    "supportive": "paris",
    "insufficient": "novel",
    "contradictory": "occupation",
    "irrelevant": "death",
}
FILLERS = ["she wrote", "the writer", "a place of", "died in", "1871", "stephen crane"]


def make_samples() -> list[CaqaSample]:
    return [
        CaqaSample(
            id=f"{category}-{i}",
            question="where was he born",
            answer="he was born in newark .",
            citation=f"{filler} {MARKERS[category]} .",
            label=category,
            source="test",
        )
        for category in CATEGORIES
        for i, filler in enumerate(FILLERS)
    ]


SAMPLES = make_samples()


# --- data, config, label mapping ---------------------------------------------------------


def test_a_sample_with_an_empty_id_is_refused(tmp_path: Path) -> None:
    """Issue 27, item 12: ``caqa judge`` (and every reader of a CAQA split) refuses ``id: ""``."""
    path = tmp_path / "test.jsonl"
    good = SAMPLES[0].model_dump(mode="json")
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"id": ""}) + "\n")
    with pytest.raises(DataError, match=r"test.jsonl:2, field 'id': empty sample id"):
        load_caqa_split(path)


def test_split_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    assert write_samples(path, SAMPLES[:3]) == 3
    assert load_caqa_split(path) == SAMPLES[:3]
    assert "complexity" not in path.read_text().splitlines()[0]  # None fields left out

    good = SAMPLES[0].model_dump_json()
    path.write_text(good + "\n\n{not json\n")
    with pytest.raises(DataError) as bad_json:
        load_caqa_split(path)
    assert bad_json.value.line == 3
    path.write_text(good + "\n" + json.dumps({"id": "x", "question": "q"}) + "\n")
    with pytest.raises(DataError) as invalid:
        load_caqa_split(path)
    assert (invalid.value.line, invalid.value.field) == (2, "answer")
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(DataError, match="duplicate sample id") as duplicate:
        load_caqa_split(path)
    assert duplicate.value.line == 2
    with pytest.raises(DataNotFoundError):
        load_caqa_split(tmp_path / "missing.jsonl")


def test_targets_digest_and_classifier_texts() -> None:
    # Class order is the paper's: supportive, insufficient, contradictory, irrelevant.
    assert training_targets(SAMPLES[::6], "four") == [0, 1, 2, 3]
    assert training_targets(SAMPLES[::6], "binary") == [0, 1, 1, 1]
    unsupported = SAMPLES[0].model_copy(update={"label": "unsupported"})
    with pytest.raises(DataError, match="labels='binary'"):
        training_targets([unsupported], "four")
    pairs = [["insufficient-0", "unsupported"], ["irrelevant-0", "unsupported"]]
    canonical = json.dumps(pairs, separators=(",", ":"))
    expected = hashlib.sha256(canonical.encode()).hexdigest()
    assert samples_digest([SAMPLES[6], SAMPLES[18]], "binary") == expected

    first, second = classifier_texts(SAMPLES[:1], "pair", "alpaca")
    assert (first, second) == (["where was he born he was born in newark ."], ["she wrote paris ."])
    prompts, none = classifier_texts(SAMPLES[:1], "prompt", "alpaca")
    assert none is None
    assert prompts[0].endswith(
        "Claim: where was he born he was born in newark .\n\n"
        "Reference: she wrote paris .\n\n\n### Response:"
    )


def test_config_checks_prompt_against_labels() -> None:
    with pytest.raises(ConfigError, match="reference-2way"):
        CaqaFinetuneConfig(base="x", kind="causal", labels="binary")
    with pytest.raises(ConfigError, match="not an Alpaca-style"):
        CaqaFinetuneConfig(base="x", kind="causal", prompt="zero-shot")
    # A pair classifier does not use the prompt, so the default prompt is fine for binary.
    CaqaFinetuneConfig(base="x", kind="classifier", labels="binary")
    CaqaFinetuneConfig(base="x", kind="causal", labels="binary", prompt="reference-2way")
    with pytest.raises(ValueError, match="extra"):
        CaqaFinetuneConfig(base="x", kind="causal", learning_rat=1.0)  # type: ignore[call-arg]


def test_map_class_labels() -> None:
    four = {0: "Support", 1: "MISSING", 2: "contradictory", 3: "Irrelevant"}
    assert map_class_labels(four) == (
        {0: "supportive", 1: "insufficient", 2: "contradictory", 3: "irrelevant"},
        "four",
    )
    assert map_class_labels({"0": "not attributable", "1": "Attributable"}) == (
        {0: "unsupported", 1: "supportive"},
        "binary",
    )
    attrscore = {0: "Attributable", 1: "Extrapolatory", 2: "Contradictory"}
    assert map_class_labels(attrscore)[1] == "attrscore"
    with pytest.raises(ConfigError, match="'entailment'") as nli:
        map_class_labels({0: "contradiction", 1: "entailment", 2: "neutral"})
    assert "{0: 'contradiction', 1: 'entailment', 2: 'neutral'}" in str(nli.value)
    with pytest.raises(ConfigError, match="not a CAQA label set"):
        map_class_labels({0: "support", 1: "supported"})
    with pytest.raises(ConfigError, match="not a CAQA label set"):
        map_class_labels({0: "supportive", 1: "irrelevant"})


# --- tiny models ---------------------------------------------------------------------------

#: The tiny causal LM's words: the labels, the markers and fillers, a few prompt words.
LM_WORDS = [
    *("supportive", "insufficient", "contradictory", "irrelevant", "unsupported"),
    *("claim", "reference", "response", ":", "#", "."),
    *("paris", "novel", "occupation", "death", "he", "was", "born", "in", "newark", "where"),
    *("she", "wrote", "the", "writer", "a", "place", "of", "died", "1871", "stephen", "crane"),
]
LM_VOCAB = {t: i for i, t in enumerate(["<pad>", "<unk>", "<s>", "</s>", *LM_WORDS])}


def build_classifier_base(path: Path) -> Path:
    """A random 1-layer BERT, 64 wide, no dropout, with the 3-way NLI head (replaced when
    fine-tuned). 64 wide and initializer range 0.1: the 16-wide NLI test model learns the
    markers too slowly to be a useful test."""
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(NLI_VOCAB),
        hidden_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.1,
        id2label=NLI_LABELS,
        label2id={v: k for k, v in NLI_LABELS.items()},
    )
    model = transformers.BertForSequenceClassification(config)
    return save_model(model, nli_tokenizer(), path)


def build_causal_base(path: Path) -> Path:
    """A random 2-layer Llama, 32 wide, over :data:`LM_VOCAB` (no chat template, no BOS added)."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(LM_VOCAB),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        initializer_range=0.1,
        pad_token_id=LM_VOCAB["<pad>"],
        bos_token_id=LM_VOCAB["<s>"],
        eos_token_id=LM_VOCAB["</s>"],
    )
    tokenizer = word_level_tokenizer(
        LM_VOCAB,
        unk_token="<unk>",
        single="$A",
        template_tokens=[],
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
    )
    return save_model(transformers.LlamaForCausalLM(config), tokenizer, path)


@pytest.fixture(scope="module")
def classifier_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_classifier_base(tmp_path_factory.mktemp("cls") / "base")


@pytest.fixture(scope="module")
def causal_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_causal_base(tmp_path_factory.mktemp("lm") / "base")


def classifier_config(base: Path, **changes: Any) -> CaqaFinetuneConfig:
    options: dict[str, Any] = {
        "base": str(base),
        "kind": "classifier",
        "epochs": 20,
        "learning_rate": 3e-3,
        "batch_size": 8,
        "warmup_ratio": 0.0,
        "device": "cpu",
    }
    return CaqaFinetuneConfig(**(options | changes))


@pytest.fixture(scope="module")
def trained_classifier(
    classifier_base: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, list[tuple[int, int, dict[str, Any]]]]:
    calls: list[tuple[int, int, dict[str, Any]]] = []
    out = tmp_path_factory.mktemp("trained") / "judge"
    result = finetune(
        SAMPLES,
        classifier_config(classifier_base),
        out,
        dev=SAMPLES,
        progress=lambda step, total, info: calls.append((step, total, info)),
    )
    return result, calls


def test_classifier_learns_the_markers(trained_classifier: Any) -> None:
    result, calls = trained_classifier
    # 24 samples / batch 8 = 3 steps per epoch, 20 epochs.
    assert (result.n_train, result.steps, result.epochs_run) == (24, 60, 20.0)
    assert len(result.history) == 20
    assert [r.step for r in result.history] == list(range(3, 61, 3))
    first, last = result.history[0].train_loss, result.history[-1].train_loss
    assert first is not None and last is not None
    assert last < 0.2 < math.log(4) < first  # random head: about uniform or worse; then learned
    assert result.final_train_loss == last
    assert result.dev == result.history[-1].dev
    assert result.dev["accuracy"] == 1.0 and result.dev["n"] == 24
    assert [c[0] for c in calls] == list(range(1, 61)) and {c[1] for c in calls} == {60}
    assert {"epoch", "loss", "lr"} <= set(calls[0][2]) and "dev" not in calls[0][2]
    assert calls[2][2]["epoch"] == 1.0 and calls[2][2]["dev"] == result.history[0].dev
    assert calls[0][2]["lr"] == 3e-3  # no warmup: the first step runs at the peak rate


def test_classifier_judge_reloads_the_fine_tune(trained_classifier: Any) -> None:
    result, _ = trained_classifier
    judge = ClassifierJudge(result.out_dir, batch_size=5)
    assert judge.label_set == "four"
    labels = "supportive,insufficient,contradictory,irrelevant"
    assert judge.name == f"cls:{result.out_dir.resolve()}[{labels}]"
    judgements = asyncio.run(judge.judge(SAMPLES))
    assert [j.label for j in judgements] == [s.label for s in SAMPLES]
    for judgement in judgements:
        assert judgement.raw == judgement.label and judgement.error is None
        assert judgement.scores is not None and set(judgement.scores) == set(CATEGORIES)
        assert sum(judgement.scores.values()) == model_approx(1.0)  # float32 softmax
        assert max(judgement.scores, key=judgement.scores.__getitem__) == judgement.label
    assert asyncio.run(judge.judge([])) == []
    asyncio.run(judge.aclose())
    with pytest.raises(ModelError, match="closed"):
        judge.judge_sync(SAMPLES[:1])


def test_metadata_file(trained_classifier: Any, classifier_base: Path) -> None:
    result, _ = trained_classifier
    meta = json.loads((result.out_dir / META_FILE).read_text())
    assert meta["kind"] == "classifier" and meta["labels"] == "four"
    assert meta["label_names"] == list(CATEGORIES)
    assert meta["base"] == str(classifier_base)
    assert (meta["input"], meta["prompt"], meta["prompt_version"]) == ("pair", None, None)
    assert meta["max_length"] == 64  # 512 lowered to the tiny model's 64 positions
    assert meta["config"]["learning_rate"] == 3e-3 and meta["config"]["seed"] == 0
    ids_labels = [[s.id, s.label] for s in SAMPLES]
    digest = hashlib.sha256(json.dumps(ids_labels, separators=(",", ":")).encode()).hexdigest()
    assert meta["train"] == {
        "given": 24,
        "used": 24,
        "sha256": digest,
        "label_counts": dict.fromkeys(sorted(CATEGORIES), 6),
        "truncated": 0,
    }
    assert meta["dev"] == {"n": 24, "sha256": digest}
    assert len(meta["result"]["history"]) == 20 and meta["result"]["steps"] == 60
    assert meta["versions"]["torch"] and meta["versions"]["transformers"]
    saved = json.loads((result.out_dir / "config.json").read_text())
    assert saved["id2label"] == {str(i): c for i, c in enumerate(CATEGORIES)}
    assert not list(result.out_dir.parent.glob("*.tmp-*"))


def test_out_dir_refusal_overwrite_and_cleanup(classifier_base: Path, tmp_path: Path) -> None:
    quick = classifier_config(classifier_base, epochs=1)
    out = tmp_path / "judge"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="overwrite=True"):
        finetune(SAMPLES, quick, out)
    assert (out / "notes.txt").read_text() == "keep me"
    result = finetune(SAMPLES, quick, out, overwrite=True)
    assert result.steps == 3 and not (out / "notes.txt").exists()
    assert (out / META_FILE).is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    finetune(SAMPLES[:8], quick, empty)  # an empty folder is fine
    missing = classifier_config(tmp_path / "no-such-model", epochs=1)
    with pytest.raises(ModelError):
        finetune(SAMPLES, missing, tmp_path / "never")
    assert not (tmp_path / "never").exists()
    assert not list(tmp_path.glob("*.tmp-*"))


def test_same_seed_same_loss(classifier_base: Path, tmp_path: Path) -> None:
    config = classifier_config(classifier_base, epochs=2, max_train_samples=16)
    first = finetune(SAMPLES, config, tmp_path / "a")
    second = finetune(SAMPLES, config, tmp_path / "b")
    other = finetune(SAMPLES, config.model_copy(update={"seed": 1}), tmp_path / "c")
    assert first.n_train == 16 and first.steps == 4  # 16 / 8 = 2 steps per epoch
    assert first.final_train_loss == second.final_train_loss
    assert first.final_train_loss != other.final_train_loss
    meta_a = json.loads((tmp_path / "a" / META_FILE).read_text())
    meta_b = json.loads((tmp_path / "b" / META_FILE).read_text())
    assert meta_a["train"]["sha256"] == meta_b["train"]["sha256"]


def test_binary_prompt_input_and_eval_every(classifier_base: Path, tmp_path: Path) -> None:
    config = classifier_config(
        classifier_base,
        labels="binary",
        classifier_input="prompt",
        prompt="reference-2way",
        epochs=1.5,
        batch_size=4,
        gradient_accumulation=2,
        eval_every=2,
    )
    dev = [s.model_copy(update={"id": f"dev-{s.id}"}) for s in SAMPLES[:4]]
    result = finetune(SAMPLES, config, tmp_path / "binary", dev=dev)
    # 24 / 4 = 6 micro-batches, 3 steps per epoch; 1.5 epochs = ceil(4.5) = 5 steps.
    assert result.steps == 5 and result.epochs_run == pytest.approx(5 / 3)
    assert [(r.step, r.train_loss is None) for r in result.history] == [
        (2, True),
        (3, False),
        (4, True),
        (5, False),
    ]
    meta = json.loads((tmp_path / "binary" / META_FILE).read_text())
    assert (meta["input"], meta["prompt"]) == ("prompt", "reference-2way")
    assert meta["prompt_version"] == prompt_version("reference-2way")
    assert meta["train"]["truncated"] == 24  # the Alpaca text exceeds 64 tokens; dev not counted
    judge = ClassifierJudge(tmp_path / "binary")
    assert judge.label_set == "binary"
    judgement = judge.judge_sync(SAMPLES[:1])[0]
    assert judgement.label in ("supportive", "unsupported")
    assert judgement.scores is not None and set(judgement.scores) == {"supportive", "unsupported"}


def test_classifier_judge_on_foreign_models(tmp_path: Path) -> None:
    nli = build_tiny_nli_classifier(tmp_path / "nli")
    with pytest.raises(ConfigError, match="entailment"):
        ClassifierJudge(nli)
    labels = {0: "Irrelevant", 1: "Support", 2: "Missing", 3: "Contradictory"}
    reference = build_tiny_nli_classifier(
        tmp_path / "ref", bias=[0.0, 0.0, 3.0, 0.0], id2label=labels
    )
    judge = ClassifierJudge(reference)
    assert judge.label_set == "four"
    assert judge.labels == {0: "irrelevant", 1: "supportive", 2: "insufficient", 3: "contradictory"}
    judgement = judge.judge_sync(SAMPLES[:1])[0]
    # Logits [0, 0, 3, 0]: P(Missing) = e^3 / (e^3 + 3) = 0.8700.
    assert (judgement.label, judgement.raw) == ("insufficient", "Missing")
    assert judgement.scores is not None
    assert judgement.scores["insufficient"] == pytest.approx(math.e**3 / (math.e**3 + 3), abs=1e-5)


def test_causal_label_masking_by_hand(causal_base: Path) -> None:
    tokenizer = transformers.AutoTokenizer.from_pretrained(causal_base)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    sample = SAMPLES[0]
    prompt = causal_prompt(tokenizer, "alpaca", sample)
    assert prompt == alpaca_text("alpaca", sample)
    n_prompt = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    example = encode_causal(tokenizer, prompt, "Supportive", 512)
    answer = [LM_VOCAB["supportive"], LM_VOCAB["</s>"]]  # one word-level token, then EOS
    assert example.input_ids[n_prompt:] == answer
    assert example.labels == [-100] * n_prompt + answer
    assert sum(label != -100 for label in example.labels) == 2
    assert not example.truncated
    short = encode_causal(tokenizer, prompt, "Supportive", 10)
    assert short.truncated and len(short.input_ids) == 10
    # 10 - 2 answer tokens: the prompt's last 8 tokens are kept.
    assert short.input_ids[:8] == example.input_ids[n_prompt - 8 : n_prompt]
    assert short.labels == [-100] * 8 + answer


def test_causal_fine_tune_answers_through_chat_model(causal_base: Path, tmp_path: Path) -> None:
    config = CaqaFinetuneConfig(
        base=str(causal_base),
        kind="causal",
        epochs=20,
        learning_rate=1e-2,
        batch_size=8,
        warmup_ratio=0.0,
        device="cpu",
    )
    out = tmp_path / "vicuna-caqa"
    result = finetune(SAMPLES, config, out, dev=SAMPLES[:4])
    assert result.steps == 60
    first, last = result.history[0].train_loss, result.history[-1].train_loss
    assert first is not None and last is not None and last < first
    assert result.dev is not None and result.dev["n"] == 4
    meta = json.loads((out / META_FILE).read_text())
    assert meta["kind"] == "causal" and meta["prompt"] == "alpaca"
    assert meta["prompt_version"] == prompt_version("alpaca")
    assert meta["label_words"]["insufficient"] == "Insufficient"

    chat = chat_model(f"hf/{out}")
    assert isinstance(chat, HFChat)
    messages = chat_messages("alpaca", SAMPLES[0])
    assert chat.format_prompt(messages) == alpaca_text("alpaca", SAMPLES[0])  # pass-through

    async def answers() -> list[str]:
        replies = []
        for sample in SAMPLES:
            request = ChatRequest.of(chat_messages("alpaca", sample), GenerateConfig(max_tokens=4))
            replies.append((await chat.generate(request)).text)
        await chat.aclose()
        return replies

    # The word-level tokenizer lower-cases; each reply is the label word, then EOS.
    assert asyncio.run(answers()) == [s.label for s in SAMPLES]


def test_classifier_judge_refuses_a_causal_fine_tune(causal_base: Path, tmp_path: Path) -> None:
    config = CaqaFinetuneConfig(
        base=str(causal_base), kind="causal", epochs=0.1, device="cpu", gradient_checkpointing=True
    )
    result = finetune(SAMPLES, config, tmp_path / "lm")
    assert result.steps == 1  # ceil(0.1 * 3)
    assert json.loads((tmp_path / "lm" / "config.json").read_text())["use_cache"] is True
    with pytest.raises(ConfigError, match="chat evaluator"):
        ClassifierJudge(tmp_path / "lm")
