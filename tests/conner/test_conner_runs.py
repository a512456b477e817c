"""``conner generate`` / ``retrieve`` / ``select`` / ``correlate`` on the first NQ items.

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
from _conner_stubs import StubLM, StubRelevance, SubstringNLI
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.conner import (
    AcquireResult,
    ConnerGenerateConfig,
    ConnerRetrieveConfig,
    ConnerScoreConfig,
    ConnerSelectConfig,
    ScoreModels,
    correlate_runs,
    generate_run,
    retrieve_run,
    select_run,
    task_corpus,
)
from citegraph.errors import ConfigError, ServerError
from citegraph.models import MockChat
from citegraph.models._chat_types import ChatRequest

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


def read_records(path: Path) -> dict[str, dict[str, object]]:
    lines = (path / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def select_three(out: Path, data_dir: Path, **models: object) -> AcquireResult:
    """Select among 3 sampled candidates for nq:0 and nq:1 with gamma = (1, 1, 0, 1)."""
    return select_run(
        out,
        ConnerSelectConfig(candidates=3, weights="1,1,0,1"),  # type: ignore[arg-type]
        generate=ConnerGenerateConfig(model="mock", temperature=1.0, top_p=0.9),
        score=ConnerScoreConfig(knowledge="-"),
        data_dir=data_dir,
        limit=2,
        model=MockChat(sampler),
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

    def load(config: ConnerScoreConfig, samples: object, **_: object) -> ScoreModels:
        loads.append(config.metrics)
        return Counted(lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance())

    monkeypatch.setattr("citegraph.conner._select_run.load_score_models", load)
    select_three(tmp_path / "best", data_dir)
    assert loads == [("factuality", "relevance", "informativeness")]
    assert closed == [True]
    assert read_records(tmp_path / "best")["nq:0"]["candidate"] == 1


def test_select_refuses_settings_that_cannot_select() -> None:
    kwargs = {"score": ConnerScoreConfig(knowledge="-"), "limit": 1}
    greedy = ConnerGenerateConfig(model="mock")
    with pytest.raises(ConfigError, match="greedy"):
        select_run("/nonexistent", ConnerSelectConfig(), generate=greedy, **kwargs)
    sampled = ConnerGenerateConfig(model="mock", temperature=1.0)
    with pytest.raises(ConfigError, match="--paragraph"):
        select_run("/nonexistent", ConnerSelectConfig(), generate=sampled, **kwargs)
    with pytest.raises(ConfigError, match="4 numbers"):
        ConnerSelectConfig(weights="1,x,1,1")  # type: ignore[arg-type]


def test_generate_run_resumes_and_retries_failures(data_dir: Path, tmp_path: Path) -> None:
    calls: list[str] = []

    def reply(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        calls.append(prompt)
        if "dragon ball" in prompt.lower() and len(calls) < 4:
            raise ServerError("down", status=503, url="mock://")
        return "  Some knowledge.\nTopic: next example"

    config = ConnerGenerateConfig(model="mock")
    first = generate_run(
        tmp_path / "gen", config, data_dir=data_dir, model=MockChat(reply), limit=3
    )
    assert (first.n_samples, first.n_failed) == (3, 1)
    assert first.metrics["mean_words"] == 2.0
    second = generate_run(
        tmp_path / "gen", config, data_dir=data_dir, model=MockChat(reply), limit=3
    )
    assert (second.n_failed, second.n_resumed) == (0, 2)
    assert len(calls) == 4  # three first, then only the failed one again
    record = read_records(tmp_path / "gen")["nq:1"]
    assert record["text"] == "Some knowledge."
    assert str(record["source"]).startswith("llm:mock/mock:conner-v1/")
    assert record["raw"] == "  Some knowledge.\nTopic: next example"


def small_corpus(data_dir: Path, tmp_path: Path) -> Path:
    """The gold passages of nq:0..9 as a corpus file (embedding all 500 is slow on a CPU)."""
    from citegraph.datasets import load_conner

    rows = [{"id": s.id, "text": s.gold_knowledge} for s in load_conner("nq", data_dir)[:10]]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_retrieve_run_and_the_task_corpus(data_dir: Path, tmp_path: Path) -> None:
    from citegraph.datasets import load_conner

    config = ConnerRetrieveConfig(corpus=str(small_corpus(data_dir, tmp_path)), task="nq", k=1)
    result = retrieve_run(tmp_path / "ret", config, data_dir=data_dir, limit=5)
    assert (result.n_samples, result.n_failed) == (5, 0)
    records = read_records(tmp_path / "ret")
    gold = {s.id: s.gold_knowledge for s in load_conner("nq", data_dir)[:5]}
    assert all(records[i]["text"] == gold[i] for i in gold)  # each question finds its passage
    again = retrieve_run(tmp_path / "ret", config, data_dir=data_dir, limit=5)
    assert again.n_resumed == 5
    wow = load_conner("wow", data_dir, split="seen")
    corpus = task_corpus(wow)
    # 500 turns, 30 without gold knowledge; the rest are distinct sentences but for repeats
    assert len(corpus.texts) == len({s.gold_knowledge for s in wow} - {"no_passages_used"})
    assert "no_passages_used" not in corpus.texts and corpus.ids[0] == "wow-seen:0"


def write_score_run(path: Path, values: dict[str, float | None]) -> None:
    path.mkdir()
    lines = [
        json.dumps(
            {
                "id": sid,
                "status": "ok",
                "metrics": {
                    "relevance": {
                        "value": v,
                        "reason": None if v is not None else "x",
                        "model": "m",
                    }
                },
            }
        )
        for sid, v in values.items()
    ]
    (path / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_correlate_by_hand(tmp_path: Path) -> None:
    # metric 0.1..0.4 against ratings 0, 1, 0, 2: of the 5 pairs untied on the rating, 4 are
    # concordant and 1 discordant: D(metric | rating) = 3/5. Spearman: ranks (1, 2, 3, 4) vs
    # (1.5, 3, 1.5, 4): rho = 3 / sqrt(5 * 4.5). nq:4 is rated but unmeasured.
    run = tmp_path / "score"
    write_score_run(run, {"nq:0": 0.1, "nq:1": 0.2, "nq:2": 0.3, "nq:3": 0.4, "nq:4": None})
    ratings = tmp_path / "human.csv"
    ratings.write_text("id,relevance\nnq:0,0\nnq:1,1\nnq:2,0\nnq:3,2\nnq:4,1\n", encoding="utf-8")
    [rows] = correlate_runs([run], ratings).values()
    somers, rho = rows
    assert (somers.method, somers.value, somers.n, somers.n_unmeasured) == (
        "somers_d",
        pytest.approx(0.6),
        4,
        1,
    )
    assert rho.value == pytest.approx(3 / math.sqrt(22.5))

    result = CliRunner().invoke(
        main, ["conner", "correlate", str(run), "--ratings", str(ratings), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload[str(run)][0]["value"] == pytest.approx(0.6)


def test_cli_retrieve_then_score(data_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["--data-dir", str(data_dir), "--limit", "3"]
    know = tmp_path / "know"
    corpus = str(small_corpus(data_dir, tmp_path))
    result = runner.invoke(
        main, ["conner", "retrieve", "--corpus", corpus, "--out", str(know), *common]
    )
    assert result.exit_code == 0, result.output
    assert "3 knowledge texts for 3 items" in result.output
    out = tmp_path / "score"
    args = ["conner", "score", str(know), "--metrics", "factuality,relevance", "--out", str(out)]
    result = runner.invoke(main, [*args, *common])
    assert result.exit_code == 0, result.output
    assert "note (nli): lexical: a word-overlap stand-in" in result.output
    assert "note (reranker): embedding:minilm" in result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["metrics"]["factuality"]["n"] == 3
    assert metrics["setup"]["models"]["nli"] == "lexical"
    bad = runner.invoke(main, [*args, "--evidence", "corpus", "--overwrite", *common])
    assert bad.exit_code != 0 and "--corpus" in bad.output
