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
"""

from citegraph.models import MockChat
from citegraph.testing._fake_server import FakeOpenAIServer, FakeReply, ReceivedRequest
from citegraph.testing._fixed_scores import FixedPerplexity, FixedScores, metric_records

__all__ = [
    "FakeOpenAIServer",
    "FakeReply",
    "FixedPerplexity",
    "FixedScores",
    "MockChat",
    "ReceivedRequest",
    "metric_records",
]
