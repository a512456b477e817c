"""``conner select`` on the first NQ items: the choice, model loading, resume, shards.

Selection, by hand, with the stubs of ``_conner_stubs`` and γ = (1, 1, 0, 1) (factuality,
relevance, informativeness; informativeness is 1 - e^-1 for any non-empty text):

- candidate 0 (seed 0) = "Dragon Ball Z is an anime.": factuality 0 for nq:0 and nq:1 (not in
  either gold passage), relevance 1: Q = 1 + 1 - e^-1;
- candidate 1 (seed 1) = K0, a stretch of nq:0's gold passage: factuality 1 for nq:0 and 0 for
  nq:1, relevance 0.25: Q = 2.25 - e^-1 (nq:0), 1.25 - e^-1 (nq:1);
- candidate 2 (seed 2): empty for nq:0 (unmeasured: no quality), a failed call for nq:1.

So nq:0 keeps candidate 1 and nq:1 keeps candidate 0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _conner_stubs import (
    StubLM,
    StubRelevance,
    SubstringNLI,
    WordCount,
    merged_metrics,
    read_records,
)
from citegraph.conner import (
    ConnerGenerateConfig,
    ConnerKnowledgeResult,
    ConnerScoreConfig,
    ConnerSelectConfig,
    select_run,
)
from citegraph.conner.score import ScoreModels
from citegraph.errors import ConfigError, ServerError
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import Runtime, read_run_info

K0 = (
    "Platform Latest version Browser support Windows XP and later Windows Server 2003 and later "
    "28.0. 0.137 Firefox"
)
INFO = 1 - math.exp(-1)


def sampler(request: ChatRequest) -> str:
    seed = request.config.seed
    if seed == 2:
        if "dragon ball" in request.messages[-1].content.lower():
            raise ServerError("scripted outage", status=503, url="mock://")
        return ""
    return "Dragon Ball Z is an anime." if seed == 0 else K0


def select_three(out: Path, data_dir: Path, **models: object) -> ConnerKnowledgeResult:
    """Select among 3 sampled candidates for nq:0 and nq:1 with gamma = (1, 1, 0, 1)."""
    return select_run(
        out,
        ConnerSelectConfig(candidates=3, weights="1,1,0,1"),  # type: ignore[arg-type]
        generate=ConnerGenerateConfig(model="mock", temperature=1.0, top_p=0.9),
        score=ConnerScoreConfig(knowledge="-"),
        data_dir=data_dir,
        model=MockChat(sampler),
        runtime=Runtime(limit=2),
        **models,
    )


def test_select_keeps_the_best_candidate(data_dir: Path, tmp_path: Path) -> None:
    score_models = ScoreModels(lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance())
    result = select_three(tmp_path / "best", data_dir, score_models=score_models)
    assert (result.n_samples, result.n_failed) == (2, 0)
    records = read_records(tmp_path / "best")
    first, second = records["nq:0"], records["nq:1"]
    assert (first["candidate"], first["text"]) == (1, K0)
    assert first["quality"] == pytest.approx(1.25 + INFO)
    assert first["qualities"] == {
        "0": pytest.approx(1 + INFO),
        "1": pytest.approx(1.25 + INFO),
        "2": None,
    }
    assert (second["candidate"], second["text"]) == (0, "Dragon Ball Z is an anime.")
    assert second["qualities"] == {"0": pytest.approx(1 + INFO), "1": pytest.approx(0.25 + INFO)}
    assert read_run_info(tmp_path / "best")["config"]["task_name"] == "conner.select"
    # only the weighted metrics were scored, on every candidate run
    scores = json.loads((tmp_path / "best/scores/c1/metrics.json").read_text())
    assert list(scores["metrics"]) == ["factuality", "relevance", "informativeness"]
    failed = read_records(tmp_path / "best/candidates/c2")["nq:1"]
    assert failed["status"] == "failed" and "scripted outage" in str(failed["error"])


def test_select_loads_the_scoring_models_once(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[tuple[str, ...]] = []
    closed: list[bool] = []

    class Counted(ScoreModels):
        async def aclose(self) -> None:
            closed.append(True)

    def load(config: ConnerScoreConfig, samples: object, options: object) -> ScoreModels:
        loads.append(config.metrics)
        return Counted(lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance())

    monkeypatch.setattr("citegraph.conner.select._task.load_score_models", load)
    select_three(tmp_path / "best", data_dir)
    assert loads == [("factuality", "relevance", "informativeness")]
    assert closed == [True]
    assert read_records(tmp_path / "best")["nq:0"]["candidate"] == 1


def test_select_refuses_settings_that_cannot_select() -> None:
    kwargs = {"score": ConnerScoreConfig(knowledge="-"), "runtime": Runtime(limit=1)}
    greedy = ConnerGenerateConfig(model="mock")
    with pytest.raises(ConfigError, match="greedy"):
        select_run("/nonexistent", ConnerSelectConfig(), generate=greedy, **kwargs)
    sampled = ConnerGenerateConfig(model="mock", temperature=1.0)
    with pytest.raises(ConfigError, match="--paragraph"):
        select_run("/nonexistent", ConnerSelectConfig(), generate=sampled, **kwargs)
    with pytest.raises(ConfigError, match="4 numbers"):
        ConnerSelectConfig(weights="1,x,1,1")  # type: ignore[arg-type]


def test_an_item_without_any_candidate_fails_and_is_retried(data_dir: Path, tmp_path: Path) -> None:
    calls: list[int] = []

    def flaky(request: ChatRequest) -> str:
        calls.append(request.config.seed or 0)
        if "dragon ball" in request.messages[-1].content.lower() and len(calls) <= 4:
            raise ServerError("scripted outage", status=503, url="mock://")
        return "Dragon Ball Z is an anime."

    def run() -> ConnerKnowledgeResult:
        return select_run(
            tmp_path / "best",
            ConnerSelectConfig(candidates=2, weights="1,1,0,1"),  # type: ignore[arg-type]
            generate=ConnerGenerateConfig(model="mock", temperature=1.0),
            score=ConnerScoreConfig(knowledge="-"),
            data_dir=data_dir,
            model=MockChat(flaky),
            score_models=ScoreModels(lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance()),
            runtime=Runtime(limit=2),
        )

    first = run()
    assert (first.n_samples, first.n_failed) == (2, 1)
    failed = read_records(tmp_path / "best")["nq:1"]
    assert failed["status"] == "failed"
    assert str(failed["error"]).startswith("no candidate: knowledge generation failed: ")
    assert "scripted outage" in str(failed["error"])
    second = run()  # the failed generations are tried again, rescored, and all reselected
    assert (second.n_samples, second.n_failed) == (2, 0)
    assert len(calls) == 6  # 2 candidates of nq:0 and nq:1, then nq:1's again
    assert read_records(tmp_path / "best")["nq:1"]["candidate"] == 0
    rescored = read_records(tmp_path / "best/scores/c1")
    assert rescored["nq:1"]["source"] is not None and len(rescored) == 2


def test_select_shards_merge_to_the_whole_run(data_dir: Path, tmp_path: Path) -> None:
    def run(out: Path, runtime: Runtime) -> None:
        select_run(
            out,
            ConnerSelectConfig(candidates=3, missing="renormalise"),
            generate=ConnerGenerateConfig(model="mock", temperature=1.0, top_p=0.9),
            score=ConnerScoreConfig(knowledge="-"),
            data_dir=data_dir,
            model=MockChat(sampler),
            score_models=ScoreModels(
                lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance(), paragraph=WordCount()
            ),
            runtime=runtime,
        )

    whole, merged = merged_metrics("conner.select", run, tmp_path, limit=5)
    assert merged == whole and whole["n_samples"] == 5
    # one canonical file in item order either way (conner score fingerprints it)
    selected = (tmp_path / "whole" / "samples.jsonl").read_bytes()
    assert (tmp_path / "merged" / "samples.jsonl").read_bytes() == selected
    assert set(read_records(tmp_path / "shard1" / "candidates" / "c0")) == {"nq:1", "nq:3"}
