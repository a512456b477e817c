"""CI gates: the metrics of a run must reach given thresholds.

One implementation behind ``--fail-under`` (every task command and ``citegraph runs report``),
:func:`citegraph.testing.assert_metrics` and the ``citegraph_run`` pytest fixture.

A metric is named by its path in ``metrics.json``, dotted for nested keys
(``precision.micro``, ``metrics.factuality.mean``, ``per_label.supportive.f1``: list entries are
named by their ``label``, ``complexity`` or ``name`` when they have one, else by their index),
or by a short name: the end of a unique path (``factuality`` for ``metrics.factuality``,
``supportive.f1``). A name that ends on a group of figures takes its headline: ``micro``, else
``mean``, else ``value`` (``precision`` is ``precision.micro``, as the first column of the
command's table). A metric whose value is ``None`` or NaN, or whose group counts every sample as
unmeasured (``n_unmeasured == n``), is unmeasured, and fails its gate unless unmeasured metrics
are allowed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError

#: Keys of a group of figures tried, in order, for its headline number.
HEADLINE_KEYS = ("micro", "mean", "value")
#: Top-level parts of ``metrics.json`` that describe the run rather than measure it: their paths
#: are only matched when named in full.
_NOT_MEASURES = ("config", "progress", "models", "setup", "runtime", "details", "unmeasured")
_LIST_KEYS = ("label", "complexity", "name")


@dataclass(frozen=True)
class GateCheck:
    """One threshold checked against a run's metrics.

    Attributes:
        name: The metric as given.
        path: Its full dotted path in ``metrics.json``.
        value: The value found (``None`` when unmeasured).
        threshold: The least value that passes.
        unmeasured: The metric was not measured (``None``, NaN, or every sample unmeasured).
        passed: ``value >= threshold`` (an unmeasured metric passes only when allowed).
    """

    name: str
    path: str
    value: float | None
    threshold: float
    unmeasured: bool
    passed: bool

    def describe(self) -> str:
        """One line: the metric, its value and the threshold (``precision.micro = 0.5 < 0.6``)."""
        where = self.name if self.name == self.path else f"{self.name} ({self.path})"
        if self.unmeasured:
            state = "allowed" if self.passed else "counts as failed; --allow-unmeasured"
            return f"{where} is unmeasured, needs >= {self.threshold:g} ({state})"
        sign = ">=" if self.passed else "<"
        return f"{where} = {self.value:.4g} {sign} {self.threshold:g}"


def parse_thresholds(text: str | Iterable[str]) -> dict[str, float]:
    """``"precision=0.6,alignment=0.8"`` (or several such texts) as ``{name: threshold}``;
    a threshold may be a percentage (``60%`` is 0.6).

    Raises:
        ConfigError: an entry is not ``METRIC=NUMBER``, or a metric is named twice.
    """
    texts = [text] if isinstance(text, str) else list(text)
    out: dict[str, float] = {}
    for part in (p.strip() for t in texts for p in t.split(",")):
        if not part:
            continue
        name, sep, number = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise ConfigError(f"--fail-under takes METRIC=VALUE[,METRIC=VALUE...]; got {part!r}")
        try:
            value = float(number[:-1]) / 100 if number.endswith("%") else float(number)
        except ValueError:
            raise ConfigError(f"--fail-under {name}: {number!r} is not a number") from None
        if math.isnan(value):
            raise ConfigError(f"--fail-under {name}: the threshold cannot be NaN")
        if name in out:
            raise ConfigError(f"--fail-under names {name!r} twice")
        out[name] = value
    return out


def _nodes(value: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    """Every ``(dotted path, value)`` of a ``metrics.json`` (groups included)."""
    if path:
        yield path, value
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _nodes(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            key = next(
                (str(inner[k]) for k in _LIST_KEYS if isinstance(inner, Mapping) and k in inner),
                str(i),
            )
            yield from _nodes(inner, f"{path}.{key}" if path else key)


def _is_figure(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _headline(path: str, value: Any) -> tuple[str, Any] | None:
    """The number a path names: itself, or a group's headline; ``None`` for neither."""
    if _is_figure(value):
        return path, value
    if isinstance(value, Mapping):
        for key in HEADLINE_KEYS:
            if key in value and _is_figure(value[key]):
                return f"{path}.{key}", value[key]
    return None


def available_metrics(metrics: Mapping[str, Any]) -> list[str]:
    """The short names a gate accepts for ``metrics``: the top-level figures and groups with a
    headline, and those of ``metrics`` (CONNER's), in file order."""
    names = []
    for scope in (metrics, metrics.get("metrics")):
        if not isinstance(scope, Mapping):
            continue
        for key, value in scope.items():
            if key not in _NOT_MEASURES and _headline(key, value) is not None:
                names.append(str(key))
    return names


def resolve_metric(metrics: Mapping[str, Any], name: str) -> tuple[str, float | None, bool]:
    """``(path, value, unmeasured)`` of the metric ``name`` in ``metrics``.

    Raises:
        ConfigError: no metric has that name (the message lists the available ones), the name
            fits several, or it names a group without a headline.
    """
    nodes = dict(_nodes(metrics))
    if name in nodes:
        found = [name]
    else:
        found = [
            p for p in nodes if p.endswith("." + name) and p.split(".", 1)[0] not in _NOT_MEASURES
        ]
        if len(found) > 1:  # the shallowest wins when it is the only one that shallow
            depth = min(p.count(".") for p in found)
            shallow = [p for p in found if p.count(".") == depth]
            found = shallow if len(shallow) == 1 else found
    if not found:
        names = ", ".join(available_metrics(metrics)) or "none"
        raise ConfigError(
            f"no metric {name!r} in metrics.json; available: {names} (or a dotted path such "
            "as precision.macro)"
        )
    if len(found) > 1:
        raise ConfigError(f"metric {name!r} is ambiguous: give one of {', '.join(found[:8])}")
    path, node = found[0], nodes[found[0]]
    headline = _headline(path, node)
    if headline is None:
        inner = [p for p in nodes if p.startswith(path + ".") and _is_figure(nodes[p])][:8]
        raise ConfigError(f"metric {name!r} is a group of figures: give one of {', '.join(inner)}")
    path, value = headline
    unmeasured = value is None or (isinstance(value, float) and math.isnan(value))
    if isinstance(node, Mapping) and isinstance(node.get("n"), int):
        unmeasured = unmeasured or node.get("n_unmeasured") == node["n"] > 0
    return path, (None if unmeasured else float(value)), unmeasured


def check_gates(
    metrics: Mapping[str, Any],
    thresholds: Mapping[str, float],
    *,
    allow_unmeasured: bool = False,
) -> list[GateCheck]:
    """Check each threshold against ``metrics`` (a ``metrics.json``), in the order given.

    Raises:
        ConfigError: a name does not resolve (see :func:`resolve_metric`).
    """
    checks = []
    for name, threshold in thresholds.items():
        path, value, unmeasured = resolve_metric(metrics, name)
        passed = allow_unmeasured if value is None else value >= threshold
        checks.append(GateCheck(name, path, value, float(threshold), unmeasured, passed))
    return checks


def read_metrics(run_dir: str | Path) -> dict[str, Any]:
    """The ``metrics.json`` of a run directory.

    Raises:
        DataError: the file is missing or is not a JSON object.
    """
    from citegraph.errors import DataError
    from citegraph.io import load_json
    from citegraph.runs._rundir import METRICS_FILE

    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        raise DataError("no metrics.json: the run has not finished (see citegraph runs report)",
                        path=path)  # fmt: skip
    data = load_json(path)
    if not isinstance(data, dict):
        raise DataError("metrics.json is not a JSON object", path=path)
    return data
