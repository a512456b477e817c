"""Failed is not zero (issue 27): a failed model call is a failed item with the model's
failure reason, left out of every KaLMA metric and counted in ``unmeasured`` and ``n_failed``;
never an empty answer scored 0 ("answer cites no KG triple"), in paper and reference mode, in
``kalma run``, ``kalma score`` and ``runs export``."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from citegraph.kalma import KalmaRunConfig, KalmaScoreConfig, run_kalma, score_answers
from citegraph.kalma.view._presenter import KalmaPresenter
from citegraph.runs import Runtime, export_run
from citegraph.testing import FakeOpenAIServer, FakeReply

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))
METRICS = ("correctness", "precision", "recall", "f1", "alignment", "na_precision", "na_recall")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_kalma_score_leaves_failed_answers_out_with_their_reason(
    tmp_path: Path, data_dir: Path, mode: str
) -> None:
    demo = _lines(DEMO / "answers.jsonl")
    ok, failed = demo[:2], demo[2:]
    answers = tmp_path / "answers.jsonl"
    rows = ok + [
        {"id": a["id"], "answer": "", "status": "failed", "error": "ClientError: HTTP 500: boom"}
        for a in failed
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (tmp_path / "ok.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ok), "utf-8")
    config = KalmaScoreConfig(mode=mode)
    gold = DEMO / "gold.jsonl"
    mixed = score_answers(answers, tmp_path / "mixed", config, gold_path=gold, data_dir=data_dir)
    alone = score_answers(
        tmp_path / "ok.jsonl", tmp_path / "alone", config, gold_path=gold, data_dir=data_dir
    )
    m = mixed.metrics
    assert m["n_answers"] == 2 and m["n_failed"] == 2 and "n_failed" not in alone.metrics
    reason = "item failed, not scored: the answer's model call failed: ClientError: HTTP 500: boom"
    for name in METRICS:
        assert m["unmeasured"][name][reason] == 2, name
        assert m[name] == alone.metrics[name], name  # the metrics are over the 2 answers only
    # by hand: correctness and precision over the 2 scored answers' citations
    lines = _lines(tmp_path / "mixed" / "samples.jsonl")
    records = [r for r in lines if r.get("status") != "failed"]
    cited = [r["citations"] for r in records]
    assert len(cited) == 2 and sum(c["n_citations"] for c in cited) > 0
    n_cit = sum(c["n_citations"] for c in cited)
    assert m["correctness"]["micro"] == pytest.approx(sum(c["n_correct"] for c in cited) / n_cit)
    assert m["precision"]["micro"] == pytest.approx(sum(c["n_precise"] for c in cited) / n_cit)
    failed_records = [r for r in lines if r not in records]
    assert {r["id"] for r in failed_records} == {a["id"] for a in failed}
    assert all("citations" not in r and "boom" in r["error"] for r in failed_records)


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_kalma_run_failed_calls_are_not_empty_answers(
    tmp_path: Path, data_dir: Path, mode: str
) -> None:
    answer = "Stephen Crane was born in Newark [Q206534, place of birth: Newark]."
    calls = {"n": 0}

    def reply(body: object) -> FakeReply:  # the 1st and 3rd questions fail
        calls["n"] += 1
        if calls["n"] % 2:
            return FakeReply(status=400, text="model refused")
        return FakeReply(text=answer)

    with FakeOpenAIServer(reply=reply) as server:
        result = run_kalma(
            tmp_path / "run",
            KalmaRunConfig(model="vllm/fake", base_url=server.base_url, mode=mode),
            runtime=Runtime(limit=4, concurrency=1),
            data_dir=data_dir,
        )
    m = result.metrics
    records = _lines(tmp_path / "run" / "samples.jsonl")
    failed = [r for r in records if r.get("status") == "failed"]
    assert len(failed) == 2 and m["n_failed"] == 2 and m["n_answers"] == 2
    for record in failed:  # no scores of an empty answer, the model's reason kept
        assert "model refused" in record["error"]
        assert not {"citations", "alignment", "na", "unmeasured"} & set(record)
    for name in METRICS:
        reasons = m["unmeasured"][name]
        failing = {k: v for k, v in reasons.items() if k.startswith("item failed, not scored")}
        assert sum(failing.values()) == 2 and "model refused" in next(iter(failing)), name
        assert not any("cites no KG triple" in k and v == 4 for k, v in reasons.items())
    # by hand: the 2 scored answers (questions 2 and 4, about other people than Crane) cite
    # 1 triple each, in neither KG given: correctness 0/2, over those 2 answers only
    assert m["n_citations"] == 2 and m["correctness"]["micro"] == 0.0
    assert m["details"]["correctness"]["n"] == 2
    # the generation summary: 4 questions, 2 failed, none empty (a failed call is not an empty
    # answer there either)
    generation = m["generation"]
    assert (generation["n_questions"], generation["n_failed"], generation["n_empty"]) == (4, 2, 0)
    assert generation["empty_reasons"] == {}
    # the viewer tags a failed item failed, not empty nor uncited
    tags = {r["id"]: KalmaPresenter.summary(r).tags for r in records}
    assert all(tags[r["id"]] == ["failed"] for r in failed)
    # the export: a failed row is unmeasured by every metric, with the reason
    written = export_run(tmp_path / "run", tmp_path / "export", "jsonl")
    rows = _lines(written["samples"])
    for row in rows:
        if row.get("status") == "failed":
            assert row["unmeasured_correctness"].startswith("item failed, not scored")
            assert row["n_citations"] is None
