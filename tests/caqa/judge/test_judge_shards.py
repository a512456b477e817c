"""``caqa judge`` on the engine: shards merged with ``runs merge`` give the unsharded run's
metrics and report (bootstrap intervals included), ``runs report`` reproduces a run's files, and
the run's identity is the one older runs were written with (so they resume)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from citegraph.caqa import (
    CaqaJudgeConfig,
    CaqaSample,
    EvaluatorReport,
    LLMJudge,
    judge_caqa,
    write_samples,
)
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import RunDir, Runtime, finalize, merge_runs, read_run_info, task_type

LABELS = ("supportive", "insufficient", "contradictory", "irrelevant")
#: The judge's reply to citation i (cycling): right, wrong, unparseable, negated.
REPLIES = ("Supportive", "Irrelevant", "I cannot tell.", "Not supportive: it is contradictory.")


def _reply(request: ChatRequest) -> str:
    index = int(request.messages[-1].content.split("cite-")[1].split()[0].rstrip("."))
    return REPLIES[(index * 7) % len(REPLIES)]


@pytest.fixture()
def split(tmp_path: Path) -> Path:
    samples = [
        CaqaSample(
            id=f"q{i}:{LABELS[i % 4]}",
            question=f"Question {i}?",
            answer=f"Answer {i}.",
            citation=f"cite-{i}",
            label=LABELS[i % 4],
            complexity=("single", "union", "concatenation", "intersection")[i // 4 % 4],
            source="hand",
            group=f"g{i // 4}",
        )
        for i in range(30)
    ]
    path = tmp_path / "test.jsonl"
    write_samples(path, samples)
    return path


def _judge(out: Path, config: CaqaJudgeConfig, runtime: Runtime) -> EvaluatorReport:
    return judge_caqa(out, config, evaluator=LLMJudge(MockChat(_reply)), runtime=runtime).report


@pytest.mark.parametrize("extraction", ["paper", "reference"])
def test_judge_shards_merge_to_the_unsharded_metrics(
    tmp_path: Path, split: Path, extraction: str
) -> None:
    config = CaqaJudgeConfig(
        data=str(split),
        evaluator="mock",
        extraction=extraction,
        bootstrap=200,  # type: ignore[arg-type]
    )
    whole = tmp_path / "whole"
    judge_caqa(whole, config, evaluator=LLMJudge(MockChat(_reply)), runtime=Runtime(batch_size=4))
    shards = [tmp_path / f"shard{i}" for i in range(3)]
    for i, shard in enumerate(shards):
        # another batch size per shard: batching is not part of the run
        runtime = Runtime(shard=f"{i}/3", batch_size=i + 1, concurrency=2)
        judge_caqa(shard, config, evaluator=LLMJudge(MockChat(_reply)), runtime=runtime)
    merged = merge_runs(list(reversed(shards)), tmp_path / "merged")
    metrics = finalize(task_type("caqa.judge"), merged)
    expected = json.loads((whole / "metrics.json").read_text(encoding="utf-8"))
    assert metrics == expected
    assert metrics["micro_f1_ci"] is not None and metrics["n"] == 30
    assert (tmp_path / "merged" / "report.md").read_text() == (whole / "report.md").read_text()


def test_judge_report_recomputes_files_and_keeps_the_identity(tmp_path: Path, split: Path) -> None:
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=50)
    out = tmp_path / "run"
    _judge(out, config, Runtime(limit=20))
    info = read_run_info(out)
    # the identity older runs were written with: the config, the task, the evaluator
    assert info["config"] == config.model_dump(mode="json") | {
        "task": "caqa.judge",
        "evaluator_name": "llm:mock/mock:caqa-table11-gpt-v1",
        "label_set": "four",
    }
    assert info["task"] == "caqa.judge"
    live = (out / "metrics.json").read_text(encoding="utf-8")
    report = (out / "report.md").read_text(encoding="utf-8")
    (out / "report.md").unlink()
    run = RunDir.open(out, info["config"], data=info["data"])
    assert finalize(task_type("caqa.judge"), run) == json.loads(live)
    assert (out / "report.md").read_text(encoding="utf-8") == report


def test_judge_summary_without_the_data_file(tmp_path: Path, split: Path) -> None:
    """``runs report`` where the samples file is gone: the records' own order is used; the point
    estimates do not depend on it."""
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0)
    out = tmp_path / "run"
    live = _judge(out, config, Runtime(concurrency=3, batch_size=2))
    moved = tmp_path / "elsewhere.jsonl"
    shutil.move(split, moved)
    info = read_run_info(out)
    metrics = finalize(task_type("caqa.judge"), RunDir.open(out, info["config"], data=info["data"]))
    assert metrics["micro_f1"] == live.micro_f1
    assert metrics["confusion"] == live.confusion.model_dump(mode="json")
