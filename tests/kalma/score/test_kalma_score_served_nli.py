"""``kalma score --nli vllm/<model> --nli-base-url URL`` and ``caqa judge --evaluator
nli/vllm/<model> --base-url URL``: alignment and attribution decided by an NLI classifier behind
a server (the fake OpenAI-compatible server's ``/classify``, whose rule is in
``citegraph.testing``: a hypothesis whose words all occur in the premise is entailed)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from citegraph.caqa import evaluator
from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.runs import Runtime
from citegraph.testing import FakeOpenAIServer

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


@pytest.fixture
def nli_folder(tmp_path: Path) -> Path:
    """A model folder whose config names the classes (the labels of the fake server)."""
    folder = tmp_path / "served-nli"
    folder.mkdir()
    labels = {"0": "contradiction", "1": "entailment", "2": "neutral"}
    (folder / "config.json").write_text(json.dumps({"id2label": labels}), encoding="utf-8")
    return folder


def test_kalma_score_sends_each_cited_fact_to_the_served_classifier(
    tmp_path: Path, data_dir: Path, nli_folder: Path
) -> None:
    with FakeOpenAIServer() as server:
        config = KalmaScoreConfig(
            split="specific", nli=f"vllm/{nli_folder}", nli_base_url=server.base_url
        )
        result = score_answers(
            DEMO / "answers.jsonl", tmp_path / "run", config, data_dir=data_dir,
            gold_path=DEMO / "gold.jsonl", runtime=Runtime(cache=False),
        )  # fmt: skip
        inputs = [text for body in server.requests for text in body["input"]]
        paths = {r.path for r in server.received}
        url = server.base_url
    assert paths == {"/classify"}
    # the demo answers cite 22 facts; each is one premise[SEP]hypothesis input
    assert len([t for t in inputs if "[SEP]" in t]) == len(inputs) >= 22
    assert "[SEP]place of birth: Newark" in " ".join(inputs)
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["config"]["nli_base_url"] == url
    assert info["config"]["nli_name"] == f"vllm/{nli_folder}"
    assert result.metrics["alignment"]["micro"] is not None
    assert "models" not in info  # nothing ran on this machine's devices


def test_caqa_judge_takes_a_served_nli_with_its_base_url(nli_folder: Path) -> None:
    with FakeOpenAIServer() as server:
        judge = evaluator(f"nli/vllm/{nli_folder}", base_url=server.base_url, cache=False)
        assert f"vllm/{nli_folder}" in judge.name
    with pytest.raises(Exception, match="apply to chat evaluators"):
        evaluator("nli/lexical", base_url="http://localhost:1/v1")
