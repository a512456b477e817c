"""Exit statuses of the documented table (``citegraph --help``, README "Exit codes"): failed
items (3 for model or endpoint failures, 2 for input errors, 0 with ``--allow-failures``), ``ask``
without an answer (3), ``--fail-under`` gates (4; 2 for an unknown metric, before any work), on
``kalma score``, ``kalma run`` and ``runs report``."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import pytest
from _cli_helpers import _cache, invoke  # noqa: F401 (_cache: autouse fixture)
from click.testing import Result

from citegraph.cli._exit import ExitPolicy, judge_runs, resume_command
from citegraph.runs import Failure, FinishedRun
from citegraph.testing import FakeOpenAIServer, FakeReply

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def refused(body: object) -> FakeReply:
    return FakeReply(status=400, text="model 'fake-model' does not exist")


def test_help_documents_the_exit_statuses() -> None:
    result = invoke("--help")
    assert "Exit status: 0 success; 1 internal error; 2 usage or input error" in " ".join(
        result.output.split()
    )


def test_failed_model_calls_exit_3_with_the_first_reason_unless_allowed(
    tmp_path: Path, data_dir: Path
) -> None:
    with FakeOpenAIServer(reply=refused) as server:
        base = ["kalma", "run", "--model", "vllm/fake-model", "--base-url", server.base_url]
        base += ["--limit", "2", "--data-dir", str(data_dir)]
        result = invoke(*base, "--out", tmp_path / "a")
        assert result.exit_code == 3, result.output
        stderr = " ".join(result.stderr.split())
        assert "error: 2 of 2 items failed (model or endpoint failure); first: specific-0: " in (
            stderr
        )
        assert "ClientError" in stderr and "does not exist" in stderr
        assert "--allow-failures" in stderr
        allowed = invoke(*base, "--out", tmp_path / "b", "--allow-failures")
        assert allowed.exit_code == 0, allowed.output
        assert "2 questions have no answer" in allowed.output
    # the finished run says the same when reported again, without a model
    report = invoke("runs", "report", tmp_path / "a")
    assert report.exit_code == 3 and "2 of 2 items failed" in report.stderr
    assert invoke("runs", "report", tmp_path / "a", "--allow-failures").exit_code == 0


@pytest.mark.needs("spacy")
def test_ask_without_an_answer_exits_3_with_the_reason_on_stderr(data_dir: Path) -> None:
    with FakeOpenAIServer(reply=refused) as server:
        result = invoke(
            "ask", "Who was Stephen Crane?", "--model", "vllm/fake-model",
            "--base-url", server.base_url, "--data-dir", data_dir,
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "No answer: ClientError" in result.stderr
    assert "No answer" not in result.stdout


def test_items_failed_on_their_input_exit_2() -> None:
    failure = Failure("q-3", "DataError: answers.jsonl:3, field 'answer': not a string", "input")
    run = FinishedRun(Path("run"), {}, n_items=5, n_failed=1, failure=failure)
    assert judge_runs([run], ExitPolicy()) == 2
    assert judge_runs([run], ExitPolicy(allow_failures=True)) == 0


def _score(tmp_path: Path, data_dir: Path, *more: str) -> Result:
    return invoke(
        "kalma", "score", DEMO / "answers.jsonl", "--gold", DEMO / "gold.jsonl",
        "--data-dir", data_dir, "--out", tmp_path / "score", *more,
    )  # fmt: skip


def test_fail_under_passes_and_falls_short(tmp_path: Path, data_dir: Path) -> None:
    # the demo: precision 8/22 = 0.364, alignment 21/22 = 0.955 (tests/runs/test_gates.py)
    passed = _score(tmp_path, data_dir, "--fail-under", "precision=0.3,alignment=0.9")
    assert passed.exit_code == 0, passed.output
    assert "passed: alignment (alignment.micro) = 0.9545 >= 0.9" in passed.stdout
    short = _score(tmp_path, data_dir, "--fail-under", "precision=0.6,alignment=80%")
    assert short.exit_code == 4, short.output
    stderr = short.stderr
    assert "fell short: precision (precision.micro) = 0.3636 < 0.6" in stderr
    assert "alignment" not in stderr
    # the same gate on the finished run, without a model
    report = invoke("runs", "report", tmp_path / "score", "--fail-under", "precision.macro=0.5")
    assert report.exit_code == 4, report.output
    assert "precision.macro = 0.373 < 0.5" in report.stderr
    ok = invoke("runs", "report", tmp_path / "score", "--fail-under", "correctness=0.9")
    assert ok.exit_code == 0, ok.output


def test_fail_under_unknown_metric_and_bad_syntax_exit_2(tmp_path: Path, data_dir: Path) -> None:
    # refused before any answer is scored (tests/cli/test_cli_fail_under.py)
    unknown = _score(tmp_path, data_dir, "--fail-under", "precission=0.6")
    assert unknown.exit_code == 2, unknown.output
    assert "a kalma.score run has no metric 'precission'; did you mean precision?" in (
        unknown.stderr
    )
    assert not (tmp_path / "score").exists()
    bad = _score(tmp_path, data_dir, "--fail-under", "precision")
    assert bad.exit_code == 2 and "METRIC=VALUE" in bad.stderr


def test_unmeasured_metric_fails_unless_allowed(tmp_path: Path, data_dir: Path) -> None:
    # no --gold: recall has no gold minimum knowledge set to count against, so it is unmeasured
    args = ["kalma", "score", DEMO / "answers.jsonl", "--data-dir", data_dir]
    short = invoke(*args, "--out", tmp_path / "a", "--fail-under", "recall=0.1")
    assert short.exit_code == 4, short.output
    assert "recall (recall.micro) is unmeasured" in short.stderr
    allowed = invoke(
        *args, "--out", tmp_path / "b", "--fail-under", "recall=0.1", "--allow-unmeasured"
    )
    assert allowed.exit_code == 0, allowed.output


def test_the_resume_hint_drops_overwrite(monkeypatch: pytest.MonkeyPatch) -> None:
    # --overwrite would wipe the finished records the hint promises to resume
    argv = ["citegraph", "kalma", "score", "a b.jsonl", "--overwrite", "--out", "run"]
    monkeypatch.setattr(sys, "argv", argv)
    assert resume_command() == "citegraph kalma score 'a b.jsonl' --out run"


def test_fail_under_on_a_caqa_judge_run(tmp_path: Path, data_dir: Path) -> None:
    build = invoke(
        "caqa", "build", "--questions", "simplequestions-wd", "--limit", "16",
        "--splits", "0.3,0.2,0.5", "--data-dir", data_dir, "--out", tmp_path / "b",
    )  # fmt: skip
    assert build.exit_code == 0, build.output
    judge = ["caqa", "judge", tmp_path / "b" / "test.jsonl", "--evaluator", "nli/lexical"]
    judge += ["--bootstrap", "0", "--out", tmp_path / "j"]
    # a micro-F1 below 1 falls short of 1, naming the figure (above 1 is refused at start)
    assert invoke(*judge, "--fail-under", "micro_f1=1.01").exit_code == 2
    assert not (tmp_path / "j").exists()
    short = invoke(*judge, "--fail-under", "micro_f1=1")
    assert short.exit_code == 4, short.output
    metrics = json.loads((tmp_path / "j" / "metrics.json").read_text())
    assert metrics["micro_f1"] == metrics["n_correct"] / metrics["n_scored"] < 1  # accuracy
    assert f"fell short: micro_f1 = {metrics['micro_f1']:.4g} < 1" in short.stderr
    # a label's F1, named by its label; a label without any gold sample is unmeasured
    labels = {s["label"]: s["f1"] for s in metrics["per_label"]}
    measured = next(label for label, f1 in labels.items() if f1 is not None)
    report = invoke("runs", "report", tmp_path / "j", "--fail-under", f"{measured}.f1=0")
    assert report.exit_code == 0, report.output
    expected = f"passed: {measured}.f1 (per_label.{measured}.f1) = {labels[measured]:.4g} >= 0"
    assert expected in report.stdout
