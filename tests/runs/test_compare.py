"""differing_settings: the settings that tell runs apart."""

from __future__ import annotations

from citegraph.runs import differing_settings, setting_text


def test_only_differing_keys_in_first_seen_order() -> None:
    configs = [
        {"mode": "paper", "seed": 0, "split": "specific"},
        {"mode": "reference", "seed": 0, "split": "general"},
    ]
    assert differing_settings(configs) == {
        "mode": ["paper", "reference"],
        "split": ["specific", "general"],
    }


def test_missing_or_none_shows_dash_and_json_compares_canonically() -> None:
    configs = [{"a": {"x": 1, "y": 2}, "b": None}, {"a": {"y": 2, "x": 1}, "c": [1, 2]}]
    assert differing_settings(configs) == {"c": ["-", "[1, 2]"]}


def test_one_config_has_nothing_to_differ() -> None:
    assert differing_settings([{"mode": "paper"}]) == {}
    assert differing_settings([]) == {}


def test_long_values_are_cut() -> None:
    text = setting_text("x" * 100)
    assert len(text) == 60 and text.endswith("...")
    assert setting_text(True) == "true" and setting_text("paper") == "paper"
