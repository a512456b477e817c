"""Shared metric arithmetic."""

__all__: list[str] = []
