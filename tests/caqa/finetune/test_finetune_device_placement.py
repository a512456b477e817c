"""The CAQA classifier judge and a fine-tuning step keep their tensors on the model's device:
checked without a GPU on a fake accelerator (see ``tests/_fake_device.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _fake_device import FAKE_DEVICE, MISMATCH_TEXT, FakeAccelerator, run_on_fake_device  # noqa: E402
from _tiny_models import CAQA_SAMPLES, build_tiny_causal_lm  # noqa: E402
from citegraph.caqa import CATEGORIES  # noqa: E402
from citegraph.caqa.finetune import CaqaFinetuneConfig, ClassifierJudge  # noqa: E402
from citegraph.caqa.finetune._models import CausalTrainee, ClassifierTrainee  # noqa: E402
from citegraph.testing import build_tiny_nli_classifier  # noqa: E402

SAMPLES = CAQA_SAMPLES
TARGETS = [0, 1, 2, 3]


def test_classifier_judge_stays_on_the_device(tmp_path: Path) -> None:
    folder = build_tiny_nli_classifier(tmp_path / "judge", id2label=dict(enumerate(CATEGORIES)))
    judge = ClassifierJudge(folder, batch_size=3, device="cpu")
    accelerator = FakeAccelerator()
    accelerator.to_device(judge._model)
    judge._device = FAKE_DEVICE
    with accelerator.active():
        judgements = judge.judge_sync(SAMPLES)
    # a failing batch becomes judgements with its error: the host read of the probabilities
    # ends each batch here, and a device mismatch would be named instead
    assert len(judgements) == len(SAMPLES)
    for judgement in judgements:
        assert judgement.error is not None
        assert MISMATCH_TEXT not in judgement.error, f"ClassifierJudge: {judgement.error}"
        assert "DataDependentOutputException" in judgement.error


def fake_trainee(trainee: Any) -> FakeAccelerator:
    accelerator = FakeAccelerator()
    accelerator.to_device(trainee.model)
    trainee.device = FAKE_DEVICE
    return accelerator


def train_step(trainee: Any) -> float:
    """One micro-batch as ``train_loop`` runs it, up to its host read of the loss."""
    trainee.model.train()
    loss = trainee.loss(SAMPLES, TARGETS)
    loss.backward()
    for param in trainee.model.parameters():
        assert param.grad is None or param.grad.device == torch.device(FAKE_DEVICE)
    torch.nn.utils.clip_grad_norm_(trainee.model.parameters(), 1.0)
    return float(loss.detach())


def test_classifier_fine_tuning_step_stays_on_the_device(tiny_nli_classifier_dir: Path) -> None:
    config = CaqaFinetuneConfig(base=str(tiny_nli_classifier_dir), kind="classifier", max_length=32)
    trainee = ClassifierTrainee(config, torch, transformers, "cpu")
    accelerator = fake_trainee(trainee)
    what = "ClassifierTrainee"
    run_on_fake_device(accelerator, f"{what}: step", lambda: train_step(trainee), to_host=True)
    run_on_fake_device(
        accelerator, f"{what}: dev", lambda: trainee.evaluate(SAMPLES, TARGETS), to_host=True
    )


def test_causal_fine_tuning_step_stays_on_the_device(tmp_path: Path) -> None:
    base = build_tiny_causal_lm(tmp_path / "causal")
    config = CaqaFinetuneConfig(base=str(base), kind="causal", max_length=64)
    trainee = CausalTrainee(config, torch, transformers, "cpu")
    accelerator = fake_trainee(trainee)
    what = "CausalTrainee"
    run_on_fake_device(accelerator, f"{what}: step", lambda: train_step(trainee), to_host=True)
    run_on_fake_device(
        accelerator, f"{what}: dev", lambda: trainee.evaluate(SAMPLES, TARGETS), to_host=True
    )
