"""Objects that close themselves at the end of a ``with`` / ``async with`` block.

A class that owns something to release (connections, files, a cache) writes only its
``close`` (or ``aclose``) and inherits the context-manager methods from :class:`Closing`
(or :class:`AsyncClosing`): entering returns the object itself, leaving closes it, whether
the block ended normally or by an exception (which is not suppressed).

Example:
    >>> class Pool(Closing):
    ...     closed = False
    ...     def close(self) -> None:
    ...         self.closed = True
    >>> with Pool() as pool:
    ...     pass
    >>> pool.closed
    True
"""

from __future__ import annotations

from typing import Self

__all__ = ["AsyncClosing", "Closing"]


class Closing:
    """``with obj:`` gives ``obj`` and calls :meth:`close` when the block ends."""

    def close(self) -> None:
        """Release what the object holds (subclasses implement it)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClosing:
    """``async with obj:`` gives ``obj`` and awaits :meth:`aclose` when the block ends."""

    async def aclose(self) -> None:
        """Release what the object holds (subclasses implement it)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
