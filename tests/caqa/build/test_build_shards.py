"""``caqa build`` on the engine: shards merged with ``runs merge`` are split by question over all
the questions and write the unsharded build's files; the identity is the one older builds were
written with (so they resume)."""

from __future__ import annotations

import json
from pathlib import Path

from citegraph.caqa import CaqaBuildConfig, build_caqa
from citegraph.runs import RunDir, Runtime, finalize, merge_runs, read_run_info, task_type

FILES = ("train.jsonl", "dev.jsonl", "test.jsonl", "stats.json", "stats.md")
LIVE_ONLY = ("inputs", "seconds")


def test_build_shards_merge_to_the_unsharded_build(tmp_path: Path, data_dir: Path) -> None:
    config = CaqaBuildConfig(questions="simplequestions-wd", splits="0.4,0.2,0.4")
    whole = build_caqa(tmp_path / "whole", config, data_dir=data_dir, runtime=Runtime(limit=30))
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    built = [
        build_caqa(shard, config, data_dir=data_dir, runtime=Runtime(limit=30, shard=f"{i}/2"))
        for i, shard in enumerate(shards)
    ]
    assert sum(b.n_questions for b in built) == whole.n_questions == 30
    assert sum(b.n_samples for b in built) == whole.n_samples
    merged = merge_runs(shards, tmp_path / "merged")
    metrics = finalize(task_type("caqa.build"), merged)
    for name in FILES:
        merged_file = (tmp_path / "merged" / name).read_text(encoding="utf-8")
        assert merged_file == (tmp_path / "whole" / name).read_text(encoding="utf-8"), name
    assert metrics == {k: v for k, v in whole.metrics.items() if k not in LIVE_ONLY}
    assert whole.metrics["inputs"]["n_questions_built"] == 30


def test_build_report_recomputes_files_and_keeps_the_identity(
    tmp_path: Path, data_dir: Path
) -> None:
    config = CaqaBuildConfig(questions="pathquestion-2h")
    out = tmp_path / "pq"
    result = build_caqa(out, config, data_dir=data_dir, runtime=Runtime(limit=12))
    info = read_run_info(out)
    assert info["config"] == config.model_dump(mode="json") | {
        "task": "caqa.build",
        "textualiser": "template",
        "text_version": "caqa-template-v1",
    }
    before = {name: (out / name).read_text(encoding="utf-8") for name in FILES}
    for name in FILES:
        (out / name).unlink()
    metrics = finalize(task_type("caqa.build"), RunDir.open(out, info["config"], data=info["data"]))
    assert {name: (out / name).read_text(encoding="utf-8") for name in FILES} == before
    assert metrics == {k: v for k, v in result.metrics.items() if k not in LIVE_ONLY}
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8")) == metrics
