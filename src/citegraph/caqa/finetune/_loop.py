"""The training loop of :func:`~citegraph.caqa.finetune`: plain torch, small and deterministic.

AdamW (no weight decay on biases and norm weights), Hugging Face's linear schedule (warmup from 0
to the peak rate, then linear decay to 0 at the last step), gradient accumulation (each
micro-batch's mean loss weighted 1/len(group)) and clipping. Each epoch shuffles with a
``torch.Generator`` seeded once from ``config.seed``; fractional epochs stop mid-epoch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.finetune._config import CaqaFinetuneConfig
from citegraph.caqa.finetune._models import Trainee

#: ``progress(step, total_steps, info)`` after every optimizer step.
Progress = Callable[[int, int, dict[str, Any]], None]


class EpochRecord(BaseModel):
    """Training loss and dev scores at the end of an epoch (or every ``eval_every`` steps)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    epoch: float = Field(description="Epochs completed (fractional for mid-epoch records).")
    step: int = Field(description="Optimizer steps so far.")
    train_loss: float | None = Field(description="Mean micro-batch loss since the last epoch end.")
    dev: dict[str, float] | None = Field(default=None, description="accuracy, loss, n.")


def steps_per_epoch(n: int, batch_size: int, accumulation: int) -> int:
    """Optimizer steps in one pass over ``n`` samples (the last step may be short)."""
    return math.ceil(math.ceil(n / batch_size) / accumulation)


def _optimizer(model: Any, config: CaqaFinetuneConfig, torch: Any, total: int) -> tuple[Any, Any]:
    """AdamW (no decay on biases and norm weights) and HF's linear warmup-then-decay schedule."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": config.weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=config.learning_rate)
    warmup = int(config.warmup_ratio * total)

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def train_loop(
    trainee: Trainee,
    samples: list[CaqaSample],
    targets: list[int],
    dev: list[CaqaSample],
    dev_targets: list[int],
    config: CaqaFinetuneConfig,
    progress: Progress | None,
) -> tuple[list[EpochRecord], int]:
    """The loop; returns the history and the number of optimizer steps."""
    torch, model = trainee.torch, trainee.model
    n, size, acc = len(samples), config.batch_size, config.gradient_accumulation
    per_epoch = steps_per_epoch(n, size, acc)
    total = max(1, math.ceil(config.epochs * per_epoch))
    optimizer, scheduler = _optimizer(model, config, torch, total)
    order = torch.Generator().manual_seed(config.seed)
    history: list[EpochRecord] = []
    step, epoch = 0, 0
    model.train()
    while step < total:
        perm = torch.randperm(n, generator=order).tolist()
        micro = [perm[i : i + size] for i in range(0, n, size)]
        losses: list[float] = []
        for start in range(0, len(micro), acc):
            if step >= total:
                break
            group = micro[start : start + acc]
            optimizer.zero_grad(set_to_none=True)
            group_loss = 0.0
            for batch in group:
                loss = trainee.loss([samples[i] for i in batch], [targets[i] for i in batch])
                (loss / len(group)).backward()
                group_loss += float(loss.detach()) / len(group)
            if config.max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            lr = float(scheduler.get_last_lr()[0])
            optimizer.step()
            scheduler.step()
            step += 1
            losses.append(group_loss)
            info: dict[str, Any] = {"epoch": epoch + len(losses) / per_epoch, "loss": group_loss}
            info["lr"] = lr
            at_epoch_end = len(losses) == per_epoch or step == total
            if dev and config.eval_every and step % config.eval_every == 0 and not at_epoch_end:
                info["dev"] = trainee.evaluate(dev, dev_targets)
                history.append(
                    EpochRecord(epoch=info["epoch"], step=step, train_loss=None, dev=info["dev"])
                )
            if at_epoch_end and dev:
                info["dev"] = trainee.evaluate(dev, dev_targets)
            if at_epoch_end:
                history.append(
                    EpochRecord(
                        epoch=epoch + len(losses) / per_epoch,
                        step=step,
                        train_loss=sum(losses) / len(losses),
                        dev=info.get("dev"),
                    )
                )
            if progress is not None:
                progress(step, total, info)
        epoch += 1
    model.eval()
    return history, step
