"""A cascade: a cheap first stage accepts what it can, a model decides the rest.

The usual pairing is the lexical triple matcher then a neural NLI model
(``nli_model("lexical+hf/<path>")``): a sentence that names the cited value is accepted without
running the model, every other pair goes to the model in one batched call. Each verdict keeps the
``source`` of the stage that decided it, so a run can report how many pairs each stage settled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citegraph.errors import ModelError
from citegraph.models._nli_protocol import NLIModel, NLIPair, NLIVerdict
from citegraph.models.nli._lexical import LexicalNLI


class CascadeNLI:
    """First stage accepts; pairs it does not accept go to the second stage in one batch.

    Only acceptances of the first stage are final: its rejections are re-decided by the second
    stage. With the lexical matcher first this means "entailed iff the value is named in the
    sentence, or else the model says so".

    Args:
        model: The second stage (e.g. an :class:`~citegraph.models.HFClassifierNLI`).
        first: The first stage; the lexical triple matcher by default.
    """

    def __init__(self, model: NLIModel, *, first: NLIModel | None = None) -> None:
        self._first: NLIModel = first if first is not None else LexicalNLI()
        self._model = model

    @property
    def name(self) -> str:
        """``"<first>+<model>"``, e.g. ``"lexical+hf:cross-encoder/nli-deberta-v3-base"``."""
        return f"{self._first.name}+{self._model.name}"

    @property
    def placement(self) -> Any:
        """Where the model stage runs (its :class:`~citegraph.models.Placement`), if it has one."""
        return getattr(self._model, "placement", None)

    async def aclose(self) -> None:
        """Close the stages that hold a model."""
        for stage in (self._first, self._model):
            close = getattr(stage, "aclose", None)
            if close is not None:
                await close()

    @property
    def stages(self) -> tuple[NLIModel, NLIModel]:
        """The first stage and the model."""
        return (self._first, self._model)

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """One verdict per pair, in order; each verdict's ``source`` names its deciding stage."""
        pairs = list(pairs)
        if not pairs:
            return []
        first = await self._first.entails(pairs)
        _check_count(self._first.name, first, len(pairs))
        rest = [i for i, verdict in enumerate(first) if not verdict.entailed]
        if not rest:
            return first
        second = await self._model.entails([pairs[i] for i in rest])
        _check_count(self._model.name, second, len(rest))
        verdicts = list(first)
        for i, verdict in zip(rest, second, strict=True):
            verdicts[i] = verdict
        return verdicts


def _check_count(name: str, verdicts: Sequence[NLIVerdict], expected: int) -> None:
    if len(verdicts) != expected:
        raise ModelError(
            f"NLI model {name!r} returned {len(verdicts)} verdicts for {expected} pairs"
        )
