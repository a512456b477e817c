"""TRUE-style seq2seq NLI (``google/t5_xxl_true_nli_mixture``) behind :class:`NLIModel`.

This is the model the KaLMA paper uses for text-citation alignment and [NA] evaluation (App. B.3).
The input is ``"premise: {P} hypothesis: {H}"``; the model generates ``"1"`` (entailed) or
``"0"``. As in the authors' code, decoding is greedy with ``max_new_tokens=10`` and a pair is
entailed iff the decoded text (special tokens skipped, whitespace stripped) is exactly ``"1"``.
``score`` is the probability of the token ``"1"`` at the first decoding step, read from the same
``generate`` call, when ``"1"`` is a single token of the vocabulary.

The authors' code does not truncate. With ``max_length`` set, an over-long input is shortened by
cutting the end of the *premise*, so the hypothesis always reaches the model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, ModelError
from citegraph.models._hf_batching import CPU_PLAN, batch_plan_for
from citegraph.models._hf_common import HFBackend, check_batching
from citegraph.models._nli_protocol import NLIPair, NLIVerdict

#: The TRUE prompt; ``{premise}`` and ``{hypothesis}`` are filled in.
TRUE_TEMPLATE = "premise: {premise} hypothesis: {hypothesis}"


class TrueT5NLI(HFBackend):
    """A seq2seq NLI model that answers ``"1"`` for entailment (TRUE, T5).

    Args:
        path: Local model directory or Hugging Face hub id.
        batch_size: Most pairs per ``generate`` call; ``None``: the device's plan (8 on a CPU).
        max_length: Input token limit (premise cut first); ``None`` = no truncation (reference).
        max_new_tokens: Generation length, 10 as in the KaLMA code.
        positive: The decoded answer that means entailed.
        template: Input format with ``{premise}`` and ``{hypothesis}``.
        device: torch device, ``"cpu"`` by default.
        max_batch_tokens: Most padded input positions per call; ``None``: the device's plan.

    Raises:
        MissingDependency: If torch or transformers is not installed.
        ModelError: If the model or tokenizer cannot be loaded.
        ConfigError: On invalid options.
    """

    scheme = "t5"
    auto_class = "AutoModelForSeq2SeqLM"

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int | None = None,
        max_length: int | None = None,
        max_new_tokens: int = 10,
        positive: str = "1",
        template: str = TRUE_TEMPLATE,
        device: str = "cpu",
        max_batch_tokens: int | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        if max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if "{premise}" not in template or "{hypothesis}" not in template:
            raise ConfigError("template must contain {premise} and {hypothesis}")
        plan = batch_plan_for(
            device, batch_size=batch_size, max_batch_tokens=max_batch_tokens,
            cpu=replace(CPU_PLAN, batch_size=8), calls=1 + max_new_tokens,
        )  # fmt: skip
        super().__init__(path, plan=plan, device=device)
        self._max_length = max_length
        self._max_new_tokens = max_new_tokens
        self._positive = positive
        self._template = template
        ids = self._tokenizer(positive, add_special_tokens=False).input_ids
        self._positive_id: int | None = int(ids[0]) if len(ids) == 1 else None

    @property
    def positive_token_id(self) -> int | None:
        """Vocabulary id of the positive answer, or ``None`` if it is not a single token."""
        return self._positive_id

    def format_input(self, pair: NLIPair) -> str:
        """The exact text given to the model for ``pair`` (premise shortened if needed)."""
        text = self._template.format(premise=pair.premise, hypothesis=pair.hypothesis)
        if self._max_length is None:
            return text
        excess = len(self._tokenizer(text).input_ids) - self._max_length
        if excess <= 0:
            return text
        premise_ids = self._tokenizer(pair.premise, add_special_tokens=False).input_ids
        kept = premise_ids[: max(0, len(premise_ids) - excess)]
        premise = self._tokenizer.decode(kept, skip_special_tokens=True)
        return self._template.format(premise=premise, hypothesis=pair.hypothesis)

    def _verdicts(self, pairs: list[NLIPair]) -> list[NLIVerdict]:
        texts = [self.format_input(p) for p in pairs]
        return self._length_sorted(self._batch, texts, max_length=self._max_length, plan=self._plan)

    def _batch(self, encoded: dict[str, Any]) -> list[NLIVerdict]:
        try:
            out = self._model.generate(
                **encoded,
                max_new_tokens=self._max_new_tokens,
                do_sample=False,
                num_beams=1,
                output_logits=True,
                return_dict_in_generate=True,
            )
        except Exception as exc:
            raise ModelError(f"{self.name}: generation failed: {exc}") from exc
        decoded = self._tokenizer.batch_decode(out.sequences, skip_special_tokens=True)
        scores: list[float | None] = [None] * len(decoded)
        if self._positive_id is not None and out.logits:
            first = self._torch.softmax(out.logits[0].float(), dim=-1)[:, self._positive_id]
            scores = [float(s) for s in first.tolist()]
        return [
            NLIVerdict(entailed=text.strip() == self._positive, score=score, source=self.name)
            for text, score in zip(decoded, scores, strict=True)
        ]
