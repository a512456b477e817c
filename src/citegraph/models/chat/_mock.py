"""A scripted chat model for tests (yours and citegraph's): no network, no weights.

Example:
    >>> import asyncio
    >>> from citegraph.models.chat._types import ChatRequest
    >>> model = MockChat(["Paris is the capital [1].", "I don't know [NA]."])
    >>> ask = ChatRequest.of([{"role": "user", "content": "Capital of France?"}])
    >>> asyncio.run(model.generate(ask)).text
    'Paris is the capital [1].'
    >>> asyncio.run(model.generate(ask)).text
    "I don't know [NA]."
    >>> len(model.requests)
    2
    >>> echo = MockChat(lambda request: request.messages[-1].content.upper())
    >>> asyncio.run(echo.generate(ask)).text
    'CAPITAL OF FRANCE?'
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from citegraph.errors import ModelError, ServerError
from citegraph.models.chat._types import ChatRequest, Generation, Usage
from citegraph.models.chat._usage import report_usage

__all__ = ["DEFAULT_MOCK_OUTPUT", "MockChat"]

DEFAULT_MOCK_OUTPUT = "This is a mock answer."

MockOutputs = Sequence[str] | Callable[[ChatRequest], str] | str | None


class MockChat:
    """A :class:`~citegraph.models.ChatModel` that answers from a script.

    Args:
        outputs: A list of strings returned in order (running out raises :class:`ModelError`;
            they do not cycle), a callable ``(ChatRequest) -> str``, one fixed string for every
            request, or ``None`` for :data:`DEFAULT_MOCK_OUTPUT`.
        name: ``mock/<name>``; the part after ``mock/`` is reported as ``Generation.model``.
        fail_times: The first ``fail_times`` calls raise ``error`` instead of answering (to test
            retry and error handling upstream). They are recorded in :attr:`requests` too.
        error: The exception raised by those failing calls (default: a ``ServerError`` 503).
        finish_reason: Reported with every generation.

    Attributes:
        requests: Every request received, in order (failing ones included).
        calls: Number of :meth:`generate` calls.

    Usage counts are whitespace-separated words of the prompt and of the output.
    """

    endpoint = "mock"
    #: A request's grammar is applied by decoding the script under it (see ``decode_under``).
    grammar_mode = "logits"

    def __init__(
        self,
        outputs: MockOutputs = None,
        *,
        name: str = "mock/mock",
        fail_times: int = 0,
        error: Exception | None = None,
        finish_reason: str = "stop",
    ) -> None:
        if isinstance(outputs, str) or outputs is None:
            fixed = DEFAULT_MOCK_OUTPUT if outputs is None else outputs
            self._script: Callable[[ChatRequest], str] = lambda _request: fixed
            self._outputs: list[str] | None = None
        elif callable(outputs):
            self._script = outputs
            self._outputs = None
        else:
            self._outputs = list(outputs)
            if not all(isinstance(o, str) for o in self._outputs):
                raise TypeError("MockChat outputs must all be strings")
            self._script = self._next_output
        self.name = name if name.startswith("mock/") else f"mock/{name}"
        self.fail_times = fail_times
        self.error = error
        self.finish_reason = finish_reason
        self.requests: list[ChatRequest] = []
        self.calls = 0
        self._served = 0

    def _next_output(self, request: ChatRequest) -> str:
        assert self._outputs is not None
        if self._served >= len(self._outputs):
            raise ModelError(
                f"MockChat {self.name!r} ran out of scripted outputs: {len(self._outputs)} "
                f"given, this is request {self._served + 1}; pass more outputs or a callable"
            )
        self._served += 1
        return self._outputs[self._served - 1]

    async def generate(self, request: ChatRequest) -> Generation:
        """The next scripted output for ``request`` (see the class docstring).

        Raises:
            ModelError: The list of outputs is used up.
            Exception: ``error`` during the first ``fail_times`` calls.
        """
        self.calls += 1
        call = self.calls  # this call's number (others may arrive during the await below)
        self.requests.append(request)
        await asyncio.sleep(0)  # a real suspension point, as a server call would have
        if call <= self.fail_times:
            raise self.error or ServerError(
                f"MockChat {self.name!r}: scripted failure {call} of {self.fail_times}",
                status=503,
                url=self.endpoint,
            )
        text = self._script(request)
        if not isinstance(text, str):
            raise ModelError(f"MockChat script returned {type(text).__name__}, not str")
        finish, raw = self.finish_reason, None
        if request.grammar is not None:
            from citegraph.models.grammar import decode_under

            text, ended = decode_under(text, request.grammar, 4 * len(text) + 1024)
            finish = finish if ended else "length"
            raw = {"grammar": request.grammar.name, "grammar_mode": "logits"}
        prompt = " ".join(m.content for m in request.messages)
        generation = Generation(
            text=text,
            model=self.name.removeprefix("mock/"),
            finish_reason=finish,
            usage=Usage(prompt_tokens=len(prompt.split()), completion_tokens=len(text.split())),
            raw=raw,
        )
        report_usage(self, generation)
        return generation

    async def aclose(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"MockChat(name={self.name!r}, calls={self.calls})"
