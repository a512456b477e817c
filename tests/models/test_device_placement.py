"""Every transformers backend keeps its tensors on its model's device: checked without a GPU.

Each backend is loaded on the CPU from a tiny random model, then its model is moved onto a fake
accelerator (``_fake_device``: fake tensors on ``lazy:0``) and its batch paths run. A tensor
the backend makes on the host and mixes with the model's tensors fails the test with the
backend and path in the message (on a GPU that is "Expected all tensors to be on the same
device"); reading the results on the host is where a run legitimately stops. Issue 25: the LM
scorer's shared-prefix path made an empty CPU tensor for a prefix with no scored token inside,
and ``device="cuda"`` crashed on every such group.

The GPU numbers themselves are checked by ``test_gpu_parity.py`` (marker ``gpu``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _fake_device import (  # noqa: E402
    FAKE_DEVICE,
    FakeAccelerator,
    assert_on_device,
    is_mismatch,
    run_on_fake_device,
)
from _tiny_models import LM_WORDS, build_random_causal_lm, build_tiny_causal_lm  # noqa: E402
from citegraph.models import ChatMessage, ChatRequest, GenerateConfig, NLIPair  # noqa: E402
from citegraph.models.chat import HFChat  # noqa: E402
from citegraph.models.chat._generation import (  # noqa: E402
    ProgressReporter,
    ReplyRepetitionPenalty,
    Row,
    RowLogits,
    RowStops,
)
from citegraph.models.embed import HFEmbeddingModel  # noqa: E402
from citegraph.models.lm import CausalLMScorer  # noqa: E402
from citegraph.models.nli import HFNLI3, HFClassifierNLI, TrueT5NLI  # noqa: E402
from citegraph.models.rerank import CrossEncoderReranker, HFTextScorer  # noqa: E402
from citegraph.testing import (  # noqa: E402
    build_tiny_encoder,
    save_model,
    t5_tokenizer,
    tiny_t5,
)

#: 40 words: inputs that begin with it share at least 32 tokens (the scorer's threshold).
PREFIX = " ".join(LM_WORDS[(7 * k) % len(LM_WORDS)] for k in range(40))
WORDS = PREFIX.split()
#: A continuation whose prefix is the first 10 words: it scores tokens inside the shared prefix.
INSIDE = (" ".join(WORDS[:10]), " " + " ".join(WORDS[10:]) + " city")
PAIRS = [
    NLIPair(premise="he was born in newark .", hypothesis="he was born in paris ."),
    NLIPair(premise="stephen crane wrote a novel", hypothesis="he wrote"),
    NLIPair(premise="she died in paris in 1871 .", hypothesis="she died"),
]


# --- the harness itself ----------------------------------------------------------------------


def test_the_harness_reports_a_host_tensor_and_accepts_a_host_read() -> None:
    accelerator = FakeAccelerator()
    layer = accelerator.to_device(torch.nn.Linear(4, 3))

    def host_zeros_beside_device_values() -> Any:  # the bug of issue 25, in two lines
        out = layer(torch.ones(2, 4).to(FAKE_DEVICE))
        return torch.cat([torch.zeros(0), out[0]])

    with pytest.raises(pytest.fail.Exception, match="toy: a host tensor met"):
        run_on_fake_device(accelerator, "toy", host_zeros_beside_device_values, to_host=False)

    def then_read() -> Any:
        out = layer(torch.ones(2, 4, device=FAKE_DEVICE))
        return torch.cat([torch.zeros(0, device=out.device), out[0]]).tolist()

    assert run_on_fake_device(accelerator, "toy", then_read, to_host=True) is None
    with pytest.raises(pytest.fail.Exception, match="without reading"):
        run_on_fake_device(accelerator, "toy", lambda: 1, to_host=True)
    # a CPU model is not on the device: the check cannot pass vacuously
    with pytest.raises(AssertionError, match="real tensor"):
        assert_on_device("toy", [torch.nn.Linear(4, 3)(torch.ones(1, 4))])
    assert is_mismatch(RuntimeError("Expected all tensors to be on the same device, but ..."))


# --- causal-LM scorer ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def random_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_random_causal_lm(tmp_path_factory.mktemp("random_lm"))


def fake_lm_scorer(
    path: Path, *, shortcuts: bool
) -> tuple[CausalLMScorer, FakeAccelerator, list[list[int]]]:
    """A scorer whose model is on the fake accelerator, and the lengths of each batch's scored
    tensors as they reach :meth:`LMForward.to_host` (checked to be on the device there).

    The load-time probe compares numbers, which fake tensors do not have, so the shortcuts are
    set by hand (``shortcuts``: head-only and shared-prefix passes; else the full forward)."""
    scorer = CausalLMScorer.load(path)
    accelerator = FakeAccelerator()
    accelerator.to_device(scorer._model)
    runner = scorer._runner
    assert runner is not None
    scorer._device = runner._device = FAKE_DEVICE
    runner.fast_head = runner.reuses_prefix = shortcuts
    batches: list[list[int]] = []

    def to_host(scored: list[Any]) -> list[list[float]]:
        assert_on_device("LM scorer results", scored)
        batches.append([int(t.shape[0]) for t in scored])
        return [[-1.0] * int(t.shape[0]) for t in scored]

    runner.to_host = to_host  # type: ignore[method-assign]
    return scorer, accelerator, batches


@pytest.mark.parametrize("shortcuts", [True, False], ids=["head-and-prefix", "full-forward"])
def test_lm_scorer_stays_on_the_device(random_lm_dir: Path, shortcuts: bool) -> None:
    scorer, accelerator, batches = fake_lm_scorer(random_lm_dir, shortcuts=shortcuts)
    path = "shortcuts" if shortcuts else "full forward"
    cases = {
        "texts, batched": lambda: scorer.score_sync(
            ["the city of paris", "where is paris", "hello"], token_logprobs=True
        ),
        # shared prefix whose own positions are scored (a text's tokens 2..)
        "texts sharing a prefix": lambda: scorer.score_sync(
            [f"{PREFIX} paris is", f"{PREFIX} france", f"{PREFIX} the city ."],
            token_logprobs=True,
        ),
        # shared prefix with no scored token inside: every continuation starts after it
        "continuations after one prefix": lambda: scorer.score_continuations_sync(
            [(PREFIX, " paris is"), (PREFIX, " france"), (PREFIX, " the city .")],
            token_logprobs=True,
        ),
        # one input scores tokens inside the prefix, the others do not
        "continuations, mixed": lambda: scorer.score_continuations_sync(
            [(PREFIX, " paris"), (PREFIX, " france ."), (" ".join(WORDS[:20]), ""), INSIDE],
            token_logprobs=False,
        ),
    }
    for name, call in cases.items():
        before = len(batches)
        scores = run_on_fake_device(accelerator, f"LM scorer ({path}): {name}", call, to_host=False)
        assert scores is not None and len(batches) > before
        assert all(s.n_tokens == 0 or s.sum_nll == s.n_tokens for s in scores)  # -1.0 per token
    if shortcuts:  # the prefix path ran: one batch of three inputs of 2, 1 and 3 tokens
        assert sorted(batches[2]) == [1, 2, 3]


# --- sequence classifiers, embeddings, T5 ----------------------------------------------------


def on_fake_device(backend: Any) -> FakeAccelerator:
    """Move ``backend``'s model onto a fresh fake accelerator and point the backend at it."""
    accelerator = FakeAccelerator()
    accelerator.to_device(backend._model)
    backend._device = FAKE_DEVICE
    return accelerator


def test_nli_classifiers_stay_on_the_device(tiny_nli_classifier_dir: Path) -> None:
    for backend, calls in [
        (HFClassifierNLI(tiny_nli_classifier_dir, batch_size=2), ["entails_sync"]),
        (HFClassifierNLI(tiny_nli_classifier_dir, threshold=0.3), ["entails_sync"]),
        (HFNLI3(tiny_nli_classifier_dir, batch_size=2), ["probabilities_sync", "entails_sync"]),
    ]:
        accelerator = on_fake_device(backend)
        for call in calls:
            what = f"{type(backend).__name__}.{call}"
            run = getattr(backend, call)
            run_on_fake_device(accelerator, what, lambda run=run: run(PAIRS), to_host=True)


def test_reranker_and_text_scorer_stay_on_the_device(tmp_path: Path) -> None:
    from citegraph.testing import build_tiny_nli_classifier

    two = build_tiny_nli_classifier(tmp_path / "two", id2label={0: "no", 1: "yes"})
    one = build_tiny_nli_classifier(tmp_path / "one", id2label={0: "score"})
    queries = [("where was he born", "he was born in newark ."), ("who", "stephen crane")]
    for backend, args in [
        (CrossEncoderReranker(two), queries),
        (CrossEncoderReranker(one), queries),  # sigmoid of one logit
        (HFTextScorer(two), ["he was born in newark .", "paris"]),
        (HFTextScorer(one), ["he was born in newark ."]),  # a raw logit
    ]:
        accelerator = on_fake_device(backend)
        what = f"{type(backend).__name__} ({backend.readout})"
        call = backend.score_sync
        run_on_fake_device(accelerator, what, lambda call=call, a=args: call(a), to_host=True)


def test_embeddings_stay_on_the_device(tmp_path: Path) -> None:
    folder = build_tiny_encoder(tmp_path / "encoder")
    texts = ["he was born in newark .", "paris", "stephen crane wrote a novel"]
    for pooling in ("mean", "cls"):
        model = HFEmbeddingModel.load(folder)
        model.pooling = pooling
        accelerator = on_fake_device(model)
        run_on_fake_device(
            accelerator,
            f"HFEmbeddingModel ({pooling} pooling)",
            lambda m=model: m.encode(texts, batch_size=2),
            to_host=True,
        )


def stepwise_generate(model: Any, *, seq2seq: bool = False) -> Any:
    """A stand-in for ``model.generate``: three greedy steps of the real model on the inputs it
    is given, calling the logits processors and stopping criteria as transformers does.

    transformers' own loop reads token ids on the host before its first forward pass (are the
    EOS and pad ids the same?), which stops a fake-device run before the model has seen the
    inputs; its own device handling is not what these tests check."""

    def generate(
        input_ids: Any,
        attention_mask: Any,
        logits_processor: Any = (),
        stopping_criteria: Any = (),
        **options: Any,
    ) -> Any:
        if seq2seq:
            start = model.config.decoder_start_token_id
            ids = torch.full((input_ids.shape[0], 1), start, device=input_ids.device)
        else:
            ids = input_ids
        mask = attention_mask
        steps = []
        for _ in range(3):
            if seq2seq:
                out = model(input_ids=input_ids, attention_mask=mask, decoder_input_ids=ids)
            else:
                out = model(input_ids=ids, attention_mask=mask)
            logits = out.logits[:, -1, :]
            for process in logits_processor:
                logits = process(ids, logits)
            steps.append(logits)
            ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
            if not seq2seq:
                mask = torch.cat([mask, torch.ones_like(ids[:, -1:])], dim=1)
            for criterion in stopping_criteria:
                criterion(ids, logits)
        if options.get("return_dict_in_generate"):
            return SimpleNamespace(sequences=ids, logits=tuple(steps))
        return ids

    return generate


def test_t5_nli_stays_on_the_device(tmp_path: Path) -> None:
    folder = save_model(tiny_t5(), t5_tokenizer(), tmp_path / "t5")
    backend = TrueT5NLI(folder, batch_size=2, max_new_tokens=3)
    accelerator = on_fake_device(backend)
    backend._model.generate = stepwise_generate(backend._model, seq2seq=True)
    run_on_fake_device(
        accelerator, "TrueT5NLI.entails_sync", lambda: backend.entails_sync(PAIRS), to_host=True
    )


# --- HF chat generation ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_chat_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny_chat"))


def test_chat_generation_stays_on_the_device(tiny_chat_dir: Path) -> None:
    chat = HFChat.load(tiny_chat_dir)
    accelerator = on_fake_device(chat)
    chat._model.generate = stepwise_generate(chat._model)
    chat.progress = lambda progress: None
    messages = [ChatMessage(role="user", content="where is paris")]
    for name, config in {
        # three tokens through the repetition penalty and the progress reporter, then the
        # reply's ids are read on the host
        "greedy, repetition penalty": GenerateConfig(
            max_tokens=4, temperature=0.0, repetition_penalty=1.3
        ),
        # the stop criterion decodes the reply on the host after the first token
        "sampled, stop": GenerateConfig(max_tokens=4, temperature=0.7, seed=3, stop=["france"]),
    }.items():
        request = ChatRequest(messages=messages, config=config)
        run_on_fake_device(
            accelerator, f"HFChat ({name})", lambda r=request: chat.generate_sync(r), to_host=True
        )


def test_generation_hooks_stay_on_the_device() -> None:
    """The logits processor and stopping criteria on a reply of several tokens, called directly
    (the stop criterion's decoding is the host read that ends a generation test above)."""
    accelerator = FakeAccelerator()

    def hooks() -> list[Any]:
        ids = torch.tensor([[2, 5, 7, 7, 9], [2, 5, 8, 12, 3]], device=FAKE_DEVICE)
        scores = torch.randn(2, 22, device=FAKE_DEVICE)
        penalised = ReplyRepetitionPenalty(prompt_len=2, penalty=1.3)(ids, scores)
        progress = ProgressReporter(lambda p: None, prompt_len=2, max_tokens=8, torch=torch)
        # rows without stop strings or EOS ids: the batch's criterion reads no values
        penalty = ReplyRepetitionPenalty(prompt_len=2, penalty=1.3)
        rows = [
            Row(max_tokens=8, stop=(), cancel=threading.Event(), processors=[penalty])
            for _ in range(2)
        ]
        stop = RowStops(rows, prompt_len=2, eos=set(), decode=None, cut=None, torch=torch)
        per_row = RowLogits(rows)(ids, scores.clone())
        return [penalised, progress(ids, scores), stop(ids, scores), per_row]

    out = run_on_fake_device(accelerator, "generation hooks", hooks, to_host=False)
    assert out is not None
    assert_on_device("generation hooks", out)
