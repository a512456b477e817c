"""The naming rule of the Python API, and the helper that keeps old names working.

Every coroutine function of the public API is named ``..._async`` and has a blocking twin with
the plain name (``score_answers_async`` / ``score_answers``). Entry points that were always named
so get their twin from :func:`citegraph.runs.blocking`. Functions that used to be coroutine
functions under the plain name (``score_alignment``, ``score_na``, ``ask``, the CONNER metrics,
``run_task`` ...) get theirs from :func:`sync_twin`: outside an event loop it runs the coroutine
to completion like ``blocking``; inside a running loop (where old code wrote
``await score_alignment(...)``) it still returns the awaitable, with a ``DeprecationWarning``
naming the ``_async`` form. That fallback is kept for one release.
"""

from __future__ import annotations

import asyncio
import functools
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def sync_twin(entry: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The plain-named blocking twin of the coroutine function ``entry`` (named ``x_async``),
    for a name that used to be the coroutine function itself.

    Called outside an event loop it runs ``entry`` to completion and returns its result. Called
    inside a running loop it returns ``entry``'s coroutine, as the old async function did, and
    warns ``DeprecationWarning: x is now synchronous; await x_async instead`` (deprecated: the
    fallback goes in the next release, after which it raises like :func:`blocking`).
    """
    plain = entry.__name__.removesuffix("_async")
    message = f"{plain} is now synchronous; await {entry.__name__} instead"

    @functools.wraps(entry)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        coroutine = entry(*args, **kwargs)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coroutine)
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return coroutine  # type: ignore[return-value]  # the deprecated awaitable form

    run.__name__ = run.__qualname__ = plain
    run.__doc__ = (
        f"Blocking form of :func:`{entry.__name__}` (same arguments). Inside a running event "
        f"loop it still returns the awaitable, with a DeprecationWarning (for one release)."
    )
    return run
