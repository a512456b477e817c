"""Paper vs reference mode of ``caqa judge``, decided in one place (``docs/modes.md``).

``--extraction paper`` (default) reads labels robustly and scores as the paper defines (§5.3);
``--extraction reference`` follows the authors' ``inference.py`` and sklearn scoring. The mode is
turned into a :class:`CaqaRules` once, from the run's config, and the rules travel down to the
label reader, the evaluators and the report; each field names one thing the modes do
differently, so no code below asks which mode it is in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError

Mode = Literal["paper", "reference"]
"""``paper`` (citegraph's reading of the paper, the default) or ``reference`` (the authors'
scripts)."""

NotEntailedAs = Literal["unsupported", "irrelevant"]
"""The label an NLI evaluator gives a pair whose premise does not entail the hypothesis."""


class CaqaRules(BaseModel):
    """What differs between the paper and the reference mode; build one with :meth:`for_mode`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = Field(description="The mode these rules implement (recorded in reports).")
    first_match_labels: bool = Field(
        description="Labels are the first regex match in a reply (the authors' extraction), not "
        "citegraph's rules (JSON, label lines, negation, synonyms)."
    )
    unparseable: Literal["wrong", "drop"] = Field(
        description="A prediction that could not be read counts as wrong, or is dropped before "
        "scoring (sklearn drops labels outside its list)."
    )
    macro: Literal["gold", "strict"] = Field(
        description="Macro-F1 is the mean over the gold labels with a never-predicted label's F1 "
        "as 0 (the paper's macro), or follows the authors' NumPy arithmetic: any 0/0 F1 (never "
        "predicted, never gold, or P = R = 0) is NaN and makes the macro NaN (None here)."
    )
    nli_not_entailed: NotEntailedAs | None = Field(
        description="What 'not entailed' means for an NLI evaluator unless set explicitly: None "
        "keeps the evaluator's two-way reading (unsupported); the authors' code reads it as "
        "irrelevant, on the four-way label set."
    )
    name_suffix: str = Field(description="Appended to an LLM judge's name.")

    @classmethod
    def for_mode(cls, mode: Mode | CaqaRules) -> CaqaRules:
        """The rules of ``mode`` (rules given as they are).

        Raises:
            ConfigError: an unknown mode.
        """
        if isinstance(mode, CaqaRules):
            return mode
        if mode not in ("paper", "reference"):
            raise ConfigError(f"unknown extraction mode {mode!r}; use 'paper' or 'reference'")
        reference = mode == "reference"
        return cls(
            mode=mode,
            first_match_labels=reference,
            unparseable="drop" if reference else "wrong",
            macro="strict" if reference else "gold",
            nli_not_entailed="irrelevant" if reference else None,
            name_suffix=":reference-extraction" if reference else "",
        )
