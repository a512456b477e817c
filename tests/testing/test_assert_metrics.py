"""``citegraph.testing.assert_metrics`` and the ``citegraph_run`` pytest fixture: the CLI's
``--fail-under`` gate in a user's test suite, on the KaLMA score of the packaged demo answers
(precision 8/22 = 0.364, alignment 21/22 = 0.955; see tests/runs/test_gates.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.testing import RunMetrics, assert_metrics

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("score")
    score_answers(
        DEMO / "answers.jsonl",
        out,
        KalmaScoreConfig(),
        gold_path=DEMO / "gold.jsonl",
        data_dir=data_dir,
    )
    return out


def test_assert_metrics_passes_and_names_what_fell_short(run: Path) -> None:
    checks = assert_metrics(run, precision=0.3, alignment=0.9)
    assert [c.path for c in checks] == ["precision.micro", "alignment.micro"]
    with pytest.raises(AssertionError) as short:
        assert_metrics(run, {"precision.macro": 0.5}, alignment=0.8)
    assert str(short.value) == (
        f"metrics of {run} fell short: precision.macro = 0.373 < 0.5"  # 0.373 = macro of 4
    )
    with pytest.raises(ConfigError, match="no metric 'precison'"):
        assert_metrics(run, precison=0.5)


def test_unmeasured_fails_unless_allowed() -> None:
    metrics = {"recall": {"micro": None, "macro": None}}
    with pytest.raises(AssertionError, match=r"recall \(recall.micro\) is unmeasured"):
        assert_metrics(metrics, recall=0.1)
    assert assert_metrics(metrics, recall=0.1, allow_unmeasured=True)[0].unmeasured


def test_run_metrics_reads_values_by_gate_name(run: Path) -> None:
    metrics = RunMetrics(run)
    assert metrics["alignment"] == pytest.approx(21 / 22)
    with pytest.raises(AssertionError, match="precision"):
        metrics.assert_at_least(precision=0.6)


def test_the_plugin_is_a_pytest11_entry_point() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entry = project["project"]["entry-points"]["pytest11"]
    assert entry == {"citegraph": "citegraph.testing.pytest_plugin"}


def test_the_citegraph_run_fixture_in_a_users_suite(run: Path, tmp_path: Path) -> None:
    suite = tmp_path / "test_quality.py"
    suite.write_text(
        "def test_good(citegraph_run):\n"
        "    citegraph_run().assert_at_least(precision=0.3, alignment=0.9)\n"
        "\n"
        "def test_bad(citegraph_run):\n"
        f"    citegraph_run({str(run)!r}).assert_at_least(precision=0.6)\n"
    )
    # the plugin named with -p: an installed citegraph's entry point would load it a second time
    env = os.environ | {"PYTHONPATH": str(ROOT / "src"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-p", "citegraph.testing.pytest_plugin", str(suite), "--citegraph-run", str(run),
            "--rootdir", str(tmp_path),
        ],
        env=env, capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # one test failed
    assert "1 failed, 1 passed" in done.stdout
    assert "precision (precision.micro) = 0.3636 < 0.6" in done.stdout
