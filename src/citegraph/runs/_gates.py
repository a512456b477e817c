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

The Python API (:func:`check_gates`, :func:`citegraph.testing.assert_metrics`) checks its
thresholds the same way (:func:`gate_threshold`: a number or a text such as ``"60%"``; never a
raw ``TypeError``). A value no measurement can have is a damaged ``metrics.json``, never a pass:
an infinite one (``Infinity``, ``1e400``), or, when the task is known, a fraction outside 0 to
1. A path that names two entries (list entries whose labels are equal, or a label holding a
dot) is refused rather than read from either; each entry's exact path names it
(``per_label[0].f1``).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, DataError
from citegraph.io import json_text, load_json
from citegraph.runs._metric_names import HEADLINE_KEYS, TaskMetrics
from citegraph.runs._registry import task_type
from citegraph.runs._rundir import METRICS_FILE

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
    return _checked_threshold(f"--fail-under {part}", name, value, number, percent, task)


def _checked_threshold(
    where: str, name: str, value: float, number: str, percent: bool, task: TaskMetrics | None
) -> float:
    """``value``, the threshold of metric ``name`` (given as ``number``), checked; errors start
    with ``where`` (the option entry, or the Python call's argument).

    Raises:
        ConfigError: not a finite number, negative, or a fraction's threshold above 1 (100%).
    """
    if not math.isfinite(value):
        raise ConfigError(
            f"{where}: {number!r} is not a number (a fraction such as 0.6, or a percentage such "
            "as 60%)"
        )
    if value < 0:
        raise ConfigError(f"{where}: a threshold cannot be negative")
    if value > 1 and task is not None and task.is_fraction(name):
        if percent:
            raise ConfigError(
                f"{where}: {name} is a fraction, at most 100%, so {number} can never be reached"
            )
        hint = f"; for {number} percent write {name}={number}%" if value <= 100 else ""
        raise ConfigError(
            f"{where}: {name} is a fraction from 0 to 1, so {number} can never be reached{hint}"
        )
    return value


def gate_threshold(name: str, threshold: object, task: str | None = None) -> float:
    """A threshold given to the Python API (:func:`check_gates`,
    :func:`citegraph.testing.assert_metrics`), checked as ``--fail-under`` checks its own: a
    number (a fraction such as 0.6) or a text (``"0.6"``, ``"60%"``), finite, not negative,
    and at most 1 (100%) for a fraction of ``task``.

    Raises:
        ConfigError: anything else (names the metric and what it got).
    """
    known = _gate_metrics(task)
    shown = repr(threshold) if len(repr(threshold)) <= 40 else repr(threshold)[:37] + "..."
    where = f"threshold {name}={shown}"
    if isinstance(threshold, str):
        number = threshold.strip()
        percent = number.endswith("%")
        try:
            value = float(number[:-1]) / 100 if percent else float(number)
        except ValueError:
            value = math.nan
        return _checked_threshold(where, name, value, number[:40], percent, known)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ConfigError(
            f"{where}: a threshold is a number (a fraction such as 0.6) or a text such as "
            f"'60%', not {type(threshold).__name__}"
        )
    try:
        value = float(threshold)
    except OverflowError:  # an int too large for a float
        value = math.inf
    return _checked_threshold(where, name, value, shown, False, known)


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


def _nodes(value: Any, path: str = "", exact: str = "") -> Iterable[tuple[str, str, Any]]:
    """Every ``(dotted path, exact path, value)`` of a ``metrics.json`` (groups included). The
    exact path names list entries by position (``per_label[0].f1``) and keys that hold a dot in
    brackets (``["a.b"]``), so it names one node even where dotted paths collide."""
    if path:
        yield path, exact, value
    if isinstance(value, Mapping):
        for key, inner in value.items():
            name = str(key)
            step = f"[{json_text(name)}]" if "." in name or "[" in name else f".{name}"
            yield from _nodes(inner, f"{path}.{name}" if path else name, exact + step)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            key = next(
                (str(inner[k]) for k in _LIST_KEYS if isinstance(inner, Mapping) and k in inner),
                str(i),
            )
            yield from _nodes(inner, f"{path}.{key}" if path else key, f"{exact}[{i}]")


class _Index:
    """The nodes of a ``metrics.json`` by dotted path, each path with every node it names (two
    list entries whose labels are equal, or a label with a dot, give a path two nodes), and by
    exact path (:func:`_nodes`)."""

    def __init__(self, metrics: Mapping[str, Any]) -> None:
        self.nodes: dict[str, Any] = {}
        self.exact: dict[str, Any] = {}
        self.named: dict[str, list[str]] = {}
        for path, exact, value in _nodes(metrics):
            self.nodes.setdefault(path, value)
            self.named.setdefault(path, []).append(exact.lstrip("."))
            self.exact[exact.lstrip(".")] = value

    def collided(self, name: str, path: str) -> ConfigError | None:
        """The error for ``name``, found at ``path``, when that path names several nodes."""
        exact = self.named.get(path, [])
        if len(exact) < 2:
            return None
        return ConfigError(
            f"metric {name!r}: {len(exact)} entries of metrics.json are named {path} (list "
            "entries with the same label, or a label holding a dot), so a gate cannot tell "
            f"which to read; name one by its position: {', '.join(exact[:8])}"
        )


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
            fits several, it names a group without a headline, or its path names several
            entries of ``metrics`` (list entries whose labels collide: the message gives each
            one's exact path, ``per_label[0].f1``, which names it).
        DataError: the value is infinite (``Infinity``, ``1e400``): no measurement is.
    """
    index = _Index(metrics)
    nodes = index.nodes
    if name in nodes:
        found = [name]
    elif name in index.exact:  # an exact path: names one node, wherever paths collide
        nodes = {name: index.exact[name]}
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
    if nodes is index.nodes and (collision := index.collided(name, path)) is not None:
        raise collision
    headline = _headline(path, node)
    if headline is None:
        inner = [p for p in nodes if p.startswith(path + ".") and _is_figure(nodes[p])][:8]
        raise ConfigError(f"metric {name!r} is a group of figures: give one of {', '.join(inner)}")
    path, value = headline
    if nodes is index.nodes and (collision := index.collided(name, path)) is not None:
        raise collision
    if isinstance(value, int) and not isinstance(value, bool):
        value = _int_figure(value)
    if isinstance(value, float) and math.isinf(value):
        raise DataError(
            f"{path} is {value}, not a measurement (no metric is infinite): the file is damaged "
            "or was edited; recompute it with citegraph runs report",
            path=METRICS_FILE,
        )
    unmeasured = value is None or (isinstance(value, float) and math.isnan(value))
    if isinstance(node, Mapping) and isinstance(node.get("n"), int):
        unmeasured = unmeasured or node.get("n_unmeasured") == node["n"] > 0
    return path, (None if unmeasured else float(value)), unmeasured


def _int_figure(value: int) -> float:
    """An int figure as a float (one too large for a float is infinite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def check_gates(
    metrics: Mapping[str, Any],
    thresholds: Mapping[str, object],
    *,
    allow_unmeasured: bool = False,
    task: str | None = None,
) -> list[GateCheck]:
    """Check each threshold against ``metrics`` (a ``metrics.json``), in the order given.

    Args:
        metrics: The run's ``metrics.json``.
        thresholds: ``{metric: least value}``; a value is a number or a text such as ``"60%"``,
            checked as ``--fail-under`` checks its own (:func:`gate_threshold`).
        allow_unmeasured: Let an unmeasured metric pass.
        task: The registered task that wrote ``metrics`` (``run.json`` ``task``), when known:
            then a fraction's threshold above 1 is refused, and so is a fraction's value
            outside 0 to 1 (a damaged or edited ``metrics.json``).

    Raises:
        ConfigError: a threshold is not a non-negative number (or, for a fraction of ``task``,
            above 1), or a name does not resolve (see :func:`resolve_metric`).
        DataError: a value is infinite, or (given ``task``) a fraction's value is outside 0 to
            1: the gate would pass on a damaged file.
    """
    known = _gate_metrics(task)
    wanted = {name: gate_threshold(name, raw, task) for name, raw in thresholds.items()}
    checks = []
    for name, threshold in wanted.items():
        path, value, unmeasured = resolve_metric(metrics, name)
        fraction = known is not None and known.is_fraction(path)
        if value is not None and fraction and not 0 <= value <= 1:
            raise DataError(
                f"{path} is {value:g}, but it is a fraction (0 to 1) in a {task} run: the file "
                "is damaged or was edited; recompute it with citegraph runs report",
                path=METRICS_FILE,
            )
        passed = allow_unmeasured if value is None else value >= threshold
        checks.append(GateCheck(name, path, value, threshold, unmeasured, passed))
    return checks


def read_metrics(run_dir: str | Path) -> dict[str, Any]:
    """The ``metrics.json`` of a run directory.

    Raises:
        DataError: the file is missing or is not a JSON object.
    """
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        raise DataError("no metrics.json: the run has not finished (see citegraph runs report)",
                        path=path)  # fmt: skip
    data = load_json(path)
    if not isinstance(data, dict):
        raise DataError("metrics.json is not a JSON object", path=path)
    return data
