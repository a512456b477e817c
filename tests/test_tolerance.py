"""The suite's rule for comparing model-computed numbers (``tests/_tolerance.py``)."""

from __future__ import annotations

import math

from _tolerance import first_difference, model_approx, text_difference

# The value issue 35 reported: the same SmolLM2 coherence on an AVX2 CPU, an AVX-512 CPU and with
# torch's portable kernels (relative differences 9.5e-9 and 1.8e-8).
COHERENCE = (0.01908591184000395, 0.019085912021523117, 0.019085912179023713)
# The largest difference measured between those kernels on the regression fixtures: CONNER
# helpfulness's 1 - L(k) / L(baseline) on the fixtures' machine and with portable kernels (6.7e-6).
UNCLIPPED = (0.17447605475432115, 0.17447721907993352)


def test_cpu_rounding_is_within_the_tolerance() -> None:
    for value in COHERENCE[1:]:
        assert first_difference({"coherence": COHERENCE[0]}, {"coherence": value}) is None
        assert value == model_approx(COHERENCE[0])
    assert first_difference(UNCLIPPED[0], UNCLIPPED[1]) is None


def test_a_real_change_of_a_float_is_reported_with_path_values_and_tolerance() -> None:
    found = first_difference({"a": [{"b": 0.5}]}, {"a": [{"b": 0.50006}]})
    assert found is not None
    assert found.startswith("$.a[0].b: expected 0.5, got 0.50006 (difference 6e-05, beyond")
    assert "rel 0.0001, abs 1e-06" in found
    # 1e-4 relative of 0.5 is 5e-5: 0.50004 is inside it.
    assert first_difference(0.5, 0.50004) is None
    # a perplexity that moved by one token's worth in a hundred is a change
    assert first_difference(31.856, 31.856 * 1.01) is not None


def test_near_zero_the_absolute_tolerance_applies() -> None:
    assert first_difference(0.0, 5e-7) is None
    assert first_difference(0.0, 2e-6) is not None


def test_integers_strings_booleans_and_shapes_are_exact() -> None:
    assert first_difference(3, 4) == "$: expected 3, got 4"
    assert first_difference(1, 1.0) == "$: expected 1, got 1.0 (int expected, float in the output)"
    assert first_difference(True, 1) is not None
    assert first_difference("entailment", "Entailment") is not None
    assert first_difference([1.0, 2.0], [1.0]) == "$: 2 items expected, 1 in the output"
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "$: new key(s) in the output: ['b']"
    assert first_difference({"a": 1, "b": 2}, {"a": 1}) == (
        "$: key(s) no longer in the output: ['b']"
    )
    assert first_difference(None, 0.0) is not None


def test_nan_equals_nan_and_infinities_only_themselves() -> None:
    assert first_difference(math.nan, math.nan) is None
    assert first_difference(math.inf, math.inf) is None
    assert first_difference(math.inf, 1e308) is not None
    assert first_difference(math.nan, 0.0) is not None


def test_floats_inside_text_use_the_tolerance_and_the_rest_is_exact() -> None:
    # a JSON-encoded list in a record's details, and a CSV line
    measured = ("[1.473900318145752, 2.83395767]", "[1.4739055633544922, 2.83395767]")
    assert text_difference(*measured, "$") is None
    assert text_difference("nq:0,0.1234567,2", "nq:0,0.12345671,2", "$") is None
    found = text_difference("nq:0,0.1234567,2", "nq:0,0.1233,2", "$.csv[1]")
    assert found is not None and "number 0 of the text: expected 0.1234567, got 0.1233" in found
    # the text around the numbers, integers in it and versions are exact
    assert text_difference("nq:0,0.5,2", "nq:1,0.5,2", "$") is not None
    assert text_difference("count 10", "count 11", "$") is not None
    assert text_difference("torch 2.13.0", "torch 2.13.1", "$") is not None
    assert text_difference("1e-3 loss", "1.00001e-3 loss", "$") is None
    assert text_difference("0.5 and 0.25", "0.5 and", "$") is not None
