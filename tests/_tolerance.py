"""How tests compare numbers that come out of a model or a float reduction.

float32 matrix products round differently on different CPUs (AVX2 and AVX-512 kernels, oneDNN
paths, torch's portable kernels under ``ATEN_CPU_CAPABILITY=default``): the same model on the
same input gives scores that differ from about the 8th significant digit on. A test that
compares such a number exactly passes only on the CPU that wrote the expected value. The rule,
for every test in this suite:

- **Numbers written with a fractional part or an exponent** (JSON floats, and such numbers inside
  a string or a text line: a JSON-encoded list in a record's ``details``, a CSV cell, a Markdown
  table) are equal when ``math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL)``:
  relative 1e-4, absolute 1e-6 near zero. NaN equals NaN; infinities equal only themselves.
- **Everything else is exact**: integers (counts, ids, sizes), strings outside those numbers
  (ids, labels, text), booleans, null, the keys of every object and the length of every list. An
  integer never equals a float, so a count that turns into a score is a difference.

A difference is reported by its JSON path (or line), with both values and the tolerance applied.
Arithmetic the tests compute by hand from exact inputs (ratios of counts, F1, kappa) is not
model output and keeps ``pytest.approx``'s default or exact comparison.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

#: Relative tolerance for model-computed floats. Measured on the regression fixtures (SmolLM2
#: perplexities, MiniLM cosines, and what is derived from them): the fixtures' machine, an
#: AVX-512 CPU and torch's portable kernels differ by up to 6.7e-6 relative (helpfulness's
#: ``1 - L(k) / L(baseline)`` loses digits to the subtraction); 1e-4 leaves a 15x margin, and a
#: real change of a score (a token, a prompt word, a model) moves it by far more.
REL_TOL = 1e-4
#: Absolute tolerance, for values near zero (a cosine or a clipped difference near 0, where
#: float32 leaves about 1e-7 of absolute noise).
ABS_TOL = 1e-6

#: What the rule says, in a difference report.
TOLERANCE = f"rel {REL_TOL:g}, abs {ABS_TOL:g}"

#: A number with a fractional part or an exponent inside a text (an integer is left as text).
_FLOAT_IN_TEXT = re.compile(
    r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])"
    r"|(?<![\w.])[-+]?\d+[eE][-+]?\d+(?![\w.])"
)


def model_approx(expected: Any) -> Any:
    """``pytest.approx`` with the model tolerance (a float, or a list or dict of them)."""
    return pytest.approx(expected, rel=REL_TOL, abs=ABS_TOL)


def floats_close(expected: float, actual: float) -> bool:
    """Two floats equal under the rule (NaN equals NaN)."""
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    return math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 300 else text[:300] + "..."


def key_path(path: str, key: str) -> str:
    """``path.key``, or ``path["key"]`` when the key is not an identifier."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def text_difference(expected: str, actual: str, path: str) -> str | None:
    """Where two texts differ under the rule: outside their floats exactly, floats within the
    tolerance; ``None`` when they are equal."""
    if expected == actual:
        return None
    exp_parts = _FLOAT_IN_TEXT.split(expected)
    act_parts = _FLOAT_IN_TEXT.split(actual)
    exp_numbers = _FLOAT_IN_TEXT.findall(expected)
    act_numbers = _FLOAT_IN_TEXT.findall(actual)
    if exp_parts != act_parts or len(exp_numbers) != len(act_numbers):
        return f"{path}: expected {_short(expected)}, got {_short(actual)}"
    for i, (e, a) in enumerate(zip(exp_numbers, act_numbers, strict=True)):
        if not floats_close(float(e), float(a)):
            return (
                f"{path}: number {i} of the text: expected {e}, got {a} (difference "
                f"{abs(float(e) - float(a)):.3g}, beyond the tolerance {TOLERANCE})\n"
                f"  expected text: {_short(expected)}\n  output text:   {_short(actual)}"
            )
    return None


def first_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """The JSON path of the first difference between two JSON values under the rule, with both
    values (and the tolerance, for floats), or ``None`` when they are equal."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        missing = [k for k in expected if k not in actual]
        if missing:
            return f"{path}: key(s) no longer in the output: {missing}"
        new = [k for k in actual if k not in expected]
        if new:
            return f"{path}: new key(s) in the output: {new}"
        for key in expected:
            found = first_difference(expected[key], actual[key], key_path(path, key))
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(e, a, f"{path}[{i}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path}: {len(expected)} items expected, {len(actual)} in the output"
        return None
    if isinstance(expected, float) and isinstance(actual, float):
        if floats_close(expected, actual):
            return None
        return (
            f"{path}: expected {expected!r}, got {actual!r} (difference "
            f"{abs(expected - actual):.3g}, beyond the tolerance {TOLERANCE})"
        )
    if isinstance(expected, str) and isinstance(actual, str):
        return text_difference(expected, actual, path)
    if type(expected) is type(actual) and expected == actual:
        return None
    kinds = ""
    if type(expected) is not type(actual):
        kinds = f" ({type(expected).__name__} expected, {type(actual).__name__} in the output)"
    return f"{path}: expected {_short(expected)}, got {_short(actual)}{kinds}"
