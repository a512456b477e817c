"""Every transformers backend gives on a GPU (CUDA or MPS) the numbers it gives on the CPU.

Run on a GPU machine with ``pytest -m gpu tests/models/test_gpu_parity.py``; without one every
test skips, saying so. ``CITEGRAPH_PARITY_DEVICE=cpu`` runs them against the CPU itself (checks
the tests' own plumbing: float32 differences are then 0, bfloat16 ones are the CPU's bfloat16
against float32).

Each backend is built twice from the same tiny random model: in float32 on the CPU (the
reference) and on the accelerator in float32 or bfloat16 (cast by :func:`cast`, one line to
switch to the backends' ``dtype=`` option once they have it). Tolerances (absolute):

- float32: 1e-4 on probabilities, log-probabilities, mean NLL and embedding components. The
  same arithmetic in another order (GPU reductions, fused kernels) should move float32 results
  by ~1e-6 on these 2-layer, 16-32-wide models; 1e-4 is what the LM scorer's own probe allows.
  Greedy generation gives the same tokens.
- bfloat16: 0.05 nats on the mean NLL per token and on each token's log-probability, 0.02 on
  probabilities and embedding components. bfloat16 keeps 8 significant bits (relative rounding
  2^-9 = 0.2%); each of a few matrix products and norms rounds activations, so logits of size
  ~1-5 move by ~1e-2, i.e. log-probabilities by ~1e-2 and probabilities (derivative <= 1/4)
  by ~5e-3. The bounds are about 4x those errors: loose enough for kernel differences, tight
  enough that a wrong mask, position or device copy (errors of 0.1-1) fails. Measured with
  bfloat16 against float32, both on the CPU: 0.010 on mean NLLs of ~4 nats, 0.017 on token
  log-probabilities down to -5.3. bfloat16 errors grow with the logits: the tests' LM has
  weights of a trained model's scale (initializer range 0.15); at 0.5 (NLL ~8 nats a token) a
  mean NLL moved by 0.36.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import (  # noqa: E402
    CAQA_SAMPLES,
    LM_WORDS,
    _tiny_llama_config,
    build_random_causal_lm,
)
from citegraph.caqa import CATEGORIES  # noqa: E402
from citegraph.caqa.finetune import CaqaFinetuneConfig, ClassifierJudge  # noqa: E402
from citegraph.caqa.finetune._loop import _optimizer  # noqa: E402
from citegraph.caqa.finetune._models import ClassifierTrainee  # noqa: E402
from citegraph.models import ChatMessage, ChatRequest, GenerateConfig, NLIPair  # noqa: E402
from citegraph.models.chat import HFChat  # noqa: E402
from citegraph.models.embed import HFEmbeddingModel  # noqa: E402
from citegraph.models.lm import CausalLMScorer  # noqa: E402
from citegraph.models.nli import HFNLI3, HFClassifierNLI, TrueT5NLI  # noqa: E402
from citegraph.models.rerank import CrossEncoderReranker, HFTextScorer  # noqa: E402
from citegraph.testing import (  # noqa: E402
    build_tiny_encoder,
    build_tiny_nli_classifier,
    save_model,
    t5_tokenizer,
    tiny_t5,
)

pytestmark = pytest.mark.gpu

#: Absolute tolerance per dtype: (log-probabilities and mean NLL, probabilities and vectors).
TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (0.05, 0.02)}
DTYPES = list(TOLERANCE)

WORDS = [LM_WORDS[(7 * k) % len(LM_WORDS)] for k in range(40)]
PREFIX = " ".join(WORDS)
TEXTS = ["the city of paris", "where is paris", "hello . be brief", f"{PREFIX} paris is"]
SHARED = [f"{PREFIX} paris is", f"{PREFIX} france", f"{PREFIX} the city ."]
CONTINUATIONS = [(PREFIX, " paris is"), (PREFIX, " france"), (" ".join(WORDS[:10]), " city")]
PAIRS = [
    NLIPair(premise="he was born in newark .", hypothesis="he was born in paris ."),
    NLIPair(premise="stephen crane wrote a novel", hypothesis="he wrote"),
    NLIPair(premise="she died in paris in 1871 .", hypothesis="she died"),
]
SAMPLES = CAQA_SAMPLES


@pytest.fixture(scope="module")
def device() -> str:
    """The accelerator: ``$CITEGRAPH_PARITY_DEVICE``, else CUDA, else MPS, else skip."""
    chosen = os.environ.get("CITEGRAPH_PARITY_DEVICE")
    if chosen:
        return chosen
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    pytest.skip(
        "no CUDA or MPS device: torch.cuda.is_available() and torch.backends.mps.is_available()"
        " are False (set CITEGRAPH_PARITY_DEVICE=cpu to run these tests against the CPU)"
    )


#: The reference: the CPU in float32 (named: ``auto`` would take the GPU).
CPU = {"device": "cpu", "dtype": "float32"}


def close(got: Any, want: Any, tolerance: float, what: str) -> None:
    """Nested sequences of numbers equal within ``tolerance`` (None matches None)."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            close(g, w, tolerance, f"{what}[{i}]")
        return
    if want is None or got is None:
        assert got is want, what
        return
    assert abs(float(got) - float(want)) <= tolerance, f"{what}: {got} vs {want}"


@pytest.fixture(scope="module")
def random_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tests' random tiny Llama with weights of a trained model's scale (initializer range
    0.15, not 0.5: logits of ~1-5, ~3-4 nats a token); bfloat16 errors grow with the logits."""
    path = build_random_causal_lm(tmp_path_factory.mktemp("random_lm"))
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_tiny_llama_config(initializer_range=0.15)).eval()
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def classifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_nli_classifier(tmp_path_factory.mktemp("nli"))


# --- causal-LM scorer ------------------------------------------------------------------------


def lm_numbers(scorer: CausalLMScorer) -> tuple[list[Any], list[Any]]:
    """Mean NLLs and token log-probabilities of texts (batched), texts sharing a prefix and
    continuations of one prefix (no scored token inside it: the path of issue 25)."""
    runs = [
        scorer.score_sync(TEXTS, token_logprobs=True),
        scorer.score_sync(SHARED, token_logprobs=True),
        scorer.score_continuations_sync(CONTINUATIONS, token_logprobs=True),
    ]
    means = [[s.mean_nll for s in scores] for scores in runs]
    tokens = [[list(s.token_logprobs or ()) for s in scores] for scores in runs]
    return means, tokens


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shortcuts", [True, False], ids=["head-and-prefix", "full-forward"])
def test_lm_scorer(random_lm_dir: Path, device: str, dtype: str, shortcuts: bool) -> None:
    want = lm_numbers(CausalLMScorer.load(random_lm_dir, **CPU))
    scorer = CausalLMScorer.load(random_lm_dir, device=device, dtype=dtype)
    runner = scorer._runner
    assert runner is not None
    # the load-time probe must keep both shortcuts on the accelerator, in every dtype
    assert runner.fast_head and runner.reuses_prefix
    runner.fast_head = runner.reuses_prefix = shortcuts
    got = lm_numbers(scorer)
    tolerance = TOLERANCE[dtype][0]
    for g_run, w_run in zip(got[0], want[0], strict=True):
        for g, w in zip(g_run, w_run, strict=True):
            assert abs(g - w) <= tolerance, f"mean NLL {dtype}: {g} vs {w}"
    for g_run, w_run in zip(got[1], want[1], strict=True):
        for g_item, w_item in zip(g_run, w_run, strict=True):
            assert len(g_item) == len(w_item)
            for g, w in zip(g_item, w_item, strict=True):
                assert abs(g - w) <= tolerance, f"ln P {dtype}: {g} vs {w}"


# --- classifiers, embeddings, T5 ------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_nli_backends(classifier_dir: Path, device: str, dtype: str) -> None:
    tolerance = TOLERANCE[dtype][1]
    for build in (HFClassifierNLI, HFNLI3):
        want = [v.score for v in build(classifier_dir, **CPU).entails_sync(PAIRS)]
        got = [
            v.score for v in build(classifier_dir, device=device, dtype=dtype).entails_sync(PAIRS)
        ]
        close(got, want, tolerance, f"{build.__name__} {dtype}")
    want3 = [p.vector for p in HFNLI3(classifier_dir, **CPU).probabilities_sync(PAIRS)]
    backend = HFNLI3(classifier_dir, device=device, dtype=dtype)
    close([p.vector for p in backend.probabilities_sync(PAIRS)], want3, tolerance, "HFNLI3")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reranker_and_text_scorer(tmp_path: Path, device: str, dtype: str) -> None:
    two = build_tiny_nli_classifier(tmp_path / "two", id2label={0: "no", 1: "yes"})
    one = build_tiny_nli_classifier(tmp_path / "one", id2label={0: "score"})
    pairs = [(p.hypothesis, p.premise) for p in PAIRS]
    texts = [p.premise for p in PAIRS]
    for cls, folder, inputs in [
        (CrossEncoderReranker, two, pairs),
        (CrossEncoderReranker, one, pairs),
        (HFTextScorer, two, texts),
        (HFTextScorer, one, texts),  # a raw logit: held to the log-probability tolerance
    ]:
        want = cls(folder, **CPU).score_sync(inputs)
        got = cls(folder, device=device, dtype=dtype).score_sync(inputs)
        tolerance = TOLERANCE[dtype][0 if folder == one and cls is HFTextScorer else 1]
        close(got, want, tolerance, f"{cls.__name__} {folder.name} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_embeddings(tmp_path: Path, device: str, dtype: str) -> None:
    folder = build_tiny_encoder(tmp_path / "encoder")
    texts = [p.premise for p in PAIRS]
    want = HFEmbeddingModel.load(folder, **CPU).encode(texts)
    got = HFEmbeddingModel.load(folder, device=device, dtype=dtype).encode(texts)
    close(got, want, TOLERANCE[dtype][1], f"embeddings {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_t5_nli(tmp_path: Path, device: str, dtype: str) -> None:
    folder = save_model(tiny_t5(), t5_tokenizer(), tmp_path / "t5")
    want = TrueT5NLI(folder, max_new_tokens=3, **CPU).entails_sync(PAIRS)
    got = TrueT5NLI(folder, max_new_tokens=3, device=device, dtype=dtype).entails_sync(PAIRS)
    close([v.score for v in got], [v.score for v in want], TOLERANCE[dtype][1], "T5 P('1')")
    if dtype == "float32":
        assert [v.entailed for v in got] == [v.entailed for v in want]


# --- HF chat generation ----------------------------------------------------------------------


def test_chat_greedy_same_tokens_in_float32(random_lm_dir: Path, device: str) -> None:
    messages = [ChatMessage(role="user", content="where is the capital of france")]
    configs = [
        GenerateConfig(max_tokens=12, temperature=0.0),
        GenerateConfig(max_tokens=12, temperature=0.0, repetition_penalty=1.3, stop=["city"]),
    ]
    cpu = HFChat.load(random_lm_dir, **CPU)
    gpu = HFChat.load(random_lm_dir, device=device, dtype="float32")
    gpu.progress = lambda progress: None
    for config in configs:
        request = ChatRequest(messages=messages, config=config)
        want, got = cpu.generate_sync(request), gpu.generate_sync(request)
        assert (got.text, got.finish_reason, got.usage) == (
            want.text,
            want.finish_reason,
            want.usage,
        )


def test_chat_sampled_runs_in_bfloat16(random_lm_dir: Path, device: str) -> None:
    """Sampling draws from the device's generator (other numbers than the CPU's): seeded runs
    repeat, and the reply has the asked length."""
    chat = HFChat.load(random_lm_dir, device=device, dtype="bfloat16")
    config = GenerateConfig(max_tokens=6, temperature=0.8, seed=5, repetition_penalty=1.2)
    request = ChatRequest(messages=[ChatMessage(role="user", content="hello")], config=config)
    first, again = chat.generate_sync(request), chat.generate_sync(request)
    assert first.text == again.text and first.usage.completion_tokens <= 6


# --- CAQA classifier judge and fine-tuning ---------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_classifier_judge(tmp_path: Path, device: str, dtype: str) -> None:
    folder = build_tiny_nli_classifier(tmp_path / "judge", id2label=dict(enumerate(CATEGORIES)))
    want = ClassifierJudge(folder, **CPU).judge_sync(SAMPLES)
    got = ClassifierJudge(folder, device=device, dtype=dtype).judge_sync(SAMPLES)
    assert all(j.error is None for j in got), [j.error for j in got]
    for g, w in zip(got, want, strict=True):
        assert g.scores is not None and w.scores is not None
        close([g.scores[c] for c in CATEGORIES], [w.scores[c] for c in CATEGORIES],
              TOLERANCE[dtype][1], f"judge {dtype}")  # fmt: skip
        if dtype == "float32":
            assert g.label == w.label


def fine_tuning_losses(base: Path, device: str) -> tuple[float, float]:
    """The loss of a 4-sample micro-batch, then again after one AdamW step on it (dropout off,
    so CPU and GPU compute the same function; the new head is drawn on the CPU, seed 0)."""
    config = CaqaFinetuneConfig(
        base=str(base), kind="classifier", max_length=32, learning_rate=1e-2, warmup_ratio=0.0
    )
    torch.manual_seed(0)
    trainee = ClassifierTrainee(config, torch, transformers, device)
    trainee.model.eval()
    optimizer, _ = _optimizer(trainee.model, config, torch, total=1)
    targets = [0, 1, 2, 3]
    loss = trainee.loss(SAMPLES, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(trainee.model.parameters(), 1.0)
    optimizer.step()
    with torch.no_grad():
        after = trainee.loss(SAMPLES, targets)
    return float(loss.detach()), float(after)


def test_one_fine_tuning_step(classifier_dir: Path, device: str) -> None:
    want = fine_tuning_losses(classifier_dir, "cpu")
    got = fine_tuning_losses(classifier_dir, device)
    assert all(torch.isfinite(torch.tensor(got)))
    close(got, want, 1e-4, "classifier fine-tuning loss (float32), before and after a step")
    assert abs(got[1] - got[0]) > 1e-6  # the step changed the weights
