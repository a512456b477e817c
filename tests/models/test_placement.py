"""Device and dtype: resolution, loading in a dtype, the fit check, spreading, out of memory.

No GPU here: CUDA and MPS are simulated by a torch stand-in whose ``cuda`` / ``backends.mps``
answer as a machine with GPUs would (everything else is the real torch), and memory by an
injected probe. The real model loading runs on the tiny BERT classifier the tests build.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ConfigError, ModelError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from citegraph.models import NLIPair, nli_model  # noqa: E402
from citegraph.models.hf import Placement, load_hf_model, load_placed, resolve_device, resolve_dtype  # noqa: E402
from citegraph.models.nli import HFClassifierNLI  # noqa: E402

GIB = 1 << 30


class FakeTorch:
    """The real torch, but with ``gpus`` CUDA devices (``bf16``: whether they have bfloat16)
    and optionally MPS."""

    def __init__(self, gpus: int = 0, *, bf16: bool = True, mps: bool = False) -> None:
        self.cuda = types.SimpleNamespace(
            is_available=lambda: gpus > 0,
            device_count=lambda: gpus,
            is_bf16_supported=lambda: bf16,
        )
        self.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps))

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


# ---------------------------------------------------------------- resolution


def test_auto_device_is_the_cpu_here_and_a_gpu_where_there_is_one() -> None:
    assert resolve_device(torch, "auto") == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert resolve_device(FakeTorch(2), "auto") == "cuda:0"
    assert resolve_device(FakeTorch(0, mps=True), "auto") == "mps"
    assert resolve_device(FakeTorch(0), None) == "cpu"
    assert resolve_device(FakeTorch(2), "CUDA:1") == "cuda:1"
    assert resolve_device(FakeTorch(2), "cuda") == "cuda:0"


@pytest.mark.parametrize(
    ("fake", "spec", "words"),
    [
        (FakeTorch(0), "cuda", "no CUDA GPU is visible"),
        (FakeTorch(2), "cuda:2", "only 2 CUDA GPU(s)"),
        (FakeTorch(0), "mps", "MPS is not available"),
        (FakeTorch(1), "gpu", "unknown device 'gpu'"),
        (FakeTorch(1), "cuda:x", "unknown device"),
    ],
)
def test_a_device_the_machine_lacks_is_refused(fake: FakeTorch, spec: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        resolve_device(fake, spec)


def test_auto_dtype_follows_the_device_and_keeps_t5_out_of_float16() -> None:
    assert resolve_dtype(torch, "auto", "cpu") is torch.float32
    assert resolve_dtype(FakeTorch(1, bf16=True), "auto", "cuda:0") is torch.bfloat16
    assert resolve_dtype(FakeTorch(1, bf16=False), "auto", "cuda:0") is torch.float16
    assert resolve_dtype(FakeTorch(1, bf16=False), "auto", "cuda:0", "t5") is torch.float32
    assert resolve_dtype(FakeTorch(0, mps=True), "auto", "mps") is torch.float16
    assert resolve_dtype(FakeTorch(1, bf16=True), "auto", "cuda:0", "t5") is torch.bfloat16
    assert resolve_dtype(torch, None, "cpu") is torch.float32


def test_dtype_names_and_aliases() -> None:
    assert resolve_dtype(torch, "bf16") is torch.bfloat16
    assert resolve_dtype(torch, "torch.float16") is torch.float16
    assert resolve_dtype(torch, "FP32", "cuda:0") is torch.float32
    assert resolve_dtype(torch, torch.float64) is torch.float64
    with pytest.raises(ConfigError, match="unknown dtype 'int8'"):
        resolve_dtype(torch, "int8")


# ---------------------------------------------------------------- loading


def test_a_backend_records_where_it_runs(tiny_nli_classifier_dir: Path) -> None:
    model = HFClassifierNLI(tiny_nli_classifier_dir)
    placement = model.placement
    assert placement is not None
    n_params = sum(p.numel() for p in model._model.parameters())
    assert placement.record() == {
        "device": "cpu",
        "dtype": "float32",
        "n_params": n_params,
        "weight_bytes": 4 * n_params,
    }


def test_bfloat16_on_the_cpu_loads_in_bfloat16_and_moves_scores_little(
    tiny_nli_classifier_dir: Path,
) -> None:
    pairs = [
        NLIPair(premise="Paris is in France.", hypothesis="Paris is French."),
        NLIPair(premise="a b c", hypothesis="d e"),
    ]
    full = nli_model(f"hf:{tiny_nli_classifier_dir}", dtype="float32").entails_sync(pairs)
    half = nli_model(f"hf:{tiny_nli_classifier_dir}", dtype="bf16")
    assert half.placement is not None and half.placement.dtype == "bfloat16"
    assert half.placement.weight_bytes == 2 * half.placement.n_params
    assert {p.dtype for p in half._model.parameters()} == {torch.bfloat16}
    for a, b in zip(full, half.entails_sync(pairs), strict=True):
        assert a.score is not None and b.score is not None
        assert abs(a.score - b.score) < 0.02  # bf16 keeps 8 bits of mantissa


def test_lexical_backends_take_and_ignore_device_and_dtype() -> None:
    assert nli_model("lexical", device="auto", dtype="auto").name == "lexical"
    with pytest.raises(ConfigError, match="unknown option"):
        nli_model("lexical", batch_size=3)  # type: ignore[call-arg]


def test_a_model_too_large_for_the_device_is_refused_before_loading(
    tiny_nli_classifier_dir: Path,
) -> None:
    loads: list[dict[str, Any]] = []
    config = transformers.AutoConfig.from_pretrained(tiny_nli_classifier_dir)
    auto = transformers.AutoModelForSequenceClassification
    n_params = sum(p.numel() for p in auto.from_config(config).parameters())
    free = 4 * n_params  # the weights (4 bytes each) fill all of it: above 90 %

    with pytest.raises(ModelError) as caught:
        load_placed(
            loads.append,
            torch=torch,
            name="tiny-nli",
            device="cpu",
            config=config,
            model_class=auto,
            memory=lambda _torch, _device: (free, 8 * GIB),
        )
    text = str(caught.value)
    assert text.startswith("tiny-nli does not fit on cpu:")
    assert f"{n_params / 1e9:.2f}B parameters" in text
    assert "in float32" in text and "free of 8.0 GiB" in text
    assert loads == []  # nothing was loaded


def test_a_model_too_large_for_one_gpu_is_spread_over_several(
    tiny_nli_classifier_dir: Path,
) -> None:
    config = transformers.AutoConfig.from_pretrained(tiny_nli_classifier_dir)
    auto = transformers.AutoModelForSequenceClassification
    n_params = sum(p.numel() for p in auto.from_config(config).parameters())
    per_gpu = 2 * n_params  # bf16 weights are 2 bytes each: each GPU alone is too small
    seen: list[dict[str, Any]] = []

    def load(kwargs: dict[str, Any]) -> Any:
        seen.append(kwargs)
        return auto.from_pretrained(tiny_nli_classifier_dir)

    fake = FakeTorch(2, bf16=True)
    model, placement = load_placed(
        load,
        torch=fake,
        name="tiny-nli",
        device="auto",
        config=config,
        model_class=auto,
        memory=lambda _torch, _device: (per_gpu, 80 * GIB),
    )
    assert seen == [{"dtype": torch.bfloat16, "device_map": "auto"}]
    assert placement.device == "cuda:0"
    assert not model.training

    with pytest.raises(ModelError, match="does not fit on cuda:1"):  # one GPU named: no spreading
        load_placed(
            load, torch=fake, name="tiny-nli", device="cuda:1", config=config, model_class=auto,
            memory=lambda _torch, _device: (per_gpu, 80 * GIB),
        )  # fmt: skip


def test_running_out_of_memory_while_loading_is_one_clear_error() -> None:
    def load(kwargs: dict[str, Any]) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    with pytest.raises(ModelError) as caught:
        load_placed(load, torch=torch, name="big-model", device="cpu")
    text = str(caught.value)
    assert text.startswith("big-model: out of memory on cpu")
    assert "Tried to allocate 20.00 GiB" in text and "--dtype bfloat16" in text
    assert caught.value.__cause__ is None  # the traceback of the allocator is not chained


def test_the_size_is_counted_without_memory_for_an_auto_class(
    tiny_nli_classifier_dir: Path,
) -> None:
    loaded = load_hf_model(tiny_nli_classifier_dir, "AutoModelForSequenceClassification")
    assert isinstance(loaded.placement, Placement)
    assert loaded.placement.n_params == sum(p.numel() for p in loaded.model.parameters())
    assert not loaded.model.training


def test_running_out_of_memory_in_a_forward_pass_names_the_device_and_its_memory(
    tiny_nli_classifier_dir: Path,
) -> None:
    model = HFClassifierNLI(tiny_nli_classifier_dir)
    real = model._model

    class Exhausted(torch.nn.Module):
        device = real.device
        config = real.config

        def forward(self, **inputs: Any) -> Any:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 3.00 GiB")

    model._model = Exhausted()
    pair = NLIPair(premise="Paris is in France.", hypothesis="Paris is French.")
    with pytest.raises(ModelError) as caught:
        model.entails_sync([pair])
    text = str(caught.value)
    assert text.startswith(f"hf:{tiny_nli_classifier_dir}: out of memory on cpu (")
    assert "GiB free of" in text and "smaller --batch-size" in text


def test_other_forward_failures_keep_their_message() -> None:
    from citegraph.models.hf._placement import run_error

    error = run_error(torch, "m", "cpu", ValueError("shapes (2,3) and (4,5)"), "generation")
    assert str(error) == "m: generation failed: shapes (2,3) and (4,5)"


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_lm_scorer_keeps_its_shortcuts_in_half_precision(tmp_path: Path, dtype: str) -> None:
    """A scorer loaded in half precision keeps the head and prefix shortcuts: both ways of
    computing a log-probability round alike to within the load-time probe's tolerance, which
    follows the dtype (the GPU parity tests check it on a GPU, whose kernels differ).

    The model's weights have Llama's own scale (std 0.02): with the default 0.5 the random
    logits are so large that bf16 rounding alone moves a log-probability by up to 0.18 nats on
    AVX2 kernels (0.0000005 on AVX-512 and portable ones), and the probe rightly turns prefix
    reuse off there."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _tiny_models import build_random_causal_lm
    from citegraph.models.lm import CausalLMScorer

    model = build_random_causal_lm(tmp_path / "lm", initializer_range=0.02)
    scorer = CausalLMScorer.load(model, dtype=dtype)
    assert scorer.placement is not None and scorer.placement.dtype == dtype
    runner = scorer._runner
    assert runner is not None and runner.fast_head and runner.reuses_prefix


def test_the_loaders_pass_the_device_as_asked_so_auto_can_spread(
    tiny_nli_classifier_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``auto`` must reach the fit check as ``auto``: resolved to ``cuda:0`` first, it would
    read as one GPU named and never spread a model over several."""
    import sys

    from citegraph.models.chat import _hf_load as _chat_hf
    from citegraph.models.hf import _common as _hf_common

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _tiny_models import build_random_causal_lm

    asked: list[Any] = []
    real = load_placed

    def recording(load: Any, **options: Any) -> Any:
        asked.append(options["device"])
        return real(load, **options)

    monkeypatch.setattr(_hf_common, "load_placed", recording)
    monkeypatch.setattr(_chat_hf, "load_placed", recording)
    load_hf_model(tiny_nli_classifier_dir, "AutoModelForSequenceClassification")
    _chat_hf.load_causal_lm(build_random_causal_lm(tmp_path / "lm"))
    assert asked == ["auto", "auto"]
