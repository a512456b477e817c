"""The naming rule of the Python API and its one async rule.

Every coroutine function of the public API is named ``..._async`` and has a blocking twin with
the plain name (``score_answers_async`` / ``score_answers``), made by :func:`blocking`. The twin
runs the coroutine to completion outside an event loop; inside a running loop (a notebook, an
async program) it raises ``RuntimeError`` naming the ``_async`` form to await, for every twin
alike.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run an entry point's coroutine to completion: the one blocking wrapper behind
    ``run_kalma``, ``judge_caqa``, ``score_knowledge`` and the others.

    Raises:
        RuntimeError: called from a running event loop (await the ``*_async`` form there).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # none running: run it below, outside this handler (its errors chain to nothing)
    else:
        coroutine.close()
        raise RuntimeError(
            "this blocking entry point was called inside a running event loop (a notebook or "
            "an async program): await its *_async form instead"
        )
    return asyncio.run(coroutine)


def blocking(entry: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking form of an async entry point: the same typed parameters, run to completion
    with :func:`run_sync`. ``run_kalma = blocking(run_kalma_async)`` is named ``run_kalma``.

    Inside a running event loop the twin raises ``RuntimeError`` (await ``entry`` there).
    """

    @functools.wraps(entry)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(entry(*args, **kwargs))

    run.__name__ = run.__qualname__ = entry.__name__.removesuffix("_async")
    run.__doc__ = f"Blocking form of :func:`{entry.__name__}` (same arguments)."
    return run
