"""Issue 37, item 9: the Python gates (``assert_metrics``, ``RunMetrics.assert_at_least``,
``check_gates``) pass only on measurements. A value no metric can have (infinite, or a fraction
above 1) is a damaged ``metrics.json``; a threshold is checked as ``--fail-under`` checks its
own (never a raw ``TypeError``); a path that names two entries is refused, not read from one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import MockChat
from citegraph.runs import Runtime, check_gates, resolve_metric
from citegraph.testing import RunMetrics, assert_metrics

ANSWER = "Stephen Crane was born in Newark [Q206534, place of birth: Newark]."


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("kalma") / "run"
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEGRAPH_CACHE", str(cache))
        run_kalma(
            out,
            KalmaRunConfig(model="mock"),
            runtime=Runtime(limit=3),
            data_dir=data_dir,
            model=MockChat(ANSWER),
        )
    return out


def _with_precision(run: Path, tmp_path: Path, raw: str) -> Path:
    """A copy of ``run`` whose metrics.json holds ``raw`` (JSON text) as its micro precision."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("run.json", "samples.jsonl"):
        (copy / name).write_bytes((run / name).read_bytes())
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["precision"]["micro"] = "@precision@"
    (copy / "metrics.json").write_text(json.dumps(metrics).replace('"@precision@"', raw))
    return copy


@pytest.mark.parametrize("raw", ["Infinity", "1e400", "-Infinity", "1" + "0" * 400])
def test_an_infinite_value_is_damage_not_a_pass(run: Path, tmp_path: Path, raw: str) -> None:
    damaged = _with_precision(run, tmp_path, raw)
    with pytest.raises(DataError, match=r"precision.micro is -?inf, not a measurement"):
        RunMetrics(damaged).assert_at_least(precision=0.5)
    with pytest.raises(DataError, match="not a measurement"):
        assert_metrics(json.loads((damaged / "metrics.json").read_text()), precision=0.5)


def test_a_fraction_above_one_is_damage_not_a_pass(run: Path, tmp_path: Path) -> None:
    damaged = _with_precision(run, tmp_path, "7.5")
    with pytest.raises(DataError, match=r"precision.micro is 7.5, but it is a fraction .* kalma"):
        RunMetrics(damaged).assert_at_least(precision=0.5)
    metrics = json.loads((damaged / "metrics.json").read_text())
    with pytest.raises(DataError, match="is a fraction"):
        assert_metrics(metrics, precision=0.5, task="kalma.run")
    (tmp_path / "sound").mkdir()
    sound = _with_precision(run, tmp_path / "sound", "0.75")
    assert RunMetrics(sound).assert_at_least(precision=0.5)[0].value == 0.75


@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        (float("-inf"), "is not a number"),
        (float("nan"), "is not a number"),
        (-1, "cannot be negative"),
        ("-1", "cannot be negative"),
        ("150%", "at most 100%"),
        (1.5, "from 0 to 1"),
        ("high", "'high' is not a number"),
        (None, "not NoneType"),
        (True, "not bool"),
        ([0.5], "not list"),
    ],
)
def test_a_threshold_is_checked_as_fail_under_checks_it(
    run: Path, threshold: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=r"threshold correctness=.*" + message):
        RunMetrics(run).assert_at_least(correctness=threshold)  # measured: 1/3


def test_thresholds_as_text_and_numbers_pass(run: Path) -> None:
    value = RunMetrics(run)["correctness"]  # 1/3 with this mock answer
    assert value is not None
    low = value / 2
    checks = RunMetrics(run).assert_at_least(
        {"correctness": f"{100 * low}%"}, alignment=0, f1=0.5, allow_unmeasured=True
    )
    assert [c.threshold for c in checks] == [pytest.approx(low), 0.0, 0.5]
    assert check_gates({"n": 40}, {"n": "30"})[0].passed  # not a fraction: any size


def test_colliding_labels_are_refused_and_named_by_position() -> None:
    same = {"per_label": [{"label": "x", "f1": 0.9}, {"label": "x", "f1": 0.1}]}
    with pytest.raises(ConfigError, match=r"2 entries .* per_label.x.f1 .*per_label\[0\].f1, per"):
        assert_metrics(same, {"per_label.x.f1": 0.5})
    assert resolve_metric(same, "per_label[1].f1") == ("per_label[1].f1", 0.1, False)
    with pytest.raises(AssertionError, match=r"per_label\[1\].f1 = 0.1 < 0.5"):
        assert_metrics(same, {"per_label[1].f1": 0.5})
    dotted = {"per_label": [{"label": "a.b", "f1": 0.9}, {"label": "a", "b": {"f1": 0.1}}]}
    with pytest.raises(ConfigError, match=r"per_label\[0\].f1, per_label\[1\].b.f1"):
        resolve_metric(dotted, "per_label.a.b.f1")
    index = {"per_label": [{"label": "1", "f1": 0.9}, {"f1": 0.1}]}  # a label that is an index
    with pytest.raises(ConfigError, match="2 entries"):
        resolve_metric(index, "per_label.1.f1")
    apart = {"per_label": [{"label": "x", "f1": 0.9}, {"label": "y", "f1": 0.1}]}
    assert resolve_metric(apart, "y.f1") == ("per_label.y.f1", 0.1, False)  # no collision
