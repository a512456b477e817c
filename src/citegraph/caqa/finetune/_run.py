"""``caqa finetune``: train an attribution evaluator on CAQA's train split (§5.2, Appendix C).

The paper fully fine-tunes LLMs (LLaMA-2, Vicuna, Mistral) with the "Other Evaluators" Alpaca
prompt of Table 11 as input and one of the four categories as output. :func:`finetune` does that
for a causal LM (``kind="causal"``; the loss is on the label word and EOS only) and also trains
a sequence classifier (``kind="classifier"``, e.g. a DeBERTa-v3 cross-encoder) with a 4-way (or
2-way) head. The loop is plain torch: AdamW, linear warmup and decay, gradient accumulation and
clipping, seeded shuffling; one seed gives one result on one machine.

The output folder holds the model, its tokenizer and ``citegraph-judge.json`` (what was trained
on what, the per-epoch losses and dev scores, package versions). A causal model loads back with
``chat_model("hf/<folder>")`` and answers the Alpaca prompt (judge it with prompt ``alpaca``); a
classifier loads with :class:`~citegraph.caqa.finetune.ClassifierJudge`. Training happens in a
sibling ``<folder>.tmp-*`` directory renamed into place at the end, so a folder is complete or
absent.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.finetune._config import META_FILE, META_FORMAT, CaqaFinetuneConfig
from citegraph.caqa.finetune._data import (
    LABEL_WORDS,
    LabelChoice,
    label_names,
    samples_digest,
    training_targets,
)
from citegraph.caqa.finetune._loop import EpochRecord, Progress, steps_per_epoch, train_loop
from citegraph.caqa.finetune._models import CausalTrainee, ClassifierTrainee, Trainee
from citegraph.caqa.judge import prompt_version
from citegraph.errors import ConfigError
from citegraph.io import json_bytes
from citegraph.models.hf import require_transformers, resolve_device
from citegraph.runs import package_versions


class CaqaFinetuneResult(BaseModel):
    """What :func:`finetune` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out_dir: Path
    kind: Literal["classifier", "causal"]
    labels: LabelChoice
    n_train: int = Field(description="Samples trained on (after max_train_samples).")
    steps: int = Field(description="Optimizer steps.")
    epochs_run: float
    final_train_loss: float = Field(description="Mean loss of the last (partial) epoch.")
    history: list[EpochRecord] = Field(description="One record per epoch, plus eval_every ones.")
    dev: dict[str, float] | None = Field(description="The last dev scores, when dev was given.")
    seconds: float


def finetune(
    train: Sequence[CaqaSample],
    config: CaqaFinetuneConfig,
    out_dir: str | Path,
    *,
    dev: Sequence[CaqaSample] | None = None,
    progress: Progress | None = None,
    overwrite: bool = False,
) -> CaqaFinetuneResult:
    """Fine-tune ``config.base`` on ``train`` and save the judge into ``out_dir``.

    Not an engine task: training is one loop whose every step depends on all the steps before it
    (shuffled epochs, optimizer state), so its items cannot be resumed, retried or sharded one by
    one, and its output is a model folder rather than per-item records. What the engine offers
    a run is had here otherwise: the folder is written whole or not at all (renamed into place),
    and ``citegraph-judge.json`` records the config, data hashes and versions.

    Args:
        train: Training samples (``load_caqa_split("train.jsonl")``).
        config: Model, labels and optimisation settings.
        out_dir: Output folder (model, tokenizer, ``citegraph-judge.json``).
        dev: Samples scored (accuracy, loss) after every epoch.
        progress: Called after every optimizer step with ``(step, total_steps, info)``;
            ``info`` has ``epoch``, ``loss``, ``lr`` and, when the dev set was scored, ``dev``.
        overwrite: Replace a non-empty ``out_dir``.

    Raises:
        ConfigError: ``out_dir`` is not empty (and not ``overwrite``), no samples, bad options.
        DataError: A binary gold label in a four-way fine-tune.
        MissingDependency: torch / transformers missing (extra ``nli`` for classifiers,
            ``local`` for causal LMs).
        ModelError: The base model cannot be loaded.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not overwrite)):
        raise ConfigError(f"{out} exists and is not an empty folder; pass overwrite=True")
    used = _subset(list(train), config)
    targets = training_targets(used, config.labels)
    dev_list = list(dev or [])
    dev_targets = training_targets(dev_list, config.labels)
    torch, transformers = require_transformers("nli" if config.kind == "classifier" else "local")
    device = resolve_device(torch, config.device)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{out.name}.tmp-", dir=out.parent))
    try:
        devices = [device] if device.startswith("cuda") else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(config.seed)
            trainee = _trainee(config, torch, transformers, device)
            history, steps = train_loop(
                trainee, used, targets, dev_list, dev_targets, config, progress
            )
            trainee.save(tmp)
        final = next(r for r in reversed(history) if r.train_loss is not None)
        per_epoch = steps_per_epoch(len(used), config.batch_size, config.gradient_accumulation)
        result = CaqaFinetuneResult(
            out_dir=out,
            kind=config.kind,
            labels=config.labels,
            n_train=len(used),
            steps=steps,
            epochs_run=steps / per_epoch,
            final_train_loss=float(final.train_loss or 0.0),
            history=history,
            dev=next((r.dev for r in reversed(history) if r.dev is not None), None),
            seconds=time.perf_counter() - started,
        )
        meta = _metadata(config, result, train, used, dev_list, trainee, device)
        (tmp / META_FILE).write_bytes(json_bytes(meta, indent=2) + b"\n")
        _publish(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result


def _subset(samples: list[CaqaSample], config: CaqaFinetuneConfig) -> list[CaqaSample]:
    if not samples:
        raise ConfigError("no training samples")
    limit = config.max_train_samples
    if limit is None or limit >= len(samples):
        return samples
    keep = sorted(random.Random(config.seed).sample(range(len(samples)), limit))
    return [samples[i] for i in keep]


def _trainee(config: CaqaFinetuneConfig, torch: Any, transformers: Any, device: str) -> Trainee:
    cls: type[Trainee] = ClassifierTrainee if config.kind == "classifier" else CausalTrainee
    trainee = cls(config, torch, transformers, device)
    if config.gradient_checkpointing:  # renamed in transformers 5 (the old name warns)
        model = trainee.model
        enable = getattr(model, "activation_checkpointing_enable", None)
        (enable or model.gradient_checkpointing_enable)()
    return trainee


def _metadata(
    config: CaqaFinetuneConfig,
    result: CaqaFinetuneResult,
    given: Sequence[CaqaSample],
    used: Sequence[CaqaSample],
    dev: Sequence[CaqaSample],
    trainee: Trainee,
    device: str,
) -> dict[str, Any]:
    """The contents of ``citegraph-judge.json``."""
    uses_prompt = config.kind == "causal" or config.classifier_input == "prompt"
    counts = Counter(label_names(config.labels)[t] for t in training_targets(used, config.labels))
    meta: dict[str, Any] = {
        "format": META_FORMAT,
        "kind": config.kind,
        "labels": config.labels,
        "label_names": list(label_names(config.labels)),
        "base": config.base,
        "input": "prompt" if uses_prompt else "pair",
        "prompt": config.prompt if uses_prompt else None,
        "prompt_version": prompt_version(config.prompt) if uses_prompt else None,
        "max_length": trainee.max_length,
        "config": config.model_dump(mode="json"),
        "train": {
            "given": len(given),
            "used": len(used),
            "sha256": samples_digest(used, config.labels),
            "label_counts": dict(sorted(counts.items())),
            "truncated": len(trainee.truncated),
        },
        "dev": {"n": len(dev), "sha256": samples_digest(dev, config.labels)} if dev else None,
        "result": result.model_dump(mode="json", exclude={"out_dir"}),
        "device": device,
        "versions": package_versions(),
    }
    if config.kind == "causal":
        meta["label_words"] = LABEL_WORDS[config.labels]
        meta["prompt_format"] = config.prompt_format
    return meta


def _publish(tmp: Path, out: Path) -> None:
    """Move the finished ``tmp`` folder to ``out``, replacing what was there."""
    old: Path | None = None
    if out.exists():
        old = out.with_name(f"{out.name}.old-{uuid.uuid4().hex[:8]}")
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
