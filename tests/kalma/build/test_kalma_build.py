"""``kalma build`` end to end with the scripted ``mock`` model and a fake perplexity.

The KG holds Orazio and Artemisia Gentileschi (facts from the paper's Table 9, trimmed), built
through the BioKaLMA loader from a file the test writes. The scripted model labels the seed with
``place of birth: Rome``, extends the paragraph by appending a sentence that cites the given fact,
and asks questions naming both people. Expected selections are computed by hand below.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.kalma.build._task import KalmaBuildConfig, build_benchmark
from citegraph.kg import load_biokalma_kg
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import Runtime, finalize, merge_runs, task_type

NO_CACHE = Runtime(cache=False)

ORAZIO = {
    "name": "Orazio Gentileschi",
    "instance of": "human",
    "occupation": "painter",
    "child": "Artemisia Gentileschi",
    "movement": "mannerism",
    "place of death": "London",
    "qid": "Q367360",
}
ARTEMISIA = {
    "name": "Artemisia Gentileschi",
    "instance of": "human",
    "occupation": "painter",
    "father": "Orazio Gentileschi",
    "movement": "Caravaggisti",
    "place of birth": "Rome",
    "notable works": "Judith Slaying Holofernes",
    "qid": "Q212657",
}
SEED = "Artemisia Gentileschi was born in Rome, the eldest child of the painter Orazio Gentileschi."
LABELLED = (
    "Artemisia Gentileschi was born in Rome [qid: Q212657, place of birth: Rome], the eldest "
    "child of the painter Orazio Gentileschi."
)
QUESTION = "How did Orazio Gentileschi shape the art of Artemisia Gentileschi?"


def script(request: ChatRequest) -> str:
    system, user = request.messages[0].content, request.messages[-1].content
    if system.startswith("Your objective is to select relevant knowledge"):
        return "Generated Answer: " + LABELLED
    if system.startswith("Your objective is to extend"):
        paragraph = user.split("\n")[0].removeprefix("answer: ")
        m = re.search(r"knowledge: \{qid: (Q\d+), name: ([^,]+), ([^:]+): (.*)\}$", user)
        assert m, user
        qid, name, relation, value = m.groups()
        return f"{paragraph} {name} had {relation} {value} [qid: {qid}, {relation}: {value}]."
    return QUESTION


async def fake_perplexity(texts):  # London reads best: lowest perplexity
    return [5.0 if "London" in t else 50.0 for t in texts]


@pytest.fixture
def kg_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "biokalma").mkdir(parents=True)
    entry = [["Who was Artemisia Gentileschi?", [ORAZIO, ARTEMISIA]]]
    (root / "biokalma" / "complex_question_graph.json").write_text(json.dumps(entry))
    (root / "biokalma" / "simple_question_graph.json").write_text(json.dumps(entry))
    return root


@pytest.fixture
def pairs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["name1", "relation", "name2", "paragraph"])
        writer.writerow(["Artemisia Gentileschi", "father", "Orazio Gentileschi", SEED])
        writer.writerow(["Orazio", "child", "Artemisia Gentileschi", ""])  # incomplete name
        writer.writerow(["Nobody Atall", "spouse", "Artemisia Gentileschi", ""])  # unresolved
    return path


def _build(out: Path, kg_dir: Path, pairs: Path, tmp_path: Path, **kw):
    kg = load_biokalma_kg(kg_dir, cache_dir=tmp_path / "kgcache")
    config = KalmaBuildConfig(pairs=str(pairs), rounds=5, alpha=0.5, **kw)
    return build_benchmark(
        out, config, kg=kg, model=MockChat(script), perplexity=fake_perplexity, runtime=NO_CACHE
    )


def test_build_selects_by_hand_computed_scores(kg_dir, pairs_csv, tmp_path) -> None:
    out = tmp_path / "bench"
    result = _build(out, kg_dir, pairs_csv, tmp_path)
    sel = result.metrics["selection"]
    assert (sel["n_pairs"], sel["n_incomplete_names"], sel["n_resolved"]) == (3, 1, 1)
    assert sel["n_unresolved"] == 1
    [item] = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert item["round1_knowledge"] == [["Q212657", "place of birth", "Rome"]]
    # N = 1 item, 2 people. Count_r = people having r: instance of, occupation, movement -> 2
    # (specificity log(2/2) = 0); child, place of death, father, notable works -> 1 (log 2).
    # Round 2: 10 candidates (all unused facts); perplexity 5 for the London text, 50 otherwise:
    # softmax(1/ppl) = e^0.2 / (e^0.2 + 9 e^0.02) = 1.2214 / (1.2214 + 9.1818) = 0.1174 for
    # London, 1.0202 / 10.4032 = 0.0981 for the others. Scores (alpha 0.5):
    # London 0.5 * 0.6931 + 0.5 * 0.1174 = 0.4053; other log-2 facts 0.3956; count-2 facts 0.0490.
    round2 = item["rounds"][1]
    assert round2["fact"]["value"] == "London"
    best = round2["candidates"][0]
    assert best["score"] == pytest.approx(0.4053, abs=1e-4)
    assert best["coherence"] == pytest.approx(0.1174, abs=1e-4)
    # Rounds 3-5 take the remaining count-1 facts (equal scores: candidate order decides).
    injected = {tuple(t) for t in item["injected"]}
    assert injected == {
        ("Q367360", "place of death", "London"),
        ("Q367360", "child", "Artemisia Gentileschi"),
        ("Q212657", "father", "Orazio Gentileschi"),
        ("Q212657", "notable works", "Judith Slaying Holofernes"),
    }
    assert len(item["knowledge"]) == 5 and all(r["fact_cited"] for r in item["rounds"][1:])
    # The dataset directory reads like BioKaLMA, with gold for both questions.
    gold = [json.loads(x) for x in (out / "gold.jsonl").read_text().splitlines()]
    assert [g["id"] for g in gold] == ["general-0", "specific-0"]
    assert gold[0]["knowledge"] == item["knowledge"]
    assert gold[0]["knowledge_injected"] == item["injected"]
    specific = json.loads((out / "complex_question_graph.json").read_text())
    assert specific[0][0] == QUESTION
    assert {e["qid"] for e in specific[0][1]} == {"Q367360", "Q212657"}
    stats = result.metrics["stats"]
    assert stats["checks"]["gold_facts_not_in_kg"] == []
    assert stats["checks"]["questions_not_mentioning_their_people"] == []
    assert stats["facts_per_question"] == {"mean": 5.0, "min": 5, "max": 5}
    assert stats["checks"]["n_not_a_question"] == 0 and stats["n_people"] == 2
    sheet = list(csv.reader((out / "human_check.csv").open()))
    assert sheet[0][0] == "item" and len(sheet) == 1 + 2 * (1 + 5)


def test_run_on_the_built_benchmark_measures_every_metric(kg_dir, pairs_csv, tmp_path) -> None:
    out = tmp_path / "bench"
    _build(out, kg_dir, pairs_csv, tmp_path)

    def answer(request: ChatRequest) -> str:
        user = request.messages[-1].content
        if "London" in user:
            return "Orazio died in London [Q367360, place of death: London]. He painted [NA]."
        return "Orazio Gentileschi died in London [NA]."

    result = run_kalma(
        tmp_path / "run",
        KalmaRunConfig(dataset=str(out), model="mock", remove_knowledge=1),
        runtime=Runtime(),
        model=MockChat(answer),
    )
    m = result.metrics
    for name in ("precision", "recall", "f1", "na_precision", "na_recall"):
        assert m[name]["micro"] is not None, name
    assert m["setup"]["gold"] == str(out / "gold.jsonl")


def test_build_resumes_and_retries_failed_items(kg_dir, pairs_csv, tmp_path) -> None:
    out = tmp_path / "bench"
    kg = load_biokalma_kg(kg_dir, cache_dir=tmp_path / "kgcache")
    config = KalmaBuildConfig(pairs=str(pairs_csv), rounds=3)
    flaky = MockChat(script, fail_times=1)
    first = build_benchmark(
        out, config, kg=kg, model=flaky, perplexity=fake_perplexity, runtime=NO_CACHE
    )
    assert (first.n_items, first.n_failed) == (0, 1)
    again = MockChat(script)
    second = build_benchmark(
        out, config, kg=kg, model=again, perplexity=fake_perplexity, runtime=NO_CACHE
    )
    assert (second.n_items, second.n_failed) == (1, 0)
    third = MockChat(script)
    build_benchmark(out, config, kg=kg, model=third, perplexity=fake_perplexity, runtime=NO_CACHE)
    assert third.calls == 0


def test_cli_build_with_a_tiny_lm(kg_dir, pairs_csv, tmp_path, monkeypatch) -> None:
    """The command end to end: mock model, perplexities from a real (tiny) transformers LM."""
    pytest.importorskip("transformers")
    from click.testing import CliRunner

    from _tiny_models import build_random_causal_lm
    from citegraph.cli import main

    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    lm = build_random_causal_lm(tmp_path / "tiny_lm")
    out = tmp_path / "cli-bench"
    result = CliRunner().invoke(
        main,
        [
            "kalma",
            "build",
            "--kg",
            "biokalma",
            "--data-dir",
            str(kg_dir),
            "--pairs",
            str(pairs_csv),
            "--model",
            "mock",
            "--lm",
            f"hf:{lm}",
            "--rounds",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1 resolved" in result.output and "1 incomplete names" in result.output
    [item] = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    # The mock's fixed reply labels nothing: the seed stays unlabelled, recorded as a fallback,
    # and each extension is taken as the new sentence (recorded too).
    assert item["rounds"][0]["fallback"].startswith("no usable labels")
    assert all(r["fallback"].startswith("appended") for r in item["rounds"][1:])
    assert len(item["injected"]) == 2
    assert all(c["perplexity"] > 1 for c in item["rounds"][1]["candidates"])
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["lm_name"].startswith("hf:")


def test_shards_merge_to_the_single_build(kg_dir, tmp_path) -> None:
    pairs = tmp_path / "two.csv"
    with pairs.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["name1", "relation", "name2", "paragraph"])
        writer.writerow(["Artemisia Gentileschi", "father", "Orazio Gentileschi", SEED])
        writer.writerow(["Orazio Gentileschi", "child", "Artemisia Gentileschi", ""])
    kg = load_biokalma_kg(kg_dir, cache_dir=tmp_path / "kgcache")
    config = KalmaBuildConfig(pairs=str(pairs), rounds=3)

    def build(out: Path, runtime: Runtime):
        return build_benchmark(
            out, config, kg=kg, model=MockChat(script), perplexity=fake_perplexity, runtime=runtime
        )

    whole = build(tmp_path / "whole", NO_CACHE)
    assert whole.n_items == 2
    for i in range(2):
        part = build(tmp_path / f"shard{i}", NO_CACHE.model_copy(update={"shard": f"{i}/2"}))
        assert part.n_items == 1
    merged = merge_runs([tmp_path / "shard0", tmp_path / "shard1"], tmp_path / "merged")
    metrics = finalize(task_type("kalma.build"), merged)
    assert json.loads(json.dumps(metrics)) == json.loads(json.dumps(whole.metrics))
    for name in ("metrics.json", "gold.jsonl", "simple_question_graph.json",
                 "complex_question_graph.json", "stats.json", "human_check.csv"):  # fmt: skip
        merged_file = (tmp_path / "merged" / name).read_text()
        assert merged_file == (tmp_path / "whole" / name).read_text(), name
