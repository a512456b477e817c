"""TRUE-style seq2seq NLI (``google/t5_xxl_true_nli_mixture``) behind :class:`NLIModel`.

This is the model the KaLMA paper uses for text-citation alignment and [NA] evaluation (App. B.3).
The input is ``"premise: {P} hypothesis: {H}"``; the model generates ``"1"`` (entailed) or
``"0"``. As in the authors' code, decoding is greedy with ``max_new_tokens=10`` and a pair is
entailed iff the decoded text (special tokens skipped, whitespace stripped) is exactly ``"1"``.
``score`` is the probability of the token ``"1"`` at the first decoding step, when ``"1"`` is a
single token of the vocabulary.

Two ways to decode, with the same verdicts:

- ``decode="generate"`` (the reference): ``model.generate`` as the authors' code.
- ``decode="one-step"`` (default): the encoder and the first two decoder steps (the second reuses
  the first's keys and values), all on the device in one go, then one transfer per batch. Greedy
  decoding picks the argmax of the logits at each step, so a row whose first token is end of
  sequence, or whose second is, has produced its whole output: its text is decoded from those
  tokens exactly as ``generate``'s would be (the TRUE model answers ``"1"`` or ``"0"`` and
  stops, so that is nearly every row). Any other row (a first ``"1"`` followed by more text:
  ``"10"``; a first token that decodes to nothing, then ``"1"``) goes through ``generate``, so
  the verdict is always ``generate``'s. It needs greedy decoding to be the plain argmax: a model
  whose generation config adds a logits processor (repetition penalty, minimum length, forced or
  suppressed tokens...) or a stop string decodes with ``generate`` (:attr:`TrueT5NLI.decode`
  says which is used, :attr:`TrueT5NLI.decode_note` why).

The authors' code does not truncate. With ``max_length`` set, an over-long input is shortened by
cutting the end of the *premise*, so the hypothesis always reaches the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from citegraph.errors import ConfigError
from citegraph.models._nli_protocol import NLIPair, NLIVerdict
from citegraph.models.hf import CPU_PLAN, HFBackend, batch_plan_for, check_batching, run_error

#: The TRUE prompt; ``{premise}`` and ``{hypothesis}`` are filled in.
TRUE_TEMPLATE = "premise: {premise} hypothesis: {hypothesis}"
#: ``"one-step"``: two decoder steps on the device, ``generate`` for undecided rows only;
#: ``"generate"``: ``model.generate`` for every row (the reference).
Decode = Literal["one-step", "generate"]
DECODE_MODES: tuple[str, ...] = ("one-step", "generate")
#: Decoder steps the one-step decoding runs (the answer token and end of sequence).
STEPS = 2

#: Generation settings for which transformers adds a logits processor or a stopping rule to
#: greedy decoding (so it may not pick the argmax of the raw logits), with their neutral values.
NEUTRAL_GENERATION: dict[str, tuple[Any, ...]] = {
    "guidance_scale": (None, 1.0),
    "sequence_bias": (None,),
    "repetition_penalty": (None, 1.0),
    "encoder_repetition_penalty": (None, 1.0),
    "no_repeat_ngram_size": (None, 0),
    "encoder_no_repeat_ngram_size": (None, 0),
    "bad_words_ids": (None,),
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "remove_invalid_values": (None, False),
    "exponential_decay_length_penalty": (None,),
    "suppress_tokens": (None,),
    "begin_suppress_tokens": (None,),
    "watermarking_config": (None,),
    "stop_strings": (None,),
    "max_time": (None,),
}


def _as_ids(value: Any) -> set[int]:
    """A token id or a list of them as a set (``None``: empty)."""
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    return {int(v) for v in value}


class TrueT5NLI(HFBackend):
    """A seq2seq NLI model that answers ``"1"`` for entailment (TRUE, T5).

    Args:
        path: Local model directory or Hugging Face hub id.
        batch_size: Most pairs per batch; ``None``: the device's plan (8 on a CPU, up to 512 on
            an accelerator; see :func:`~citegraph.models.hf._batching.batch_plan_for`).
        max_length: Input token limit (premise cut first); ``None`` = no truncation (reference).
        max_new_tokens: Generation length, 10 as in the KaLMA code.
        positive: The decoded answer that means entailed.
        template: Input format with ``{premise}`` and ``{hypothesis}``.
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
        decode: ``"one-step"`` (default) or ``"generate"`` (see the module docstring).
        max_batch_tokens: Most padded input positions per batch; ``None``: the device's plan.

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
        device: str = "auto",
        dtype: Any = "auto",
        decode: Decode = "one-step",
        max_batch_tokens: int | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        if max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if "{premise}" not in template or "{hypothesis}" not in template:
            raise ConfigError("template must contain {premise} and {hypothesis}")
        if decode not in DECODE_MODES:
            raise ConfigError(f"decode must be one of {DECODE_MODES}, got {decode!r}")
        # a batch is one encoder pass plus one decoder pass per generated token
        steps = min(STEPS, max_new_tokens) if decode == "one-step" else max_new_tokens
        plan = batch_plan_for(
            device, batch_size=batch_size, max_batch_tokens=max_batch_tokens,
            cpu=replace(CPU_PLAN, batch_size=8), calls=1 + steps,
        )  # fmt: skip
        super().__init__(path, plan=plan, device=device, dtype=dtype)
        self._max_length = max_length
        self._max_new_tokens = max_new_tokens
        self._positive = positive
        self._template = template
        ids = self._tokenizer(positive, add_special_tokens=False).input_ids
        self._positive_id: int | None = int(ids[0]) if len(ids) == 1 else None
        self._decode: Decode = decode
        self._decode_note = "asked for" if decode == "generate" else "exact (see the module)"
        if decode == "one-step":
            blocker = self._one_step_blocker()
            if blocker is not None:
                self._decode, self._decode_note = "generate", blocker
        self._texts: dict[tuple[int, ...], bool] = {}  # decoded short outputs -> positive?
        self._counts = {"one-step": 0, "generate": 0}

    @property
    def positive_token_id(self) -> int | None:
        """Vocabulary id of the positive answer, or ``None`` if it is not a single token."""
        return self._positive_id

    @property
    def decode(self) -> Decode:
        """How pairs are decoded: ``"one-step"`` or ``"generate"``."""
        return self._decode

    @property
    def decode_note(self) -> str:
        """Why :attr:`decode` is what it is (e.g. a generation setting that rules out one-step)."""
        return self._decode_note

    @property
    def decode_counts(self) -> dict[str, int]:
        """Pairs decided so far by the decoder steps alone and by ``generate``."""
        return dict(self._counts)

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

    def _one_step_blocker(self) -> str | None:
        """Why the decoder steps could disagree with ``generate`` for this model, or ``None``."""
        generation = getattr(self._model, "generation_config", None)
        if generation is None:
            return "the model has no generation config"
        for field, neutral in NEUTRAL_GENERATION.items():
            value = getattr(generation, field, None)
            if not any(value is n or value == n for n in neutral):
                return f"its generation config sets {field}={value!r}"
        start = generation.decoder_start_token_id
        if start is None:
            start = getattr(self._model.config, "decoder_start_token_id", None)
        if not isinstance(start, int):
            return "it has no single decoder start token"
        pad = generation.pad_token_id
        pad_ids = _as_ids(pad) or _as_ids(generation.eos_token_id)
        skipped = self._tokenizer.decode(sorted(pad_ids), skip_special_tokens=True)
        if skipped.strip():
            return "the token that pads finished outputs decodes to text"
        params = set(inspect.signature(self._model.forward).parameters)
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self._start_id = start
        self._eos_ids = _as_ids(generation.eos_token_id)
        return None

    def _verdicts(self, pairs: list[NLIPair]) -> list[NLIVerdict]:
        texts = [self.format_input(p) for p in pairs]
        run: Callable[[dict[str, Any]], Any] = self._steps
        finish: Callable[[Any], list[NLIVerdict]] = self._step_verdicts
        if self._decode == "generate":
            run, finish = self._generate, self._generated_verdicts
        return self._length_sorted(
            run, texts, max_length=self._max_length, plan=self._plan, finish=finish
        )

    def _generate(self, encoded: dict[str, Any]) -> Any:
        """``generate``'s output for one batch (the reference decoding); only the ids and the
        mask go in (a tokenizer that also gives token types would make ``generate`` refuse)."""
        inputs = {k: v for k, v in encoded.items() if k in ("input_ids", "attention_mask")}
        try:
            return self._model.generate(
                **inputs,
                max_new_tokens=self._max_new_tokens,
                do_sample=False,
                num_beams=1,
                output_logits=True,
                return_dict_in_generate=True,
            )
        except Exception as exc:
            raise run_error(self._torch, self.name, self._device, exc, "generation") from exc

    def _first_scores(self, logits: Any) -> Any:
        """P(positive token) from first-step logits (zeros when it is not a single token)."""
        torch = self._torch
        if self._positive_id is None:
            return torch.zeros(logits.shape[0], dtype=torch.float32, device=logits.device)
        return torch.softmax(logits.float(), dim=-1)[:, self._positive_id]

    def _generated_verdicts(self, out: Any) -> list[NLIVerdict]:
        decoded = self._tokenizer.batch_decode(out.sequences.tolist(), skip_special_tokens=True)
        self._counts["generate"] += len(decoded)
        scores: list[float | None] = [None] * len(decoded)
        if self._positive_id is not None and out.logits:
            scores = list(self._first_scores(out.logits[0]).tolist())
        return [
            NLIVerdict(entailed=text.strip() == self._positive, score=score, source=self.name)
            for text, score in zip(decoded, scores, strict=True)
        ]

    def _steps(self, encoded: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The encoder and the first decoder steps of one batch, left on the device: rows of
        ``(P(positive) at step 1, token 1, token 2)`` (float64, exact for token ids), and the
        inputs (for rows that ``generate`` must finish)."""
        torch, model = self._torch, self._model
        ids, mask = encoded["input_ids"], encoded["attention_mask"]
        steps = min(STEPS, self._max_new_tokens)
        try:
            encoder_outputs = model.get_encoder()(input_ids=ids, attention_mask=mask)
            token = torch.full(
                (ids.shape[0], 1), self._start_id, dtype=torch.long, device=ids.device
            )
            columns, cache = [], None
            for step in range(steps):
                extra: dict[str, Any] = {} if cache is None else {self._cache_arg: cache}
                out = model(
                    encoder_outputs=encoder_outputs,
                    attention_mask=mask,
                    decoder_input_ids=token,
                    use_cache=step + 1 < steps,
                    **extra,
                )
                logits = out.logits[:, -1].float()  # as generate: float32, then argmax
                if step == 0:
                    columns.append(self._first_scores(logits).double())
                token = logits.argmax(dim=-1, keepdim=True)
                columns.append(token[:, 0].double())
                cache = getattr(out, self._cache_arg, None)
        except Exception as exc:
            raise run_error(self._torch, self.name, self._device, exc, "decoding") from exc
        return torch.stack(columns, dim=1), encoded

    def _step_verdicts(self, launched: tuple[Any, dict[str, Any]]) -> list[NLIVerdict]:
        """The verdicts of one batch from its decoder steps (one transfer), ``generate`` finishing
        the rows that the steps leave undecided."""
        rows, encoded = launched
        values = rows.tolist()
        score: list[float | None] = [
            v[0] if self._positive_id is not None else None for v in values
        ]
        verdicts: list[NLIVerdict | None] = []
        undecided = []
        for r, row in enumerate(values):
            output = self._finished_output([int(t) for t in row[1:]])
            if output is None:
                undecided.append(r)
                verdicts.append(None)
            else:
                entailed = self._says_positive(output)
                verdicts.append(NLIVerdict(entailed=entailed, score=score[r], source=self.name))
        self._counts["one-step"] += len(values) - len(undecided)
        if undecided:
            index = self._torch.tensor(undecided, device=encoded["input_ids"].device)
            sub = {k: v.index_select(0, index) for k, v in encoded.items()}
            generated = self._generated_verdicts(self._generate(sub))
            for r, verdict in zip(undecided, generated, strict=True):
                verdicts[r] = NLIVerdict(
                    entailed=verdict.entailed, score=score[r], source=self.name
                )
        return [v for v in verdicts if v is not None]

    def _finished_output(self, tokens: Sequence[int]) -> tuple[int, ...] | None:
        """The whole greedy output (decoder start first) if these first tokens end it: an end of
        sequence, or ``max_new_tokens`` reached; else ``None``."""
        for n, token in enumerate(tokens, start=1):
            if token in self._eos_ids or n == self._max_new_tokens:
                return (self._start_id, *tokens[:n])
        return None

    def _says_positive(self, output: tuple[int, ...]) -> bool:
        """Whether ``output`` decodes (special tokens skipped, stripped) to the positive answer."""
        known = self._texts.get(output)
        if known is None:
            text = self._tokenizer.decode(list(output), skip_special_tokens=True)
            known = self._texts[output] = text.strip() == self._positive
        return known
