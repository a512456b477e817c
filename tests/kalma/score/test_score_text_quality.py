"""``kalma score --text-quality`` and ``--text-quality-human`` (issue 38, items 2 and 3).

The demo answers (specific-0, -1, -3, -6) are judged by a scripted judge that gives every
criterion of an answer one score, chosen by who the answer is about: Crane 2, Hanfstaengl 1,
Kenny 3, and no number for Akshara Haasan (unmeasured: "no integer score in the reply").
Human coherence: specific-0 1, specific-1 2, specific-3 2, specific-6 4; fluency only for
specific-0 (5).

Coherence pairs (human, judge): (1, 2), (2, 1), (4, 3); specific-3 is left out (its judge score
is unmeasured). Pairs: (0,1) discordant, (0,2) and (1,2) concordant, no ties: tau-b = Somers'
D = (2 - 1) / 3 = 1/3; ranks (1, 2, 3) vs (2, 1, 3), sum d^2 = 2: rho = 1 - 6 * 2 / (3 * 8) =
0.5. Fluency: one pair (5, 2), every coefficient undefined; specific-1 and specific-6 were
judged without a human fluency score. Judge coherence mean (2 + 1 + 3) / 3 = 2.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import ConfigError, DataError
from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.kalma.view._presenter import KalmaPresenter
from citegraph.models import MockChat
from citegraph.runs import read_run_info
from citegraph.testing import FakeOpenAIServer
from citegraph.viewer import write_report

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))
ANSWERS = DEMO / "answers.jsonl"
BY_SUBJECT = {"Stephen Crane": "2", "Hanfstaengl": "1", "Akshara": "I cannot say.", "Kenny": "3"}
HUMAN = (
    '{"id": "specific-0", "coherence": 1, "fluency": 5}\n'
    '{"id": "specific-1", "coherence": 2}\n'
    '{"id": "specific-3", "coherence": 2}\n'
    '{"id": "specific-6", "coherence": 4}\n'
)


def _score_of(user: str) -> str:
    return next(v for k, v in BY_SUBJECT.items() if k in user)


def _judge() -> MockChat:
    return MockChat(lambda request: _score_of(request.messages[-1].content), name="mock/judge")


@pytest.fixture
def human(tmp_path: Path) -> Path:
    path = tmp_path / "human.jsonl"
    path.write_text(HUMAN)
    return path


def _check_agreement(metrics: dict[str, Any]) -> None:
    coherence = metrics["text_quality_agreement"]["coherence"]
    assert coherence["n"] == 3
    assert coherence["spearman"]["value"] == pytest.approx(0.5)
    assert coherence["kendall_tau_b"]["value"] == pytest.approx(1 / 3)
    assert coherence["somers_d"]["value"] == pytest.approx(1 / 3)
    assert coherence["unmeasured_reasons"] == {
        "judge score unmeasured: no integer score in the reply": 1
    }
    fluency = metrics["text_quality_agreement"]["fluency"]
    assert fluency["n"] == 1 and fluency["spearman"]["value"] is None
    assert fluency["unmeasured_reasons"] == {"judged, no human score": 2}
    assert set(metrics["text_quality_agreement"]) == {"coherence", "fluency"}


def test_score_judges_every_answer_and_agrees_with_people(
    tmp_path: Path, data_dir: Path, human: Path
) -> None:
    judge = _judge()
    config = KalmaScoreConfig(text_quality="mock/judge", text_quality_human=str(human))
    result = score_answers(
        ANSWERS, tmp_path / "run", config, gold_path=DEMO / "gold.jsonl", data_dir=data_dir,
        judge=judge,
    )  # fmt: skip
    assert judge.calls == 4 * 4  # four answers, four criteria
    m = result.metrics
    assert m["text_quality"]["coherence"]["mean"] == pytest.approx(2.0)
    assert m["text_quality"]["coherence"]["n_measured"] == 3
    assert m["text_quality"]["coherence"]["prompt_version"] == "kalma-geval-v1"
    assert m["config"]["judge_name"] == "mock/judge"
    _check_agreement(m)
    # the judge saw the dataset's question and the KG context as the prompt flattens it
    user = judge.requests[0].messages[-1].content
    assert user.startswith("Question: ") and "Knowledge: " in user and "[Q206534" not in user
    records = [
        json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().split("\n") if x
    ]
    assert records[0]["text_quality_human"] == {"coherence": 1.0, "fluency": 5.0}
    info = read_run_info(tmp_path / "run")
    assert info["config"]["text_quality"] == "mock/judge"
    assert info["config"]["judge_name"] == "mock/judge"
    assert "text_quality_human" in info["data"]
    # the citation scores are those of a run without the judge
    plain = score_answers(
        ANSWERS, tmp_path / "plain", gold_path=DEMO / "gold.jsonl", data_dir=data_dir
    )
    assert plain.metrics["precision"] == m["precision"]
    assert "text_quality" not in plain.metrics and "text_quality_agreement" not in plain.metrics


def test_unset_judge_fields_leave_the_run_identity_alone() -> None:
    dumped = KalmaScoreConfig().model_dump(mode="json")
    for name in ("text_quality", "text_quality_sample", "judge_base_url", "text_quality_human"):
        assert name not in dumped
    assert (
        KalmaScoreConfig(text_quality="mock/j").model_dump(mode="json")["text_quality"] == "mock/j"
    )


def test_reference_mode_judges_the_first_n_with_a_kg(tmp_path: Path, data_dir: Path) -> None:
    judge = MockChat("4", name="mock/judge")
    config = KalmaScoreConfig(text_quality="mock/judge", text_quality_sample=2, mode="reference")
    score_answers(ANSWERS, tmp_path / "run", config, data_dir=data_dir, judge=judge)
    records = [
        json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().split("\n") if x
    ]
    assert [r["id"] for r in records if r.get("text_quality")] == ["specific-0", "specific-1"]
    assert judge.calls == 2 * 4


def test_sample_is_drawn_over_the_whole_file(tmp_path: Path, data_dir: Path) -> None:
    """--limit scores the first answers only, but judges those the whole run would judge."""
    config = KalmaScoreConfig(text_quality="mock/judge", text_quality_sample=2)
    whole = score_answers(ANSWERS, tmp_path / "all", config, data_dir=data_dir, judge=_judge())
    judged = {
        json.loads(x)["id"]
        for x in (tmp_path / "all" / "samples.jsonl").read_text().split("\n")
        if x and "text_quality" in json.loads(x)
    }
    assert len(judged) == 2 and whole.metrics["text_quality"]["fluency"]["n"] == 2
    from citegraph.runs import Runtime

    score_answers(
        ANSWERS, tmp_path / "two", config, data_dir=data_dir, judge=_judge(),
        runtime=Runtime(limit=2),
    )  # fmt: skip
    first_two = [
        json.loads(x) for x in (tmp_path / "two" / "samples.jsonl").read_text().split("\n") if x
    ]
    assert {r["id"] for r in first_two if r.get("text_quality")} == judged & {
        "specific-0", "specific-1"
    }  # fmt: skip


def test_human_scores_need_a_judge(tmp_path: Path, human: Path) -> None:
    with pytest.raises(ConfigError, match="--text-quality MODEL"):
        score_answers(ANSWERS, tmp_path / "run", KalmaScoreConfig(text_quality_human=str(human)))


def test_human_ids_not_among_the_answers(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text('{"id": "specific-99", "coherence": 3}\n')
    config = KalmaScoreConfig(text_quality="mock/judge", text_quality_human=str(path))
    with pytest.raises(DataError, match="specific-99") as info:
        score_answers(ANSWERS, tmp_path / "run", config, data_dir=data_dir, judge=_judge())
    assert info.value.path == str(path)


@pytest.mark.needs("starlette", "jinja2")  # the viewer and the HTML report
def test_viewer_rows_and_html_report(tmp_path: Path, data_dir: Path, human: Path) -> None:
    config = KalmaScoreConfig(text_quality="mock/judge", text_quality_human=str(human))
    result = score_answers(ANSWERS, tmp_path / "run", config, data_dir=data_dir, judge=_judge())
    info = read_run_info(tmp_path / "run")
    rows = {r.name: r for r in KalmaPresenter.metrics(result.metrics, info).metrics}
    rho = rows["judge vs human: coherence Spearman rho"]
    assert rho.value == pytest.approx(0.5) and rho.n_measured == 3
    assert rho.model == "mock/judge"
    assert rho.unmeasured == {"judge score unmeasured: no integer score in the reply": 1}
    assert "bootstrap" in (rho.how or "") and "CI [" in (rho.how or "")
    assert rows["judge vs human: coherence Somers' D(judge | human)"].value == pytest.approx(1 / 3)
    assert rows["text quality: coherence"].value == pytest.approx(2.0)
    html = write_report([tmp_path / "run"], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "judge vs human: coherence Kendall tau-b" in html
    assert "text quality: coherence" in html


def test_cli_scores_text_quality_over_http(
    tmp_path: Path, data_dir: Path, human: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def reply(body: dict[str, Any]) -> str:
        return _score_of(body["messages"][-1]["content"])

    out = tmp_path / "run"
    with FakeOpenAIServer(reply=reply) as server:
        result = CliRunner().invoke(
            main,
            [
                "kalma", "score", str(ANSWERS), "--out", str(out), "--data-dir", str(data_dir),
                "--text-quality", "vllm/judge", "--judge-base-url", server.base_url,
                "--text-quality-human", str(human), "--bootstrap", "50",
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 4 * 4
    assert "Text quality (G-Eval, 1-5)" in result.output
    assert "Text-quality judge vs human scores" in result.output
    assert "0.500" in result.output and "0.333" in result.output  # rho, tau-b and D
    metrics = json.loads((out / "metrics.json").read_text())
    _check_agreement(metrics)
    assert metrics["text_quality_agreement"]["coherence"]["spearman"]["ci"]["n_resamples"] == 50


def test_cli_bad_human_file_is_one_clear_error(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text('{"id": "specific-0", "coherence": 7}\n')
    result = CliRunner().invoke(
        main,
        [
            "kalma", "score", str(ANSWERS), "--out", str(tmp_path / "o"), "--data-dir",
            str(data_dir), "--text-quality", "mock/judge", "--text-quality-human", str(path),
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for needle in ("human.jsonl:1", "coherence", "not a number from 1 to 5"):
        assert needle in result.output, result.output


@pytest.mark.needs("starlette", "jinja2")  # the viewer and the HTML report
def test_viewer_run_page_shows_the_agreement(tmp_path: Path, data_dir: Path, human: Path) -> None:
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    config = KalmaScoreConfig(text_quality="mock/judge", text_quality_human=str(human))
    score_answers(ANSWERS, tmp_path / "runs" / "tq", config, data_dir=data_dir, judge=_judge())
    client = TestClient(create_app([tmp_path / "runs"], warm=False), base_url="http://127.0.0.1")
    page = client.get("/run", params={"run": "0/tq"})
    assert page.status_code == 200
    assert "judge vs human: coherence Kendall tau-b" in page.text
    assert "judge vs human: fluency Spearman rho" in page.text
    assert "judged, no human score" in page.text  # the answers left out, with why
