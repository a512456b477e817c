"""citegraph's own warnings (:class:`~citegraph.io.CacheWarning`: a cache file given up, or no
longer written; :class:`~citegraph.io.TextWarning`: an input file's lone surrogates;
:class:`~citegraph.io.ServerWaitWarning`: a server's Retry-After capped;
:class:`~citegraph.models.SpecSpellingWarning`: a model spec in an old spelling) shown to the user
as the CLI's ``warning: ...`` lines, not as Python's ``file:line: Category: message`` text;
other warnings are shown as Python shows them."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from citegraph.cli._console import warn
from citegraph.io import CacheWarning, ServerWaitWarning, TextWarning
from citegraph.models import SpecSpellingWarning

_AS_LINES = (CacheWarning, TextWarning, ServerWaitWarning, SpecSpellingWarning)


@contextmanager
def warnings_as_lines() -> Iterator[None]:
    """While the block runs, every warning of :data:`_AS_LINES` (:class:`CacheWarning`,
    :class:`TextWarning`, :class:`ServerWaitWarning`, :class:`SpecSpellingWarning`) is printed
    once as ``warning: ...``."""
    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(
            category, CacheWarning | TextWarning | ServerWaitWarning | SpecSpellingWarning
        ):
            warn(str(message))
        else:
            shown(message, category, filename, lineno, file, line)

    replaced: Any = show
    warnings.showwarning = replaced
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", CacheWarning)
            warnings.simplefilter("default", TextWarning)
            warnings.simplefilter("default", ServerWaitWarning)
            warnings.simplefilter("default", SpecSpellingWarning)
            yield
    finally:
        warnings.showwarning = shown
