"""Paper vs reference mode, decided in one place: :class:`ConnerRules`.

``--mode paper`` (the default) computes every metric as the paper's equations define it;
``--mode reference`` does what CONNER's released scripts do (see ``docs/modes.md``). A run picks
its rules once, ``ConnerRules.for_mode(config.mode)``, and hands the object to every metric; no
other code compares mode names. Each field is one difference between the two modes.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner.metrics._factuality import FactualityConfig
from citegraph.conner.metrics._validity import OpenValidityConfig, SpanValidityConfig
from citegraph.errors import ConfigError

__all__ = ["REFERENCE_PPL_CAP", "REFERENCE_TRUNCATE_WORDS", "ConnerRules", "Mode"]

Mode = Literal["paper", "reference"]
#: The PPL cap of CONNER's ``ppl.py`` (the default in reference mode).
REFERENCE_PPL_CAP = 200.0
#: Reference mode keeps this many space-separated words of a gold knowledge text (helpfulness).
REFERENCE_TRUNCATE_WORDS = 500

#: How each metric's per-item value is computed, per mode (``metrics.json`` ``how``).
_HOW: dict[str, dict[Mode, str]] = {
    "factuality": {
        "paper": "Eq. 1: NLI P(entailment), max over evidence, min over sentences",
        "reference": "eval_exp.py: max over <=32 evidence, max over sentences by label",
    },
    "relevance": {
        "paper": "Eq. 2: query-knowledge relevance score",
        "reference": "Eq. 2: query-knowledge relevance score",
    },
    "coherence_sent": {
        "paper": "Eq. 3: mean over sentences of 1/PPL",
        "reference": "ppl.py: 1/mean PPL with each PPL capped at 200",
    },
    "coherence_para": {
        "paper": "Eq. 4: discourse coherence score, min-max normalised over the run",
        "reference": "discourse-coherence.py: the raw score",
    },
    "informativeness": {
        "paper": "Eq. 5: 1 - exp(mean ln P(k_t | k_<t, q)), every knowledge token",
        "reference": "info.py: as Eq. 5 without the first knowledge token",
    },
    "helpfulness": {
        "paper": "Eq. 6: max(0, 1 - L(q,k,a) / mean L(q,k-,a)), u random knowledge",
        "reference": "helpfulness.py: Eq. 6, gold knowledge cut to 500 words",
    },
    "validity": {
        "paper": "Eqs. 7-8: NLI P(entailment) of the answer generated with the knowledge",
        "reference": "nq_validity.py / wow_validity.py: question?<TAB>answer, <=32 pairs",
    },
}


class ConnerRules(BaseModel):
    """What the paper's equations and the authors' scripts do differently, one field each."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = Field(description="The mode these rules are (recorded in every value).")
    factuality: FactualityConfig = Field(
        description="Eq. 1 aggregation: min over sentences (paper) or max by label over at "
        "most 32 pairs (eval_exp.py)."
    )
    ppl_cap: float = Field(description="Sentence perplexity cap (inf: none; ppl.py: 200).", gt=0)
    ppl_inverse_of_mean: bool = Field(
        description="Sentence coherence: 1 / mean PPL, spoilt by any unscored sentence "
        "(ppl.py), instead of the mean of 1 / PPL (Eq. 3)."
    )
    paragraph_minmax: bool = Field(
        description="Report paragraph coherence min-max normalised over the run (paper) or raw."
    )
    info_first_token: Literal["keep", "drop"] = Field(
        description="Informativeness scores every knowledge token (Eq. 5) or drops the first "
        "(info.py)."
    )
    gold_max_words: int | None = Field(
        description="Helpfulness cuts gold knowledge to this many words (helpfulness.py: 500)."
    )
    span_validity: SpanValidityConfig = Field(description="How NQ question and answer join.")
    open_validity: OpenValidityConfig = Field(description="WoW validity evidence cut.")

    @classmethod
    def for_mode(cls, mode: Mode | ConnerRules) -> ConnerRules:
        """The rules of ``"paper"`` or ``"reference"`` (rules given are returned as they are).

        Raises:
            ConfigError: Any other mode.
        """
        if isinstance(mode, ConnerRules):
            return mode
        if mode == "paper":
            return _PAPER
        if mode == "reference":
            return _REFERENCE
        raise ConfigError(f"mode must be 'paper' or 'reference', got {mode!r}")

    def overriding(
        self, *, outer: Literal["min", "mean", "max"] | None = None, ppl_cap: float | None = None
    ) -> ConnerRules:
        """These rules with a run's explicit ``--outer`` and ``--ppl-cap`` (None: keep)."""
        update: dict[str, object] = {}
        if outer is not None:
            update["factuality"] = self.factuality.model_copy(update={"outer": outer})
        if ppl_cap is not None:
            update["ppl_cap"] = float(ppl_cap)
        return self.model_copy(update=update) if update else self

    def how(self, metric: str) -> str:
        """How ``metric``'s per-item value is computed under these rules."""
        return _HOW[metric][self.mode]


_PAPER = ConnerRules(
    mode="paper",
    factuality=FactualityConfig(),
    ppl_cap=math.inf,
    ppl_inverse_of_mean=False,
    paragraph_minmax=True,
    info_first_token="keep",
    gold_max_words=None,
    span_validity=SpanValidityConfig(),
    open_validity=OpenValidityConfig(),
)
_REFERENCE = ConnerRules(
    mode="reference",
    factuality=FactualityConfig.reference(),
    ppl_cap=REFERENCE_PPL_CAP,
    ppl_inverse_of_mean=True,
    paragraph_minmax=False,
    info_first_token="drop",
    gold_max_words=REFERENCE_TRUNCATE_WORDS,
    span_validity=SpanValidityConfig.reference(),
    open_validity=OpenValidityConfig.reference(),
)
