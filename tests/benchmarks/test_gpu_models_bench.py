"""``benchmarks/gpu_models.py``: the TRUE-like T5 is decided by its decoder steps, at the small
and at the paper size, and the profile breakdown accounts for a batched call's time."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.needs("torch", "transformers", "tokenizers")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
PAIRS = [
    ("The cat sat on the mat all afternoon.", "A cat is sitting."),
    ("He went to the store yesterday to buy bread and eggs.", "He bought milk."),
    ("The meeting was moved from Monday to Thursday afternoon.", "The meeting is on Monday."),
    ("Rain fell all night over the small village by the river.", "It was dry."),
    ("She has lived in Paris for ten years and speaks French.", "She knows Paris well."),
    ("The committee approved the budget after a long debate.", "The budget passed."),
    ("Most of the students finished the exam before noon.", "Nobody finished the exam."),
    ("A new bridge opened across the river in May.", "There is a bridge."),
    ("Conceptually cream skimming has two basic dimensions.", "Cream skimming is simple."),
    ("The museum closes at six on weekdays and at four on Sundays.", "It is open late."),
    ("Two dogs chase a ball across a green park.", "Animals are playing."),
    ("The report was published in three languages last week.", "The report is in English."),
]


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # gpu_models imports _breakdown from its folder
    spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _load("gpu_models")


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    import transformers

    from citegraph.models.embed import locate_minilm

    return transformers.AutoTokenizer.from_pretrained(locate_minilm())


def test_small_true_like_is_decided_by_the_steps(
    bench: ModuleType, tokenizer: Any, tmp_path: Path
) -> None:
    from citegraph.models import NLIPair
    from citegraph.models.nli import TrueT5NLI

    texts = [f"premise: {p} hypothesis: {h}" for p, h in PAIRS]
    path = bench.build("t5-nli", bench.configs("small")["t5-nli"], tmp_path, tokenizer, texts)
    pairs = [NLIPair(premise=p, hypothesis=h) for p, h in PAIRS]
    steps = TrueT5NLI(path, device="cpu", dtype="float32")
    verdicts = steps.entails_sync(pairs)
    assert steps.decode == "one-step"
    assert steps.decode_counts == {"one-step": len(pairs), "generate": 0}
    answers = [v.entailed for v in verdicts]
    assert any(answers) and not all(answers)  # "1" or "0" by input
    reference = TrueT5NLI(path, device="cpu", dtype="float32", decode="generate")
    assert [v.entailed for v in reference.entails_sync(pairs)] == answers


@pytest.mark.slow
def test_paper_size_true_like_answers_one_token_then_stops(
    bench: ModuleType, tokenizer: Any
) -> None:
    """T5-large (738 M, fp32, ~3 GB): greedy decoding gives "1" or "0", then end of sequence;
    before the fix, its first token was a random one and no pair stopped (~30 s on one core)."""
    import torch
    import transformers

    torch.manual_seed(0)
    model = transformers.T5ForConditionalGeneration(bench.configs("paper")["t5-nli"]).eval()
    texts = [f"premise: {p} hypothesis: {h}" for p, h in PAIRS[:4]]
    bench.true_like(model, tokenizer, texts)
    enc = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.inference_mode():
        out = model.generate(
            input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
            max_new_tokens=10, do_sample=False, num_beams=1,
        )  # fmt: skip
    for row in out.tolist():
        assert row[0] == bench.PAD and row[1] in (bench.ONE, bench.ZERO)
        assert row[2] == bench.EOS, row


def test_breakdown_accounts_for_a_batched_call(
    bench: ModuleType, tokenizer: Any, tmp_path: Path
) -> None:
    import torch

    from citegraph.models import embedding_model
    from citegraph.models.hf import _batching

    breakdown = _load("_breakdown")
    path = bench.build("embed", bench.configs("small")["embed"], tmp_path, tokenizer)
    model = embedding_model(f"hf//{path}", device="cpu", dtype=torch.float32)
    texts = [p + " " + h * (1 + i % 4) for i, (p, h) in enumerate(PAIRS * 3)]
    tokenizer_class, pad_rows = type(model._tokenizer), _batching.pad_rows
    want = model.encode(texts, batch_size=8)
    got, out = breakdown.profile_call(
        lambda: model.encode(texts, batch_size=8), model=model._model,
        tokenizer=model._tokenizer, device="cpu", items=len(texts),
    )  # fmt: skip
    assert torch.allclose(torch.tensor(got), torch.tensor(want), atol=1e-5)
    assert out.batches >= len(texts) // 8 and out.forwards == out.batches
    assert out.ms["tokenize"] > 0 and out.ms["pad"] > 0 and out.ms["forward"] > 0
    assert out.ms["sync"] == 0 and out.device_busy_ms is None  # a CPU: nothing to wait for
    assert sum(out.ms.values()) == pytest.approx(out.wall_ms, rel=1e-6)
    real = sum(len(ids) for ids in model._tokenizer(texts, truncation=True).input_ids)
    assert out.real == real and out.padded >= real
    lines = out.lines(0.1)
    assert len(lines) == 3 and "tokenize" in lines[0] and lines[2].count("%") >= 7
    # everything the profiled call wrapped is put back
    assert type(model._tokenizer) is tokenizer_class and _batching.pad_rows is pad_rows
    assert not model._model._forward_pre_hooks and not model._model._forward_hooks
