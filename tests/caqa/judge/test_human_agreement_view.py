"""``caqa judge --human``: the agreement with human labels is on the viewer's run page and in the
HTML report (issue 38, item 3), not only in ``metrics.json``.

Data and replies of test_judge_run: the evaluator answers the gold label for every sample; gold
and human labels agree on 6 of 8 samples (s2 and s3 differ), marginals gold 2/2/2/2, human
2/1/1/4: p_e = (4 + 2 + 2 + 8) / 64 = 1/4, kappa = (3/4 - 1/4) / (3/4) = 2/3; the evaluator's
micro-F1 on the human labels is 6/8.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.caqa.judge.test_judge_run import GOLD, HUMAN, split  # noqa: F401 (fixture)

from citegraph.caqa import CaqaJudgeConfig, LLMJudge, judge_caqa
from citegraph.models import MockChat
from citegraph.runs import Runtime, read_run_info, task_type
from citegraph.viewer import write_report


def _run(tmp_path: Path, split: Path) -> Path:  # noqa: F811
    human = tmp_path / "human.csv"
    human.write_text(HUMAN)
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0, human=str(human))
    judge = LLMJudge(
        MockChat(lambda request: GOLD[int(request.messages[-1].content.split("cite-")[1][0])])
    )
    out = tmp_path / "runs" / "judge"
    judge_caqa(out, config, evaluator=judge, runtime=Runtime(cache=False))
    return out


@pytest.mark.needs("starlette", "jinja2")  # the viewer and the HTML report
def test_human_agreement_rows_in_viewer_and_report(tmp_path: Path, split: Path) -> None:  # noqa: F811
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    out = _run(tmp_path, split)
    info = read_run_info(out)
    metrics = json.loads((out / "metrics.json").read_text())
    rows = {r.name: r for r in task_type(info["task"]).presenter.metrics(metrics, info).metrics}
    assert rows["kappa gold vs human"].value == pytest.approx(2 / 3)
    assert rows["kappa gold vs human"].n_measured == 8
    assert rows["micro-F1 on human labels"].value == pytest.approx(6 / 8)
    html = write_report([out], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "kappa gold vs human" in html and "micro-F1 on human labels" in html
    client = TestClient(create_app([tmp_path / "runs"], warm=False), base_url="http://127.0.0.1")
    page = client.get("/run", params={"run": "0/judge"})
    assert page.status_code == 200
    assert "kappa gold vs human" in page.text and "micro-F1 on human labels" in page.text
