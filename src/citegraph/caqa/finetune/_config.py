"""What ``caqa finetune`` trains: :class:`CaqaFinetuneConfig`, and the name of the metadata file
written next to a fine-tuned model (read back by :class:`ClassifierJudge`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citegraph.caqa.finetune._data import ClassifierInput, LabelChoice
from citegraph.caqa.judge import judge_prompt, prompt_label_set
from citegraph.errors import ConfigError

#: The metadata file written next to the model.
META_FILE = "citegraph-judge.json"
META_FORMAT = "citegraph-judge/1"


class CaqaFinetuneConfig(BaseModel):
    """How to fine-tune; written verbatim into ``citegraph-judge.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base: str = Field(description="The model to start from: a Hugging Face hub id or a folder.")
    kind: Literal["classifier", "causal"] = Field(
        description="'classifier': a sequence-classification head over the CAQA labels "
        "(encoders such as DeBERTa-v3); 'causal': a causal LM taught to answer the label word."
    )
    labels: LabelChoice = Field(
        default="four", description="'four' categories, or 'binary' (supportive / unsupported)."
    )
    prompt: str = Field(
        default="alpaca",
        description="Alpaca-style judge prompt (Table 11 'Other Evaluators' by default); its "
        "label set must match `labels` ('reference-2way' for binary). Used by causal models and "
        "by classifiers with classifier_input='prompt'.",
    )
    classifier_input: ClassifierInput = Field(
        default="pair",
        description="Classifier input: the (claim, citation) text pair, or the Alpaca 'prompt'.",
    )
    prompt_format: Literal["raw", "chat_template"] = Field(
        default="raw",
        description="Causal models: train on the Alpaca text verbatim (the saved tokenizer gets a "
        "pass-through chat template) or wrapped in the base model's own chat template.",
    )
    epochs: float = Field(
        default=3.0, gt=0, description="Passes over the data (may be fractional)."
    )
    learning_rate: float = Field(default=2e-5, gt=0, description="Peak AdamW learning rate.")
    weight_decay: float = Field(
        default=0.0, ge=0, description="AdamW weight decay (not on biases and norms)."
    )
    warmup_ratio: float = Field(
        default=0.03, ge=0, lt=1, description="Share of steps with linear warmup before decay."
    )
    batch_size: int = Field(default=8, ge=1, description="Samples per forward pass.")
    gradient_accumulation: int = Field(
        default=1, ge=1, description="Forward passes per optimizer step."
    )
    max_grad_norm: float | None = Field(
        default=1.0, gt=0, description="Gradient clipping norm (None: no clipping)."
    )
    max_length: int = Field(
        default=512, ge=8, description="Token limit per input (the authors truncate at 512)."
    )
    seed: int = Field(default=0, description="Seeds head initialisation, dropout and shuffling.")
    max_train_samples: int | None = Field(
        default=None, ge=1, description="Train on a seeded random subset of this size."
    )
    device: str | None = Field(
        default=None, description="torch device (None: auto, a GPU when present: CUDA, else MPS)."
    )
    dtype: str | None = Field(
        default=None,
        description="Weight dtype when loading ('float32', 'bfloat16'...; None: the default). "
        "Training runs in this dtype (no mixed precision).",
    )
    gradient_checkpointing: bool = Field(
        default=False, description="Trade compute for memory on large models."
    )
    eval_every: int | None = Field(
        default=None, ge=1, description="Also score the dev set every N optimizer steps."
    )

    @model_validator(mode="after")
    def _prompt_fits(self) -> CaqaFinetuneConfig:
        if self.kind == "causal" or self.classifier_input == "prompt":
            entry = judge_prompt(self.prompt)
            if entry["style"] != "alpaca":
                raise ConfigError(f"prompt {self.prompt!r} is not an Alpaca-style prompt")
            if prompt_label_set(self.prompt) != self.labels:
                hint = " (use 'reference-2way')" if self.labels == "binary" else ""
                raise ConfigError(
                    f"prompt {self.prompt!r} asks for {prompt_label_set(self.prompt)} labels, "
                    f"not {self.labels}{hint}"
                )
        return self
