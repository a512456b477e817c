"""differing_settings: the settings that tell runs apart."""

from __future__ import annotations

from citegraph.runs import differing_settings, input_settings, run_settings, setting_text


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


def test_input_files_are_settings_by_their_digest() -> None:
    # Issue 36 (8): runs of one config on different answers files differ in their inputs.
    a = {"config": {"mode": "paper"}, "data": {"answers": "1e0feb94" + "0" * 56, "kg": "ab" * 32}}
    b = {"config": {"mode": "paper"}, "data": {"answers": "7c0714b1" + "1" * 56, "kg": "ab" * 32}}
    assert input_settings(a["data"]) == {
        "answers (sha256)": "1e0feb940000",
        "kg (sha256)": "abababababab",
    }
    assert differing_settings([run_settings(a), run_settings(b)]) == {
        "answers (sha256)": ["1e0feb940000", "7c0714b11111"]
    }
    assert input_settings(None) == {} and input_settings({"x": 3}) == {}
    assert run_settings({"config": {"seed": 0}}) == {"seed": 0}
