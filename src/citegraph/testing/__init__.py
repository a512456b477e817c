"""Test doubles for citegraph users' own tests (and citegraph's): nothing here loads weights or
reaches a network.

- :class:`FakeOpenAIServer`: a real local HTTP server speaking the OpenAI chat-completions API,
  scripted with :class:`FakeReply` (text, status codes, ``Retry-After``, delays); every request it
  received is kept as a :class:`ReceivedRequest`. Point ``chat_model("openai/x", base_url=...)``
  or any OpenAI client at ``server.base_url``.
- :class:`MockChat`: an in-process chat model with scripted outputs (a list or a callable).
"""

from citegraph.models import MockChat
from citegraph.testing._fake_server import FakeOpenAIServer, FakeReply, ReceivedRequest

__all__ = ["FakeOpenAIServer", "FakeReply", "MockChat", "ReceivedRequest"]
