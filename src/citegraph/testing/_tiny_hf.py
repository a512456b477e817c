"""Tiny Hugging Face encoder models for tests and benchmarks, built offline and saved to a folder.

They need torch, transformers and tokenizers (the ``nli`` extra), imported when a model is
built, so :mod:`citegraph.testing` imports without them. Everything is seeded: a saved model is
the same on every run. The vocabularies are a few dozen words; any other word is ``[UNK]``, so
real text still gives inputs of realistic lengths (one token per word or punctuation mark).

- :func:`word_level_tokenizer`: a lower-casing, whitespace-splitting WordLevel tokenizer.
- :func:`save_model`: a model and its tokenizer written with ``save_pretrained``.
- :func:`build_tiny_nli_classifier`: a 1-layer BERT NLI cross-encoder (labels
  ``contradiction / entailment / neutral`` by default), random or with hand-set logits; it
  serves as the NLI, three-way NLI, reranker and text-scorer model.
- :func:`build_tiny_encoder`: the same BERT without a head, for sentence embeddings.
- :func:`tiny_t5`, :func:`t5_tokenizer`: a 1-layer T5 and the tokenizer of the TRUE-style
  NLI backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import transformers

#: The 3-way labels of the tiny classifier; entailment is index 1 (not 0, on purpose).
NLI_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}
#: The words of the test sentences both tiny vocabularies hold ("he was born in newark").
_SENTENCE_WORDS = ["he", "she", "was", "born", "in", "newark", "paris", "died"]
#: The tiny classifier's words (after the specials [PAD] [UNK] [CLS] [SEP], ids 0-3).
NLI_WORDS = [
    *_SENTENCE_WORDS,
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
#: The tiny T5's words (after the specials <pad> </s> <unk>, ids 0-2: T5's pad 0, eos 1).
T5_WORDS = [
    "premise",
    "hypothesis",
    ":",
    ".",
    "1",
    "0",
    *_SENTENCE_WORDS,
    "place",
    "of",
    "birth",
    "death",
]
T5_VOCAB = {t: i for i, t in enumerate(["<pad>", "</s>", "<unk>", *T5_WORDS])}


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
    import transformers
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(vocab=dict(vocab), unk_token=unk_token))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, vocab[t]) for t in template_tokens]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token=unk_token, **named_tokens
    )


def save_model(model: Any, tokenizer: Any, path: Path) -> Path:
    """Write a transformers ``model`` and ``tokenizer`` into ``path`` (created if needed)."""
    import transformers

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


def _tiny_bert_config(id2label: Mapping[int, str]) -> transformers.BertConfig:
    """1 layer, 16 wide, 2 heads, at most 64 positions, over :data:`NLI_VOCAB`."""
    import transformers

    return transformers.BertConfig(
        vocab_size=len(NLI_VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        id2label=dict(id2label),
        label2id={v: k for k, v in id2label.items()},
    )


def tiny_bert_classifier(
    id2label: Mapping[int, str] = NLI_LABELS,
) -> transformers.BertForSequenceClassification:
    """A random (seed 0) 1-layer BERT classifier, 16 wide, at most 64 positions."""
    import torch
    import transformers

    torch.manual_seed(0)
    return transformers.BertForSequenceClassification(_tiny_bert_config(id2label)).eval()


def set_logits(model: Any, bias: Sequence[float]) -> Any:
    """Zero a BERT classifier's head weights and set its bias: the logits are ``bias`` for any
    input. Returns ``model``."""
    import torch

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


def build_tiny_encoder(path: Path) -> Path:
    """Save a random (seed 0) 1-layer BERT encoder without a head (16 wide, 64 positions) and
    the tiny classifier's tokenizer into ``path``, for sentence embeddings."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = _tiny_bert_config(NLI_LABELS)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    return save_model(model, nli_tokenizer(), path)


def t5_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """The tiny T5's tokenizer over :data:`T5_VOCAB`: ``text </s>``, padded with ``<pad>``."""
    return word_level_tokenizer(
        T5_VOCAB,
        unk_token="<unk>",
        single="$A </s>",
        template_tokens=["</s>"],
        pad_token="<pad>",
        eos_token="</s>",
    )


def tiny_t5(d_model: int = 24) -> transformers.T5ForConditionalGeneration:
    """A random (seed 0) T5 over :data:`T5_VOCAB`: 1 encoder and 1 decoder layer, 2 heads,
    ``d_model`` wide, tied input and output embeddings."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.T5Config(
        vocab_size=len(T5_VOCAB),
        d_model=d_model,
        d_kv=4,
        d_ff=16,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
    )
    config.decoder_start_token_id = 0  # the pad id, as T5's
    return transformers.T5ForConditionalGeneration(config).eval()
