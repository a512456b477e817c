"""How much a model server may send: one answer's body, decoded, at most ``max_response_bytes``.

A server that announces ``Content-Length: 100000000000``, streams a chunked body without end or
sends a small gzip body that inflates to gigabytes would otherwise grow the client by its
bandwidth times ``--timeout``. The client's HTTP reader (:func:`~._wire.read_answer`) refuses a
body whose ``Content-Length`` is past the cap before reading any of it, and reads every other body
(gzip and deflate inflated in bounded steps) only up to the first byte past the cap. Error bodies
(a 5xx page read for its message) and redirect bodies are bounded the same way. Past the cap the
read stops with :class:`BodyTooLarge`, which the client turns into a
:class:`~citegraph.errors.ResponseFormatError` (not retried: the same request would get the same
answer).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "MAX_REPLY_CHARS",
    "BodyTooLarge",
    "reply_too_long",
    "size_text",
]

DEFAULT_MAX_RESPONSE_BYTES = 32 * 2**20
"""Most bytes of one answer's body, decoded, unless raised (``--max-response-mb``,
``max_response_bytes=``): 32 MiB, far above a chat completion, a batch of prompt
log-probabilities or a rerank answer."""

_MIB = 2**20


def size_text(n: int) -> str:
    """A byte count as messages show it: ``32 MiB``, ``1.5 MiB``, ``4,096 bytes``."""
    if n >= _MIB:
        return f"{n // _MIB} MiB" if n % _MIB == 0 else f"{n / _MIB:.1f} MiB"
    return f"{n:,} bytes"


class BodyTooLarge(Exception):
    """A response body passed the cap (raised by the HTTP reader).

    Args:
        limit: The cap in bytes.
        status: The response's HTTP status.
        declared: The ``Content-Length`` it announced, when that was past the cap.
    """

    def __init__(self, limit: int, status: int, declared: int | None = None) -> None:
        self.limit = limit
        self.status = status
        self.declared = declared
        super().__init__(self.reason())

    def reason(self) -> str:
        """What happened, for the message of the error the client raises."""
        cap = f"the {size_text(self.limit)} a model server's answer may hold"
        hint = "--max-response-mb (max_response_bytes=) raises the cap"
        if self.declared is not None:
            return (
                f"announced a body of {self.declared} bytes (Content-Length), more than {cap}; "
                f"{hint}"
            )
        return f"sent a body of more than {cap} (the read was stopped there); {hint}"


MAX_REPLY_CHARS = 1_000_000
"""Most characters of a server's chat reply (1 MB of text, as many as an answer of
``answers.jsonl`` may hold): a longer reply is a failed call, never stored whole in a record
(``max_reply_chars=`` on the server client raises it)."""


def reply_too_long(text: str, limit: int = MAX_REPLY_CHARS) -> str | None:
    """Why a reply of ``text`` is too long to keep, or ``None`` when it is not.

    Example:
        >>> reply_too_long("x" * 12, limit=10)
        'the reply holds 12 characters, more than the 10 a reply may hold (max_reply_chars)'
    """
    if len(text) <= limit:
        return None
    return (
        f"the reply holds {len(text):,} characters, more than the {limit:,} a reply may hold "
        "(max_reply_chars)"
    )
