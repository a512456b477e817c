"""What fine-tuning feeds a model: target labels, classifier inputs, causal examples with masking.

Two kinds of model learn the CAQA categories (§5.2, Appendix C):

- a **sequence classifier** reads the claim (``question + " " + answer``) and the citation as a
  *text pair* (``input="pair"``, the default) or the whole Alpaca prompt of Table 11 as one text
  (``input="prompt"``, the paper's input for every model). A pair is what cross-encoders such as
  DeBERTa NLI models were pre-trained on: the segment embeddings mark which text is the claim,
  and truncation shortens the longer of the two instead of cutting the citation's end.
- a **causal LM** reads the Alpaca prompt and learns to continue it with the label word
  (``Supportive``, ``Insufficient``, ``Contradictory``, ``Irrelevant``; or ``Supportive`` /
  ``Unsupported``) and the end-of-sequence token; the loss is on those tokens only (the prompt
  positions get label -100).

The causal prompt is formatted with the tokenizer's chat template applied to one user message
holding the Alpaca text, then tokenized without special tokens, exactly as
:class:`~citegraph.models.HFChat` formats it at inference. The ``raw`` format installs a
pass-through template (the Alpaca text verbatim, after the BOS token when the tokenizer adds one)
so the fine-tuned model sees at inference the very text the paper trains on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from citegraph.caqa._types import BINARY_LABELS, CATEGORIES, CaqaSample, to_binary
from citegraph.caqa.judge import alpaca_text, claim_of
from citegraph.errors import ConfigError, DataError
from citegraph.runs import sha256_json

LabelChoice = Literal["four", "binary"]
ClassifierInput = Literal["pair", "prompt"]

#: The word a causal model is trained to answer for each label.
LABEL_WORDS: dict[LabelChoice, dict[str, str]] = {
    "four": {
        "supportive": "Supportive",
        "insufficient": "Insufficient",
        "contradictory": "Contradictory",
        "irrelevant": "Irrelevant",
    },
    "binary": {"supportive": "Supportive", "unsupported": "Unsupported"},
}

#: Joins the messages' contents; the Alpaca judge sends a single user message.
_PASS_THROUGH = (
    "{% for m in messages %}{% if not loop.first %}\n\n{% endif %}{{ m['content'] }}{% endfor %}"
)
IGNORE_INDEX = -100


def label_names(labels: LabelChoice) -> tuple[str, ...]:
    """The class names in index order: the four categories, or supportive / unsupported."""
    return tuple(CATEGORIES) if labels == "four" else tuple(BINARY_LABELS)


def training_label(sample: CaqaSample, labels: LabelChoice) -> str:
    """The label ``sample`` is trained on: its gold category, collapsed by :func:`to_binary` in
    the binary setting.

    Raises:
        DataError: A binary gold label (``unsupported``) in the four-way setting.
    """
    if labels == "binary":
        return to_binary(sample.label)
    if sample.label not in CATEGORIES:
        raise DataError(
            f"sample {sample.id!r} has the binary label {sample.label!r}; fine-tune such data "
            "with labels='binary'",
            field="label",
        )
    return sample.label


def training_targets(samples: Sequence[CaqaSample], labels: LabelChoice) -> list[int]:
    """The class index of each sample's training label (see :func:`label_names`)."""
    index = {name: i for i, name in enumerate(label_names(labels))}
    return [index[training_label(s, labels)] for s in samples]


def samples_digest(samples: Sequence[CaqaSample], labels: LabelChoice) -> str:
    """SHA-256 of the canonical JSON of ``[[id, training label], ...]`` in the given order."""
    return sha256_json([[s.id, training_label(s, labels)] for s in samples])


def classifier_texts(
    samples: Sequence[CaqaSample], input_format: ClassifierInput, prompt: str
) -> tuple[list[str], list[str] | None]:
    """The classifier's input texts: ``(claims, citations)`` for a pair, or ``(prompts, None)``
    with the Alpaca text of prompt ``prompt``."""
    if input_format == "pair":
        return [claim_of(s) for s in samples], [s.citation for s in samples]
    if input_format == "prompt":
        return [alpaca_text(prompt, s) for s in samples], None
    raise ConfigError(f"unknown classifier input {input_format!r}; use 'pair' or 'prompt'")


def raw_chat_template(tokenizer: Any) -> str:
    """A chat template writing the messages' contents verbatim, after ``{{ bos_token }}`` when
    ``tokenizer`` adds a BOS token to plain text (Llama, Mistral, Vicuna do; GPT-2 does not)."""
    bos_id = getattr(tokenizer, "bos_token_id", None)
    ids = tokenizer("a", add_special_tokens=True)["input_ids"]
    adds_bos = bos_id is not None and ids[:1] == [bos_id]
    return ("{{ bos_token }}" if adds_bos else "") + _PASS_THROUGH


def causal_prompt(tokenizer: Any, prompt: str, sample: CaqaSample) -> str:
    """The text the causal model continues: the Alpaca text as one user message, through the
    tokenizer's chat template with the generation prompt (as :class:`HFChat` formats it)."""
    message = [{"role": "user", "content": alpaca_text(prompt, sample)}]
    text = tokenizer.apply_chat_template(message, add_generation_prompt=True, tokenize=False)
    return str(text)


class CausalExample(NamedTuple):
    """One tokenized training sequence: the prompt, then the label tokens and EOS."""

    input_ids: list[int]
    labels: list[int]
    """``-100`` on prompt positions, the token id on the answer and EOS positions."""
    truncated: bool
    """Whether prompt tokens were dropped to fit ``max_length``."""


def encode_causal(tokenizer: Any, prompt_text: str, answer: str, max_length: int) -> CausalExample:
    """Tokenize ``prompt_text + " " + answer`` followed by EOS, masking the prompt.

    The answer tokens are those the full text has beyond the prompt's own tokenization (so they
    are what the model generates after that prompt); when a tokenizer merges across the boundary
    they are the answer tokenized alone. A sequence longer than ``max_length`` loses prompt tokens
    from the start (a leading BOS is kept): its end, the citation and ``### Response:``, is what
    the answer depends on.

    Raises:
        ConfigError: The tokenizer has no EOS token, or ``max_length`` leaves no room for the
            prompt.
    """
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is None:
        raise ConfigError("the tokenizer has no EOS token; a causal fine-tune needs one")
    prompt_ids = list(tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    full = list(tokenizer(f"{prompt_text} {answer}", add_special_tokens=False)["input_ids"])
    if len(full) > len(prompt_ids) and full[: len(prompt_ids)] == prompt_ids:
        answer_ids = full[len(prompt_ids) :]
    else:
        answer_ids = list(tokenizer(answer, add_special_tokens=False)["input_ids"])
    answer_ids.append(int(eos))
    room = max_length - len(answer_ids)
    if room < 2:
        raise ConfigError(f"max_length {max_length} leaves no room for the prompt")
    truncated = len(prompt_ids) > room
    if truncated:
        bos = getattr(tokenizer, "bos_token_id", None)
        if bos is not None and prompt_ids[:1] == [bos]:
            prompt_ids = [int(bos), *prompt_ids[-(room - 1) :]]
        else:
            prompt_ids = prompt_ids[-room:]
    return CausalExample(
        input_ids=prompt_ids + answer_ids,
        labels=[IGNORE_INDEX] * len(prompt_ids) + answer_ids,
        truncated=truncated,
    )


def pad_features(
    features: Sequence[Mapping[str, Sequence[int]]], pad_values: Mapping[str, int], torch: Any
) -> dict[str, Any]:
    """Right-pad each key of ``features`` to the longest row and stack into int64 tensors.

    Args:
        features: One mapping per example (``input_ids``, ``attention_mask``, ``labels``...).
        pad_values: The padding value of each key (a key not listed pads with 0).
        torch: The torch module.
    """
    width = max(len(f["input_ids"]) for f in features)
    out: dict[str, Any] = {}
    for key in features[0]:
        fill = pad_values.get(key, 0)
        rows = [list(f[key]) + [fill] * (width - len(f[key])) for f in features]
        out[key] = torch.tensor(rows, dtype=torch.long)
    return out
