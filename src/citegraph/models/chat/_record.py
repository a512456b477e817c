"""What a run's record keeps of a :class:`Generation`: its ``generation`` dict.

Every task that records the facts of a chat reply (``kalma run``'s answers, ``caqa judge``'s LLM
judgements, ``conner generate``'s knowledge) records them with :func:`generation_record`, so they
read alike in every run: the model, ``finish_reason``, ``usage``, ``cached``, ``attempts``,
``latency_s`` and, for a local model's reply, ``batch_size``.
"""

from __future__ import annotations

from typing import Any

from citegraph.models.chat._types import Generation

__all__ = ["BATCH_SIZE", "generation_record"]

#: The key of ``Generation.raw`` (and of the record's ``generation``) under which a local chat
#: model (``hf/...``, ``local``) reports how many prompts shared the reply's ``generate`` call.
BATCH_SIZE = "batch_size"


def generation_record(generation: Generation) -> dict[str, Any]:
    """The record's ``generation``: ``generation`` without its text and raw extras, plus
    ``batch_size`` where the reply came from a ``generate`` call that reported it.

    ``batch_size`` is how many prompts shared the reply's ``generate`` call (1: it was generated
    alone), as a local chat model (``hf/...``, ``local``) reports it. A served or mock model's
    reply has none, and neither has a reply served from the response cache (``cached`` true):
    it shared no call, so the size of the call that first produced it is not recorded (the
    cache drops it, :class:`~citegraph.models.chat.CachedChatModel`; a reply marked cached
    that still carries one is recorded without it too).

    Example:
        >>> fresh = Generation(text="Paris.", model="tiny", raw={"batch_size": 4})
        >>> generation_record(fresh)["batch_size"]
        4
        >>> "batch_size" in generation_record(fresh.model_copy(update={"cached": True}))
        False
    """
    record = generation.model_dump(mode="json", exclude={"text", "raw"})
    batch_size = None if generation.cached else (generation.raw or {}).get(BATCH_SIZE)
    if batch_size is not None:
        record[BATCH_SIZE] = batch_size
    return record
