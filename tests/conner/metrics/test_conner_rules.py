"""``ConnerRules``: paper vs reference mode decided once, and the metrics that take it."""

from __future__ import annotations

import math

import pytest

from citegraph.conner import ConnerScoreConfig
from citegraph.conner.metrics import (
    REFERENCE_PPL_CAP,
    REFERENCE_TRUNCATE_WORDS,
    ConnerRules,
    FactualityConfig,
    OpenValidityConfig,
    SpanValidityConfig,
    sentence_coherence_value,
)
from citegraph.errors import ConfigError


def test_the_two_modes() -> None:
    paper, reference = ConnerRules.for_mode("paper"), ConnerRules.for_mode("reference")
    assert paper.factuality == FactualityConfig()
    assert reference.factuality == FactualityConfig.reference()
    assert (paper.ppl_cap, reference.ppl_cap) == (math.inf, REFERENCE_PPL_CAP)
    assert (paper.ppl_inverse_of_mean, reference.ppl_inverse_of_mean) == (False, True)
    assert (paper.paragraph_minmax, reference.paragraph_minmax) == (True, False)
    assert (paper.info_first_token, reference.info_first_token) == ("keep", "drop")
    assert (paper.gold_max_words, reference.gold_max_words) == (None, REFERENCE_TRUNCATE_WORDS)
    assert reference.span_validity == SpanValidityConfig.reference()
    assert reference.open_validity == OpenValidityConfig.reference()
    assert paper.how("coherence_para").startswith("Eq. 4")
    assert reference.how("coherence_para").startswith("discourse-coherence.py")
    assert ConnerRules.for_mode(reference) is reference
    with pytest.raises(ConfigError, match="'paper' or 'reference'"):
        ConnerRules.for_mode("neither")  # type: ignore[arg-type]


def test_a_score_config_chooses_its_rules_with_its_overrides() -> None:
    rules = ConnerScoreConfig(knowledge="gold", mode="reference", outer="mean", ppl_cap=100).rules()
    assert rules.mode == "reference"
    assert (rules.factuality.outer, rules.factuality.outer_by) == ("mean", "label")
    assert rules.factuality.max_pairs == 32 and rules.ppl_cap == 100.0
    assert ConnerScoreConfig(knowledge="gold").rules() == ConnerRules.for_mode("paper")


def test_metrics_take_a_mode_name_or_the_rules() -> None:
    ppls = [2.0, None, 400.0]
    reference = ConnerRules.for_mode("reference")
    assert sentence_coherence_value(ppls, mode=reference) is None  # an unscored sentence
    assert sentence_coherence_value([2.0, 400.0], mode=reference) == pytest.approx(1 / 101)
    assert sentence_coherence_value([2.0, 400.0], mode="reference") == pytest.approx(1 / 101)
    capped = reference.overriding(ppl_cap=4.0)
    assert sentence_coherence_value([2.0, 400.0], mode=capped) == pytest.approx(1 / 3)
    assert sentence_coherence_value(ppls, mode="paper") == pytest.approx((0.5 + 1 / 400) / 2)
    with pytest.raises(ConfigError, match="ppl_cap must be >= 1"):
        sentence_coherence_value(ppls, mode=reference.overriding(ppl_cap=0.5))
