"""``kalma run --text-quality-human``: the judge's agreement with human scores (issue 38, 3).

Four questions (specific-0..3); the scripted judge gives every criterion of a question one
score, by question: 1, 3, 2, 4; human coherence 1, 2, 3, 4. Pairs (i < j): only (1,2) is
discordant, no ties: C = 5, D = 1, tau-b = Somers' D = 4/6; ranks differ by 1 at two places,
sum d^2 = 2: rho = 1 - 6 * 2 / (4 * 15) = 0.8.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.datasets import load_biokalma
from citegraph.errors import ConfigError
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import MockChat
from citegraph.runs import Runtime, read_run_info

JUDGE_SCORES = ["1", "3", "2", "4"]


def test_run_agreement_with_human_scores(data_dir: Path, tmp_path: Path) -> None:
    questions = [s.question for s in load_biokalma("specific", data_dir)[:4]]

    def judge_reply(request) -> str:  # type: ignore[no-untyped-def]
        user = request.messages[-1].content
        return next(s for q, s in zip(questions, JUDGE_SCORES, strict=True) if q in user)

    human = tmp_path / "human.jsonl"
    human.write_text(
        "".join(f'{{"id": "specific-{i}", "coherence": {i + 1}}}\n' for i in range(4))
        + '{"id": "specific-7", "coherence": 3}\n'  # beyond --limit: not in the run's records
    )
    config = KalmaRunConfig(model="mock", text_quality="mock/judge", text_quality_human=str(human))
    result = run_kalma(
        tmp_path / "run",
        config,
        runtime=Runtime(limit=4),
        data_dir=data_dir,
        model=MockChat("I do not know [NA]."),
        judge=MockChat(judge_reply, name="mock/judge"),
    )
    coherence = result.metrics["text_quality_agreement"]["coherence"]
    assert coherence["n"] == 4 and coherence["n_unmeasured"] == 0
    assert coherence["spearman"]["value"] == pytest.approx(0.8)
    assert coherence["kendall_tau_b"]["value"] == pytest.approx(4 / 6)
    assert coherence["somers_d"]["value"] == pytest.approx(4 / 6)
    assert coherence["somers_d"]["ci"]["n_resamples"] == 1000
    # the other criteria were judged but people did not score them: no block for them
    assert list(result.metrics["text_quality_agreement"]) == ["coherence"]
    assert result.metrics["text_quality"]["coherence"]["mean"] == pytest.approx(2.5)
    info = read_run_info(tmp_path / "run")
    assert info["config"]["text_quality_human"] == str(human)
    assert "text_quality_human" in info["data"]


def test_unset_human_file_keeps_the_run_identity() -> None:
    assert "text_quality_human" not in KalmaRunConfig(model="mock").identity()
    assert (
        "text_quality_human"
        in KalmaRunConfig(
            model="mock", text_quality="mock/j", text_quality_human="h.jsonl"
        ).identity()
    )


def test_human_scores_need_a_judge(tmp_path: Path, data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="--text-quality MODEL"):
        run_kalma(
            tmp_path / "run",
            KalmaRunConfig(model="mock", text_quality_human="h.jsonl"),
            data_dir=data_dir,
            model=MockChat("x"),
        )


def test_cli_run_takes_the_human_file(data_dir: Path, tmp_path: Path) -> None:
    """The mock judge's fixed reply has no score: both humanly scored answers are left out as
    judge-unmeasured, and the summary says so."""
    from click.testing import CliRunner

    from citegraph.cli import main

    human = tmp_path / "human.jsonl"
    human.write_text('{"id": "specific-0", "fluency": 4}\n{"id": "specific-1", "fluency": 2}\n')
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        [
            "kalma", "run", "--model", "mock", "--limit", "2", "--data-dir", str(data_dir),
            "--text-quality", "mock/judge", "--text-quality-human", str(human), "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Text-quality judge vs human scores" in result.output
    import json

    fluency = json.loads((out / "metrics.json").read_text())["text_quality_agreement"]["fluency"]
    assert fluency["n"] == 0
    assert fluency["unmeasured_reasons"] == {
        "judge score unmeasured: no integer score in the reply": 2
    }
