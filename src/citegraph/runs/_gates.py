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

Thresholds are checked before a command does any work (:func:`parse_thresholds` given the
task): a threshold is a non-negative number, a fraction (``0.6``) or a percentage (``60%``); a
name without a dot must be one of the short names the task declares its ``metrics.json`` can
hold (:attr:`Task.gate_metrics <citegraph.runs.Task>`; a near miss gets a "did you mean"); a
fraction's threshold is at most 1 (100%), so ``precision=60`` is refused, suggesting ``60%``. A
dotted path is checked against the run's ``metrics.json`` once it exists
(:func:`resolve_metric`), as are every name's ambiguity and whether it is measured.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError
from citegraph.runs._metric_names import HEADLINE_KEYS, TaskMetrics
from citegraph.runs._registry import task_type

#: Keys of a group of figures tried, in order, for its headline number.
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


def _gate_metrics(task: str | None) -> TaskMetrics | None:
    """The short names the registered task ``task`` declares, or ``None`` (no task, a task not
    registered here, or one that declares none: its names are checked against its metrics)."""
    if task is None:
        return None
    try:
        return task_type(task).gate_metrics
    except ConfigError:
        return None


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """``"; did you mean precision?"`` for the one of ``names`` closest to ``name`` (by
    :func:`difflib.get_close_matches`), or ``""`` when none is close."""
    found = difflib.get_close_matches(name, list(names), n=1)
    return f"; did you mean {found[0]}?" if found else ""


def _threshold(part: str, name: str, number: str, task: TaskMetrics | None) -> float:
    """The threshold ``number`` of the entry ``part`` (``name=number``), checked.

    Raises:
        ConfigError: not a number, negative, or a fraction's threshold above 1 (100%).
    """
    percent = number.endswith("%")
    try:
        value = float(number[:-1]) / 100 if percent else float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ConfigError(
            f"--fail-under {part}: {number!r} is not a number (a fraction such as 0.6, or a "
            "percentage such as 60%)"
        )
    if value < 0:
        raise ConfigError(f"--fail-under {part}: a threshold cannot be negative")
    if value > 1 and task is not None and task.is_fraction(name):
        if percent:
            raise ConfigError(
                f"--fail-under {part}: {name} is a fraction, at most 100%, so {number} can "
                "never be reached"
            )
        hint = f"; for {number} percent write {name}={number}%" if value <= 100 else ""
        raise ConfigError(
            f"--fail-under {part}: {name} is a fraction from 0 to 1, so {number} can never be "
            f"reached{hint}"
        )
    return value


def _check_name(part: str, name: str, task_name: str, task: TaskMetrics | None) -> None:
    """Refuse a metric name that is not a dotted path (``a.b``) or, without a dot, not one of
    the short names of ``task``.

    Raises:
        ConfigError: the name is malformed or names no metric of the task.
    """
    if any(not p.strip() for p in name.split(".")):
        raise ConfigError(
            f"--fail-under {part}: {name!r} is not a metric name (a short name such as "
            "precision, or a dotted path into metrics.json such as precision.macro)"
        )
    if task is None or "." in name or name in task.names:
        return
    raise ConfigError(
        f"--fail-under {part}: a {task_name} run has no metric {name!r}"
        f"{did_you_mean(name, task.names)} (its metrics: {', '.join(task.names)}; or a "
        "dotted path into metrics.json)"
    )


def parse_thresholds(text: str | Iterable[str], *, task: str | None = None) -> dict[str, float]:
    """``"precision=0.6,alignment=0.8"`` (or several such texts) as ``{name: threshold}``;
    a threshold may be a percentage (``60%`` is 0.6).

    Checked before any work: every threshold is a non-negative number. Given the ``task``
    whose ``metrics.json`` the gates will read (its registered name; its
    :attr:`~citegraph.runs.Task.gate_metrics` list the names), a
    name without a dot must be one of its short names, and a fraction's threshold at most 1
    (100%); a dotted path is left to :func:`resolve_metric`, once there are metrics.

    Raises:
        ConfigError: an entry is not ``METRIC=NUMBER``, a threshold is not a non-negative
            number, a metric is named twice, or (with ``task``) a name without a dot is not a
            metric of the task (the message suggests the nearest one), or a fraction's
            threshold is above 1 (``precision=60``: the message suggests ``60%``).
    """
    texts = [text] if isinstance(text, str) else list(text)
    known = _gate_metrics(task)
    out: dict[str, float] = {}
    for part in (p.strip() for t in texts for p in t.split(",")):
        if not part:
            continue
        name, sep, number = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise ConfigError(f"--fail-under takes METRIC=VALUE[,METRIC=VALUE...]; got {part!r}")
        _check_name(part, name, task or "", known)
        value = _threshold(part, name, number, known)
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
        available = available_metrics(metrics)
        paths = [p for p in nodes if p.split(".", 1)[0] not in _NOT_MEASURES]
        raise ConfigError(
            f"no metric {name!r} in metrics.json; available: {', '.join(available) or 'none'} "
            f"(or a dotted path such as precision.macro){did_you_mean(name, available + paths)}"
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
