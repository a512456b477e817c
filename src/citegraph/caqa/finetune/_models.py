"""The two fine-tuning backends: a sequence classifier and a causal LM.

Each wraps a loaded model and tokenizer and gives the training loop of
:func:`~citegraph.caqa.finetune` what it needs: the mean loss of a micro-batch, dev scores and
``save``. torch and transformers are imported by the caller (``nli`` extra for classifiers,
``local`` for causal LMs) and passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.finetune._config import CaqaFinetuneConfig
from citegraph.caqa.finetune._data import (
    IGNORE_INDEX,
    LABEL_WORDS,
    causal_prompt,
    classifier_texts,
    encode_causal,
    label_names,
    pad_features,
    raw_chat_template,
)
from citegraph.errors import ConfigError
from citegraph.models.chat import load_causal_lm
from citegraph.models.hf import (
    effective_max_length,
    load_pretrained,
    quiet_loading,
    resolve_dtype,
    resolve_model_path,
)


class Trainee:
    """A model being fine-tuned (see :class:`ClassifierTrainee`, :class:`CausalTrainee`)."""

    model: Any
    tokenizer: Any
    torch: Any
    transformers: Any
    device: str
    max_length: int
    truncated: set[str]

    def __init__(
        self, config: CaqaFinetuneConfig, torch: Any, transformers: Any, device: str
    ) -> None:
        self.config = config
        self.torch = torch
        self.transformers = transformers
        self.device = device

    def loss(self, samples: Sequence[CaqaSample], targets: Sequence[int]) -> Any:
        """The mean loss of one micro-batch (a scalar tensor with a graph)."""
        raise NotImplementedError

    def evaluate(self, samples: Sequence[CaqaSample], targets: Sequence[int]) -> dict[str, float]:
        """Dev scores: ``accuracy`` (= micro-F1, every sample gets a label), ``loss``, ``n``."""
        raise NotImplementedError

    def save(self, path: Path) -> None:
        """Write the model and tokenizer with ``save_pretrained`` (no progress bars)."""
        with quiet_loading(self.transformers):
            self.model.save_pretrained(path)
            self.tokenizer.save_pretrained(path)


def _batches(n: int, size: int) -> list[range]:
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


class ClassifierTrainee(Trainee):
    """``AutoModelForSequenceClassification`` with a fresh head of 4 (or 2) CAQA classes."""

    def __init__(
        self, config: CaqaFinetuneConfig, torch: Any, transformers: Any, device: str
    ) -> None:
        super().__init__(config, torch, transformers, device)
        names = label_names(config.labels)
        id2label = dict(enumerate(names))
        path = resolve_model_path(config.base)
        with quiet_loading(transformers):
            tokenizer = load_pretrained(
                transformers.AutoTokenizer.from_pretrained, path, "tokenizer"
            )
            model_config = load_pretrained(
                lambda p: transformers.AutoConfig.from_pretrained(
                    p,
                    id2label=id2label,
                    label2id={v: k for k, v in id2label.items()},
                ),
                path,
                "model configuration",
            )
            kwargs: dict[str, Any] = {
                "config": model_config,
                "ignore_mismatched_sizes": True,  # e.g. an NLI model's 3-way head is replaced
            }
            if config.dtype is not None:
                kwargs["dtype"] = resolve_dtype(torch, config.dtype, device)
            auto = transformers.AutoModelForSequenceClassification
            model = load_pretrained(lambda p: auto.from_pretrained(p, **kwargs), path, "classifier")
        model.config.problem_type = "single_label_classification"
        if tokenizer.pad_token is None:  # GPT-style classifiers pool the last non-pad token
            if tokenizer.eos_token is None:
                raise ConfigError(f"{config.base!r}: the tokenizer has no pad or EOS token")
            tokenizer.pad_token = tokenizer.eos_token
        model.config.pad_token_id = tokenizer.pad_token_id
        self.tokenizer, self.model = tokenizer, model.to(device)
        self.max_length = effective_max_length(config.max_length, tokenizer, model.config)
        self.truncated = set()

    def _logits(self, samples: Sequence[CaqaSample], *, track: bool = True) -> Any:
        first, second = classifier_texts(samples, self.config.classifier_input, self.config.prompt)
        if track:  # count the training samples that lose tokens
            full = self.tokenizer(first, second, truncation=False)["input_ids"]
            self.truncated.update(
                s.id for s, ids in zip(samples, full, strict=True) if len(ids) > self.max_length
            )
        encoded = self.tokenizer(first, second, truncation=True, max_length=self.max_length)
        features = [{key: encoded[key][i] for key in encoded} for i in range(len(samples))]
        batch = pad_features(features, {"input_ids": int(self.tokenizer.pad_token_id)}, self.torch)
        batch = {k: v.to(self.device) for k, v in batch.items()}
        return self.model(**batch).logits.float()

    def loss(self, samples: Sequence[CaqaSample], targets: Sequence[int]) -> Any:
        gold = self.torch.tensor(list(targets), dtype=self.torch.long, device=self.device)
        return self.torch.nn.functional.cross_entropy(self._logits(samples), gold)

    def evaluate(self, samples: Sequence[CaqaSample], targets: Sequence[int]) -> dict[str, float]:
        torch = self.torch
        correct, loss_sum = 0, 0.0
        self.model.eval()
        with torch.no_grad():
            for part in _batches(len(samples), self.config.batch_size):
                logits = self._logits([samples[i] for i in part], track=False)
                gold = torch.tensor([targets[i] for i in part], device=self.device)
                loss = torch.nn.functional.cross_entropy(logits, gold, reduction="sum")
                loss_sum += float(loss)
                correct += int((logits.argmax(dim=-1) == gold).sum())
        self.model.train()
        n = len(samples)
        return {"accuracy": correct / n, "loss": loss_sum / n, "n": float(n)}


class CausalTrainee(Trainee):
    """``AutoModelForCausalLM`` trained to answer the Alpaca prompt with the label word."""

    def __init__(
        self, config: CaqaFinetuneConfig, torch: Any, transformers: Any, device: str
    ) -> None:
        super().__init__(config, torch, transformers, device)
        loaded = load_causal_lm(config.base, device=device, dtype=config.dtype or "float32")
        tokenizer, model = loaded.tokenizer, loaded.model
        if config.prompt_format == "raw":
            tokenizer.chat_template = raw_chat_template(tokenizer)
        elif not getattr(tokenizer, "chat_template", None):
            raise ConfigError(f"{config.base!r} has no chat template; use prompt_format='raw'")
        if tokenizer.eos_token_id is None:
            raise ConfigError(f"{config.base!r}: the tokenizer has no EOS token")
        pad = tokenizer.pad_token_id
        self.pad_id = int(tokenizer.eos_token_id if pad is None else pad)
        generation = model.generation_config
        if generation.eos_token_id is None:
            generation.eos_token_id = tokenizer.eos_token_id
        if generation.pad_token_id is None:
            generation.pad_token_id = self.pad_id
        if config.gradient_checkpointing:
            model.config.use_cache = False
        self.words = LABEL_WORDS[config.labels]
        self.names = label_names(config.labels)
        self.tokenizer, self.model = tokenizer, model.to(device)
        self.max_length = effective_max_length(config.max_length, tokenizer, model.config)
        self.truncated = set()

    def prompt_text(self, sample: CaqaSample) -> str:
        """The formatted prompt of ``sample`` (what :class:`HFChat` will send the model)."""
        return causal_prompt(self.tokenizer, self.config.prompt, sample)

    def _features(
        self, samples: Sequence[CaqaSample], answers: Sequence[int], *, track: bool = True
    ) -> dict[str, Any]:
        rows = []
        for sample, answer in zip(samples, answers, strict=True):
            example = encode_causal(
                self.tokenizer,
                self.prompt_text(sample),
                self.words[self.names[answer]],
                self.max_length,
            )
            if track and example.truncated:
                self.truncated.add(sample.id)
            ids = example.input_ids
            rows.append(
                {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": example.labels}
            )
        pads = {"input_ids": self.pad_id, "attention_mask": 0, "labels": IGNORE_INDEX}
        return {k: v.to(self.device) for k, v in pad_features(rows, pads, self.torch).items()}

    def loss(self, samples: Sequence[CaqaSample], targets: Sequence[int]) -> Any:
        return self.model(**self._features(samples, targets)).loss

    def save(self, path: Path) -> None:
        """Save with the KV cache switched back on (gradient checkpointing turns it off)."""
        self.model.config.use_cache = True
        super().save(path)

    def _answer_logprobs(self, batch: dict[str, Any]) -> Any:
        """Per row: the summed log-probability of its unmasked (answer + EOS) tokens."""
        torch = self.torch
        logits = self.model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
        ).logits
        labels = batch["labels"][:, 1:]
        logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        mask = labels != IGNORE_INDEX
        picked = logprobs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        return (picked * mask).sum(dim=-1), mask.sum(dim=-1)

    def evaluate(self, samples: Sequence[CaqaSample], targets: Sequence[int]) -> dict[str, float]:
        """Ranks the label words by the log-probability of ``word + EOS`` after the prompt (no
        generation); ``loss`` is the mean token loss of the gold answers."""
        torch = self.torch
        k = len(self.names)
        pairs = [(i, c) for i in range(len(samples)) for c in range(k)]
        scores = torch.zeros(len(samples), k)
        gold_loss, gold_tokens = 0.0, 0
        self.model.eval()
        with torch.no_grad():
            for part in _batches(len(pairs), self.config.batch_size):
                chosen = [pairs[j] for j in part]
                batch = self._features(
                    [samples[i] for i, _ in chosen], [c for _, c in chosen], track=False
                )
                summed, counts = self._answer_logprobs(batch)
                for (i, c), value, count in zip(
                    chosen, summed.tolist(), counts.tolist(), strict=True
                ):
                    scores[i, c] = value
                    if c == targets[i]:
                        gold_loss -= value
                        gold_tokens += int(count)
        self.model.train()
        predicted = scores.argmax(dim=-1).tolist()
        correct = sum(int(p == t) for p, t in zip(predicted, targets, strict=True))
        n = len(samples)
        return {"accuracy": correct / n, "loss": gold_loss / max(gold_tokens, 1), "n": float(n)}
