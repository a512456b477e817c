"""KalmaRules: paper vs reference decided once, with the parser as its own choice."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma import REFERENCE_CAP, KalmaRules, KalmaRunConfig, KalmaScoreConfig


def test_for_mode_gives_the_two_rule_sets() -> None:
    paper, reference = KalmaRules.for_mode("paper"), KalmaRules.for_mode("reference")
    assert paper.citations_need_correctness and not reference.citations_need_correctness
    assert (paper.alignment_cap, reference.alignment_cap) == (None, REFERENCE_CAP)
    assert not paper.reference_parser and reference.reference_parser
    assert KalmaRules.for_mode("paper") is paper  # chosen, not rebuilt


def test_parser_is_chosen_apart_from_the_mode() -> None:
    rules = KalmaScoreConfig(mode="reference", parser="paper").rules
    assert rules.mode == "reference" and not rules.reference_parser
    assert rules.alignment_substring_shortcut
    assert KalmaRunConfig(mode="reference").rules == KalmaRules.for_mode("reference")


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="'paper' or 'reference'"):
        KalmaRules.for_mode("authors")
