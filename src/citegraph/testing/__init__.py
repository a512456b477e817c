"""Test doubles for citegraph users' own tests (and citegraph's): nothing here loads weights or
reaches a network.

- :class:`FakeOpenAIServer`: a real local HTTP server speaking the OpenAI chat-completions API,
  scripted with :class:`FakeReply` (text, status codes, ``Retry-After``, delays); every request it
  received is kept as a :class:`ReceivedRequest`. Point ``chat_model("openai/x", base_url=...)``
  or any OpenAI client at ``server.base_url``.
- :class:`MockChat`: an in-process chat model with scripted outputs (a list or a callable).
- :class:`FixedScores`, :class:`FixedPerplexity`: relevance / paragraph and LM scorers that
  return given numbers (released outputs of the papers' code, hand-worked values);
  :func:`metric_records` wraps metric values as ``conner score`` records for ``score_summary``.
- :func:`assert_metrics`, :class:`RunMetrics`: assert that a run's metrics reach thresholds (the
  gate of ``--fail-under``); the pytest plugin :mod:`citegraph.testing.pytest_plugin`
  (registered as a ``pytest11`` entry point) gives them as the ``citegraph_run`` fixture.
- Tiny seeded Hugging Face models saved to a folder (need torch, transformers and tokenizers,
  imported only when a model is built): :func:`build_tiny_nli_classifier` (NLI, three-way NLI,
  reranker), :func:`build_tiny_encoder` (embeddings), :func:`tiny_t5` with :func:`t5_tokenizer`
  (TRUE-style NLI), and the pieces they are made of.
"""

from citegraph.models import MockChat
from citegraph.testing._fake_server import FakeOpenAIServer, FakeReply, ReceivedRequest
from citegraph.testing._fixed_scores import FixedPerplexity, FixedScores, metric_records
from citegraph.testing._metrics import RunMetrics, assert_metrics
from citegraph.testing._tiny_hf import (
    NLI_LABELS,
    NLI_VOCAB,
    NLI_WORDS,
    T5_VOCAB,
    build_tiny_encoder,
    build_tiny_nli_classifier,
    nli_tokenizer,
    save_model,
    set_logits,
    t5_tokenizer,
    tiny_bert_classifier,
    tiny_t5,
    word_level_tokenizer,
)

__all__ = [
    "NLI_LABELS",
    "NLI_VOCAB",
    "NLI_WORDS",
    "T5_VOCAB",
    "FakeOpenAIServer",
    "FakeReply",
    "FixedPerplexity",
    "FixedScores",
    "MockChat",
    "ReceivedRequest",
    "RunMetrics",
    "assert_metrics",
    "build_tiny_encoder",
    "build_tiny_nli_classifier",
    "metric_records",
    "nli_tokenizer",
    "save_model",
    "set_logits",
    "t5_tokenizer",
    "tiny_bert_classifier",
    "tiny_t5",
    "word_level_tokenizer",
]
