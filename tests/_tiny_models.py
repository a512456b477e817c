"""Tiny causal LMs for tests, built offline and saved to a directory (the tiny encoders, NLI
classifier and T5 are in :mod:`citegraph.testing`).

Import this module only after ``pytest.importorskip("torch")`` / ``("transformers")`` /
``("tokenizers")``: it needs all three. Everything is seeded, so a saved model is the same on
every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import transformers

from citegraph.caqa import CATEGORIES, CaqaSample
from citegraph.testing import save_model, word_level_tokenizer

#: One CAQA sample per category, citations of growing length (one to four words apart): what
#: the classifier judge and a fine-tuning step run on in the device tests.
CAQA_SAMPLES = [
    CaqaSample(
        id=f"{label}-{i}",
        question="where was he born",
        answer="he was born in newark .",
        citation=f"{'stephen crane ' * i}{word} .",
        label=label,
        source="test",
    )
    for i, (label, word) in enumerate(
        zip(CATEGORIES, ["paris", "novel", "died", "1871"], strict=True)
    )
]

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


def build_random_causal_lm(path: Path, *, seed: int = 0, initializer_range: float = 0.5) -> Path:
    """Save a tiny random Llama causal LM (2 layers, 32 wide) with the tokenizer of
    :func:`build_tiny_causal_lm` into ``path``.

    Unlike :func:`build_tiny_causal_lm`, its logits depend on the input and on positions (random
    weights, seeded), so it shows whether padding, attention masks or position ids leak into
    scores. No chat template. ``initializer_range`` is the weights' standard deviation: 0.5 (the
    default) makes large logits that expose any leak; 0.02 (Llama's own) gives logits of a
    trained model's scale.
    """
    torch.manual_seed(seed)
    config = _tiny_llama_config(initializer_range=initializer_range)
    model = transformers.LlamaForCausalLM(config).eval()
    tokenizer = _lm_tokenizer()
    return save_model(model, tokenizer, path)


#: The chat template of the byte-level LMs: the messages' contents, one a line.
BYTE_TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"


def build_byte_lm(
    path: Path,
    *,
    layers: int = 2,
    width: int = 32,
    heads: int = 4,
    kv_heads: int = 2,
    max_positions: int = 1024,
    bracket_bias: float | None = 0.6,
) -> Path:
    """A random Llama over bytes (256 byte tokens and </s> = 256, a byte-level BPE without
    merges), saved with its tokenizer under ``path``. With ``bracket_bias``, '[' is favoured
    (0.6: about 5x as likely as another byte), so a model under a citation grammar cites often."""
    import tokenizers

    alphabet = tokenizers.pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    tok.add_special_tokens(["</s>"])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>")
    fast.chat_template = BYTE_TEMPLATE
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=257,
        hidden_size=width,
        intermediate_size=2 * width,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=max_positions,
        eos_token_id=256,
        pad_token_id=256,
        bos_token_id=256,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    if bracket_bias is not None:
        bracket = fast.convert_tokens_to_ids("[")
        with torch.no_grad():
            model.model.embed_tokens.weight[:, 0] = 20.0
            model.lm_head.weight[bracket, 0] += bracket_bias
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path
