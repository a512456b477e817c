"""``--fail-under`` gates are checked when the command starts, before any item is worked on or
any model loaded: a name the command's task cannot produce (with the nearest one suggested) and
a fraction's threshold above 1 (``precision=60``: ``60%`` is meant) exit 2 with one line on
stderr, on task commands and on ``runs report`` alike. The demo answers score precision 8/22 =
0.364 (tests/runs/test_gates.py)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from _cli_helpers import _cache, invoke  # noqa: F401 (_cache: autouse fixture)
from click.testing import Result

from citegraph.testing import FakeOpenAIServer

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))
TYPO = (
    "error: --fail-under precison=0.5: a kalma.score run has no metric 'precison'; did you "
    "mean precision? (its metrics: correctness, precision, recall, f1, alignment, "
)
SIXTY = (
    "error: --fail-under precision=60: precision is a fraction from 0 to 1, so 60 can never be "
    "reached; for 60 percent write precision=60%\n"
)


def _score(out: Path, data_dir: Path, *more: str) -> Result:
    return invoke(
        "kalma", "score", DEMO / "answers.jsonl", "--gold", DEMO / "gold.jsonl",
        "--data-dir", data_dir, "--out", out, *more,
    )  # fmt: skip


def _refused_at_start(result: Result, out: Path) -> str:
    """The one stderr line of a command refused before any work: exit 2, nothing on stdout
    (no table, no progress) and no run directory made."""
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert not out.exists()
    return result.stderr


def test_a_misspelt_metric_is_refused_before_any_answer_is_scored(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "score"
    stderr = _refused_at_start(_score(out, data_dir, "--fail-under", "precison=0.5"), out)
    assert stderr.startswith(TYPO)
    # every entry is checked, whichever of several options holds it
    both = _score(out, data_dir, "--fail-under", "alignment=0.8", "--fail-under", "f=0.5,f1=0.2")
    assert "a kalma.score run has no metric 'f'; did you mean f1?" in _refused_at_start(both, out)


def test_a_misspelt_metric_is_refused_before_kalma_run_calls_its_model(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply="Stephen Crane was a writer.") as server:
        result = invoke(
            "kalma", "run", "--model", "vllm/fake-model", "--base-url", server.base_url,
            "--limit", "1", "--data-dir", data_dir, "--out", out,
            "--fail-under", "alignment=0.5,precison=0.5",
        )  # fmt: skip
        assert server.received == []  # no model call
    stderr = _refused_at_start(result, out)
    assert stderr.startswith(TYPO.replace("kalma.score", "kalma.run"))


def test_a_fraction_above_one_is_refused_and_a_percentage_gates_at_its_fraction(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "score"
    assert _refused_at_start(_score(out, data_dir, "--fail-under", "precision=60"), out) == SIXTY
    short = _score(out, data_dir, "--fail-under", "precision=60%")
    assert short.exit_code == 4, short.output
    assert "fell short: precision (precision.micro) = 0.3636 < 0.6" in short.stderr
    passed = _score(out, data_dir, "--fail-under", "precision=36%,n_answers=4")
    assert passed.exit_code == 0, passed.output
    assert "passed: precision (precision.micro) = 0.3636 >= 0.36" in passed.stdout
    assert "passed: n_answers = 4 >= 4" in passed.stdout  # a count is not a fraction


def test_negative_and_non_numeric_thresholds_are_refused_at_start(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "score"
    negative = _score(out, data_dir, "--fail-under", "precision=-0.1")
    assert _refused_at_start(negative, out) == (
        "error: --fail-under precision=-0.1: a threshold cannot be negative\n"
    )
    word = _refused_at_start(_score(out, data_dir, "--fail-under", "precision=high"), out)
    assert word.startswith("error: --fail-under precision=high: 'high' is not a number")


def test_runs_report_refuses_the_same_before_recomputing_the_run(
    tmp_path: Path, data_dir: Path
) -> None:
    run = tmp_path / "score"
    assert _score(run, data_dir).exit_code == 0
    written = (run / "metrics.json").stat().st_mtime_ns
    for gate, expected in [("precison=0.5", TYPO), ("precision=60", SIXTY)]:
        result = invoke("runs", "report", run, "--fail-under", gate)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""  # no report: the run was not recomputed
        assert result.stderr.startswith(expected)
        assert len(result.stderr.splitlines()) == 1
    assert (run / "metrics.json").stat().st_mtime_ns == written
    ok = invoke("runs", "report", run, "--fail-under", "precision=36%")
    assert ok.exit_code == 0, ok.output
    # a dotted path is resolved against metrics.json, which suggests the nearest path
    dotted = invoke("runs", "report", run, "--fail-under", "precision.marco=0.3")
    assert dotted.exit_code == 2, dotted.output
    assert dotted.stderr.startswith("error: --fail-under: no metric 'precision.marco'")
    assert dotted.stderr.rstrip().endswith("; did you mean precision.macro?")
