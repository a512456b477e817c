"""``kalma run`` end to end on real BioKaLMA questions with the scripted ``mock`` provider.

The scripted model plays a well-behaved attributed LM: for specific-0 (Stephen Crane) it cites
two KG facts and one fact that is not in the KG; when the KG it is given lacks
``movement: literary realism`` it marks that claim [NA] instead. Expected numbers are by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, ServerError
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.kalma.run import finalize_run
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import RunDir, Runtime, finalize, merge_runs, read_run_info, task_type

CITED = (
    "Stephen Crane was born in Newark [Q206534, place of birth: Newark]. "
    "He belonged to the literary realism movement [Q206534, movement: literary realism]. "
    "He loved sailing [Q206534, hobby: sailing]."
)
WITH_NA = (
    "Stephen Crane was born in Newark [Q206534, place of birth: Newark]. "
    "He belonged to the literary realism movement [NA]."
)


def script(request: ChatRequest) -> str:
    user = request.messages[-1].content
    if "{name: Stephen Crane," not in user:  # his graph, not just his name in the question
        return "I cannot say [NA]."
    return CITED if "movement: literary realism" in user else WITH_NA


def _samples(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def test_one_question_scored_by_hand(data_dir: Path, tmp_path: Path) -> None:
    model = MockChat(script)
    config = KalmaRunConfig(model="mock", gold="question-match")
    result = run_kalma(
        tmp_path / "run", config, runtime=Runtime(limit=1), data_dir=data_dir, model=model
    )
    m = result.metrics
    # 3 citations, 2 in Stephen Crane's graph -> correctness 2/3.
    assert m["correctness"]["micro"] == pytest.approx(2 / 3)
    # question-match gold = {movement: literary realism}: 1 precise citation of 3, gold hit 1/1.
    assert m["precision"]["micro"] == pytest.approx(1 / 3)
    assert m["recall"]["micro"] == pytest.approx(1.0)
    assert m["f1"]["micro"] == pytest.approx(0.5)
    assert m["setup"]["gold_note"].startswith("approximate gold")
    assert m["setup"]["prompt"] == "kalma-table13-v1"
    assert m["generation"]["n_failed"] == 0
    # The prompt held the Table 13 demo and the question's KG.
    [request] = model.requests
    assert request.config.temperature == 0.5 and request.config.seed == 0
    assert "{name: Stephen Crane," in request.messages[-1].content
    [record] = _samples(tmp_path / "run")
    assert record["status"] == "ok" and record["graph_qids"] == ["Q206534"]
    info = read_run_info(tmp_path / "run")
    assert info["config"]["model_name"] == "mock/mock" and info["runtime"]["limit"] == 1


def test_conscious_incompetence_removes_the_gold_fact(data_dir: Path, tmp_path: Path) -> None:
    model = MockChat(script)
    config = KalmaRunConfig(model="mock", gold="question-match", remove_knowledge=1)
    result = run_kalma(
        tmp_path / "na", config, runtime=Runtime(limit=1), data_dir=data_dir, model=model
    )
    [record] = _samples(tmp_path / "na")
    assert record["removed"] == [["Q206534", "movement", "literary realism"]]
    assert ["Q206534", "movement", "literary realism"] not in record["kg_given"]
    assert "movement: literary realism" not in model.requests[0].messages[-1].content
    m = result.metrics
    # One [NA] sentence, it states the one absent fact: [NA] precision 1/1, recall 1/1.
    assert m["na_precision"]["micro"] == pytest.approx(1.0)
    assert m["na_recall"]["micro"] == pytest.approx(1.0)
    assert m["experiment"]["n_facts_removed"] == 1
    # 1 citation (place of birth), correct; it is not the gold fact -> precision 0, recall 0.
    assert m["correctness"]["micro"] == pytest.approx(1.0)
    assert m["precision"]["micro"] == pytest.approx(0.0)
    assert m["recall"]["micro"] == pytest.approx(0.0)


def test_retrieval_ablation_replaces_graphs(data_dir: Path, tmp_path: Path) -> None:
    config = KalmaRunConfig(model="mock", retrieval_accuracy=0)
    result = run_kalma(
        tmp_path / "abl",
        config,
        runtime=Runtime(limit=3),
        data_dir=data_dir,
        model=MockChat(script),
    )
    records = _samples(tmp_path / "abl")
    assert all(r["replaced_graphs"] == r["graph_qids"] for r in records)
    assert result.metrics["experiment"]["retrieval_accuracy_achieved"] == 0.0
    # Stephen Crane's graph is gone, so the script never sees him and answers [NA] only.
    assert result.metrics["n_citations"] == 0


def test_resume_skips_done_and_retries_failed(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "resume"
    flaky = MockChat(script, fail_times=1)
    runtime = Runtime(limit=3, concurrency=1)
    first = run_kalma(
        out, KalmaRunConfig(model="mock"), runtime=runtime, data_dir=data_dir, model=flaky
    )
    assert first.n_failed == 1
    failed = [r for r in _samples(out) if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["empty_reason"].startswith("generation failed: Server")
    assert first.metrics["generation"]["n_failed"] == 1

    again = MockChat(script)
    second = run_kalma(
        out, KalmaRunConfig(model="mock"), runtime=runtime, data_dir=data_dir, model=again
    )
    assert again.calls == 1  # only the failed question is asked again
    assert second.n_resumed == 2 and second.n_failed == 0
    run = RunDir.open(out, read_run_info(out)["config"], data=read_run_info(out)["data"])
    assert sorted(r["id"] for r in run.records) == ["specific-0", "specific-1", "specific-2"]
    assert all(r["status"] == "ok" for r in run.records)

    third = MockChat(script)
    run_kalma(
        out,
        KalmaRunConfig(model="mock"),
        runtime=Runtime(limit=3, concurrency=3),
        data_dir=data_dir,
        model=third,
    )
    assert third.calls == 0  # runtime settings do not change the run's identity


def test_other_config_is_refused(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    runtime = Runtime(limit=1)
    run_kalma(
        out,
        KalmaRunConfig(model="mock"),
        runtime=runtime,
        data_dir=data_dir,
        model=MockChat(script),
    )
    with pytest.raises(ConfigError, match="temperature"):
        run_kalma(
            out,
            KalmaRunConfig(model="mock", temperature=0.9),
            runtime=runtime,
            data_dir=data_dir,
            model=MockChat(script),
        )


def test_shards_merge_to_the_single_run(data_dir: Path, tmp_path: Path) -> None:
    config = KalmaRunConfig(model="mock", gold="question-match")
    whole = run_kalma(
        tmp_path / "whole",
        config,
        runtime=Runtime(limit=5),
        data_dir=data_dir,
        model=MockChat(script),
    )
    shards = []
    for i in range(2):
        out = tmp_path / f"shard{i}"
        run_kalma(
            out,
            config,
            runtime=Runtime(limit=5, shard=f"{i}/2"),
            data_dir=data_dir,
            model=MockChat(script),
        )
        shards.append(out)
    assert [r["index"] for r in _samples(shards[0])] == [0, 2, 4]
    merged = merge_runs(shards, tmp_path / "merged")
    metrics = finalize(task_type("kalma.run"), merged)
    # Everything but the measured latency is the single run's, and finalize_run agrees.
    for m in (metrics, whole.metrics):
        m["generation"].pop("mean_latency_s")
    assert metrics == whole.metrics
    assert metrics["n_answers"] == 5
    assert finalize_run(merged)["correctness"] == whole.metrics["correctness"]

    other = tmp_path / "other"
    run_kalma(
        other,
        KalmaRunConfig(model="mock", seed=1),
        runtime=Runtime(limit=1),
        data_dir=data_dir,
        model=MockChat(script),
    )
    with pytest.raises(ConfigError, match="another run"):
        merge_runs([shards[0], other], tmp_path / "bad")


def test_config_checks() -> None:
    with pytest.raises(ConfigError, match="--gold"):
        KalmaRunConfig(remove_knowledge=1)
    with pytest.raises(ConfigError, match="--retrieval dataset"):
        KalmaRunConfig(retrieval="ner", retrieval_accuracy=80)
    with pytest.raises(ConfigError, match="i/N"):
        Runtime(shard="2").shard_parts()
    with pytest.raises(ConfigError, match="0 <= i < N"):
        Runtime(shard="2/2").shard_parts()


def test_model_failure_error_is_recorded_not_raised(data_dir: Path, tmp_path: Path) -> None:
    down = MockChat(script, fail_times=10, error=ServerError("503 from server", status=503))
    result = run_kalma(
        tmp_path / "down",
        KalmaRunConfig(model="mock"),
        runtime=Runtime(limit=2),
        data_dir=data_dir,
        model=down,
    )
    assert result.n_failed == 2
    # A failed call is failed, not an empty answer (issue 27): its reason is kept as such.
    generation = result.metrics["generation"]
    assert generation["empty_reasons"] == {} and generation["n_empty"] == 0
    assert generation["failure_reasons"] == {"generation failed: ServerError: 503 from server": 2}


@pytest.mark.needs("spacy")
def test_ner_retrieval_run_reports_retrieval_accuracy(data_dir: Path, tmp_path: Path) -> None:
    result = run_kalma(
        tmp_path / "ner",
        KalmaRunConfig(model="mock", retrieval="ner"),
        runtime=Runtime(limit=2),
        data_dir=data_dir,
        model=MockChat(script),
    )
    records = _samples(tmp_path / "ner")
    assert records[0]["retrieval"]["qids"] == ["Q206534"]  # Stephen Crane, by spaCy + lookup
    r = result.metrics["retrieval"]
    hits = sum(len(set(x["retrieval"]["qids"]) & set(x["retrieval"]["gold_qids"])) for x in records)
    assert r["n_correct"] == hits and r["n_questions"] == 2
    assert "kg" in read_run_info(tmp_path / "ner")["data"]


def test_text_quality_sample(data_dir: Path, tmp_path: Path) -> None:
    judge = MockChat("4", name="mock/judge")
    config = KalmaRunConfig(
        model="mock", text_quality="mock/judge", text_quality_sample=2, mode="reference"
    )
    result = run_kalma(
        tmp_path / "tq",
        config,
        runtime=Runtime(limit=4),
        data_dir=data_dir,
        model=MockChat(script),
        judge=judge,
    )
    judged = [r["id"] for r in _samples(tmp_path / "tq") if r.get("text_quality")]
    # Reference mode: the first 2 questions of the split that have a KG (specific-0 and -1 do).
    assert sorted(judged) == ["specific-0", "specific-1"]
    assert judge.calls == 2 * 4  # four criteria per judged answer
    assert result.metrics["text_quality"]["coherence"]["mean"] == 4.0


class _CountingRecords(list):  # type: ignore[type-arg]
    """A list of records that counts the passes made over it."""

    passes = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.passes += 1
        return super().__iter__()


def test_run_metrics_read_each_record_once(data_dir: Path, tmp_path: Path) -> None:
    from citegraph.kalma.run import _report

    config = KalmaRunConfig(
        model="mock",
        gold="question-match",
        remove_knowledge=1,
        text_quality="mock/judge",
        text_quality_sample=1,
        mode="reference",  # the judge sees the first question with a KG
    )
    run_kalma(
        tmp_path / "once",
        config,
        runtime=Runtime(limit=3),
        data_dir=data_dir,
        model=MockChat(script),
        judge=MockChat("4", name="mock/judge"),
    )
    run = RunDir.read(tmp_path / "once")
    records = _CountingRecords(run.records)
    metrics = _report.build_run_metrics(records, run.info)
    assert records.passes == 1
    # The run's own sections see all they need of each record (RUN_FIELDS).
    full = list(records)
    assert metrics["generation"] == _report._generation(full)
    assert metrics["experiment"] == _report._experiment(full, config)
    assert metrics["experiment"]["n_facts_removed"] >= 1
    assert metrics["text_quality"] == _report.text_quality_block(full) is not None
    assert metrics["n_answers"] == 3
