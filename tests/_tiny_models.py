"""Tiny Hugging Face models for tests, built offline and saved to a directory.

Import this module only after ``pytest.importorskip("torch")`` / ``("transformers")`` /
``("tokenizers")``: it needs all three. Everything is seeded, so a saved model is the same on
every run.

- :func:`word_level_tokenizer`: a lower-casing, whitespace-splitting WordLevel tokenizer.
- :func:`save_model`: a model and its tokenizer written with ``save_pretrained``.
- :func:`build_tiny_nli_classifier`: a 1-layer BERT NLI cross-encoder (labels
  ``contradiction / entailment / neutral`` by default), random or with hand-set logits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
import transformers
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

#: The 3-way labels of the tiny classifier; entailment is index 1 (not 0, on purpose).
NLI_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}
#: The tiny classifier's words (after the specials [PAD] [UNK] [CLS] [SEP], ids 0-3).
NLI_WORDS = [
    "he",
    "she",
    "was",
    "born",
    "in",
    "newark",
    "paris",
    "died",
    "wrote",
    "the",
    "a",
    "novel",
    "writer",
    "place",
    "of",
    "birth",
    "death",
    "occupation",
    ":",
    ".",
    ",",
    "1871",
    "stephen",
    "crane",
]
NLI_VOCAB = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *NLI_WORDS])}


def word_level_tokenizer(
    vocab: Mapping[str, int],
    *,
    unk_token: str,
    single: str,
    pair: str | None = None,
    template_tokens: Sequence[str],
    **named_tokens: str,
) -> transformers.PreTrainedTokenizerFast:
    """A WordLevel tokenizer (lower-cased, split on whitespace and punctuation), built offline.

    Args:
        vocab: Token -> id.
        unk_token: The unknown token (must be in ``vocab``).
        single: Post-processing template of one sequence, e.g. ``"$A </s>"``.
        pair: Template of a pair, e.g. ``"[CLS] $A [SEP] $B:1 [SEP]:1"``.
        template_tokens: The special tokens the templates use (their ids come from ``vocab``).
        **named_tokens: ``pad_token``, ``eos_token``, ``cls_token``, ... for transformers.
    """
    tok = Tokenizer(models.WordLevel(vocab=dict(vocab), unk_token=unk_token))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, vocab[t]) for t in template_tokens]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token=unk_token, **named_tokens
    )


def save_model(
    model: transformers.PreTrainedModel, tokenizer: transformers.PreTrainedTokenizerFast, path: Path
) -> Path:
    """Write ``model`` and ``tokenizer`` into ``path`` (created if needed) and return it."""
    transformers.utils.logging.disable_progress_bar()
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def nli_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """The BERT-style pair tokenizer of the tiny classifier: ``[CLS] A [SEP] B [SEP]``."""
    return word_level_tokenizer(
        NLI_VOCAB,
        unk_token="[UNK]",
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        template_tokens=["[CLS]", "[SEP]"],
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
    )


def tiny_bert_classifier(
    id2label: Mapping[int, str] = NLI_LABELS,
) -> transformers.BertForSequenceClassification:
    """A random (seed 0) 1-layer BERT classifier, 16 wide, at most 64 positions."""
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(NLI_VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        id2label=dict(id2label),
        label2id={v: k for k, v in id2label.items()},
    )
    return transformers.BertForSequenceClassification(config).eval()


def set_logits(
    model: transformers.BertForSequenceClassification, bias: Sequence[float]
) -> transformers.BertForSequenceClassification:
    """Zero the classifier weights and set its bias: the logits are ``bias`` for any input."""
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(list(bias)))
    return model


def build_tiny_nli_classifier(
    path: Path,
    *,
    entail_bias: float | None = None,
    bias: Sequence[float] | None = None,
    id2label: Mapping[int, str] = NLI_LABELS,
) -> Path:
    """Save a tiny BERT NLI cross-encoder (model + tokenizer) into ``path`` and return it.

    ``HFClassifierNLI(path)`` loads it; with the default labels its entailment index is 1.

    Args:
        path: Target directory (created if needed).
        entail_bias: Fix the logits to ``[0, entail_bias, 0]`` for every input (default labels
            only): ``> 0`` always entails with P(entail) = e^b / (e^b + 2) (b = 10: 0.99991),
            ``< 0`` never does (argmax is class 0).
        bias: Fix the logits to this vector (one value per label) for every input.
        id2label: Class labels by index.

    Without ``entail_bias`` and ``bias`` the classifier is random (seed 0), so different inputs
    get different scores.
    """
    if entail_bias is not None:
        if bias is not None:
            raise ValueError("give entail_bias or bias, not both")
        if dict(id2label) != NLI_LABELS:
            raise ValueError("entail_bias needs the default labels; use bias=")
        bias = [0.0, entail_bias, 0.0]
    model = tiny_bert_classifier(id2label)
    if bias is not None:
        set_logits(model, bias)
    return save_model(model, nli_tokenizer(), path)


#: The tiny causal LM's words (after the specials <pad> <unk> <s> </s>, ids 0-3).
LM_WORDS = [
    "[",
    "]",
    ":",
    ".",
    "system",
    "user",
    "assistant",
    "hello",
    "be",
    "brief",
    "where",
    "is",
    "paris",
    "france",
    "capital",
    "of",
    "the",
    "city",
]
LM_VOCAB = {t: i for i, t in enumerate(["<pad>", "<unk>", "<s>", "</s>", *LM_WORDS])}
#: The tiny causal LM's chat template: ``[role] content`` lines, then ``[assistant]``.
TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}"
)
#: The word the tiny causal LM always prefers (greedy decoding repeats it).
LM_FAVOURITE = "paris"
#: Its logit; every other token's logit is 0.
LM_FAVOURITE_LOGIT = 2.0


def _lm_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """The lower-casing word-level tokenizer of the tiny causal LMs (no specials when encoding)."""
    return word_level_tokenizer(
        LM_VOCAB,
        unk_token="<unk>",
        single="$A",
        template_tokens=[],
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
    )


def _tiny_llama_config(**extra: Any) -> transformers.LlamaConfig:
    """The 2-layer, 32-wide Llama configuration of the tiny causal LMs (LM_VOCAB tokens)."""
    return transformers.LlamaConfig(
        vocab_size=len(LM_VOCAB),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        pad_token_id=LM_VOCAB["<pad>"],
        bos_token_id=LM_VOCAB["<s>"],
        eos_token_id=LM_VOCAB["</s>"],
        **extra,
    )


def build_tiny_causal_lm(path: Path, *, chat_template: str | None = TINY_CHAT_TEMPLATE) -> Path:
    """Save a tiny Llama causal LM (2 layers, 32 wide) and its tokenizer into ``path``.

    The weights are random (seed 0) except that the output is fixed: every embedding has
    component 0 equal to 100, so the final hidden state is (almost exactly) ``sqrt(32) * e_0``,
    and the untied LM head is zero except ``LM_FAVOURITE``'s weight on component 0. So for any
    input the logits are ``LM_FAVOURITE_LOGIT`` (2.0) for ``"paris"`` and 0 for every other token
    (``V`` = 22 tokens): greedy decoding emits ``"paris"`` forever (never ``</s>``), and
    sampling at temperature 1 picks it with p = e^2 / (e^2 + 21) = 0.26, any other token with
    p = 1 / (e^2 + 21) = 0.035; top_p <= 0.26 keeps only ``"paris"``.

    The tokenizer is the lower-casing WordLevel tokenizer of :func:`word_level_tokenizer` (no
    specials added when encoding); ``chat_template=None`` saves it without a chat template.
    """
    torch.manual_seed(0)
    config = _tiny_llama_config()
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 100.0
        model.model.norm.weight.fill_(1.0)
        model.lm_head.weight.zero_()
        model.lm_head.weight[LM_VOCAB[LM_FAVOURITE], 0] = LM_FAVOURITE_LOGIT / 32**0.5
    tokenizer = _lm_tokenizer()
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return save_model(model, tokenizer, path)


def build_random_causal_lm(path: Path, *, seed: int = 0) -> Path:
    """Save a tiny random Llama causal LM (2 layers, 32 wide) with the tokenizer of
    :func:`build_tiny_causal_lm` into ``path``.

    Unlike :func:`build_tiny_causal_lm`, its logits depend on the input and on positions (random
    weights, seeded), so it shows whether padding, attention masks or position ids leak into
    scores. No chat template.
    """
    torch.manual_seed(seed)
    config = _tiny_llama_config(initializer_range=0.5)
    model = transformers.LlamaForCausalLM(config).eval()
    tokenizer = _lm_tokenizer()
    return save_model(model, tokenizer, path)
