"""A model with no grammar mode (a user's own ``ChatModel`` class) cannot run constrained.

``run_kalma`` and ``ask`` refuse it with a :class:`ConfigError` that names the model and every
grammar mode, before any question is asked (the model is never called); the CLI exits 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import ConfigError
from citegraph.kalma import KalmaRunConfig, ask, run_kalma
from citegraph.kalma.retrieve import Retrieval, Retriever
from citegraph.kg import KnowledgeGraph, open_kg
from citegraph.models import ChatRequest, Generation
from citegraph.models.grammar import GRAMMAR_MODES
from citegraph.runs import Runtime

ANSWER = "Stephen Crane was a writer [Q206534, occupation: writer]."


class HouseModel:
    """A user's own chat model: the ChatModel protocol and nothing more."""

    name = "house/answerer"
    endpoint = "in-process"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> Generation:
        self.requests.append(request)
        return Generation(text=ANSWER, model=self.name)

    async def aclose(self) -> None:
        return None


def _check_message(message: str) -> None:
    assert "model 'house/answerer' cannot constrain its output" in message
    assert all(mode in message for mode in GRAMMAR_MODES)
    assert "free generation" in message


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def test_run_kalma_refuses_before_any_item(data_dir: Path, tmp_path: Path) -> None:
    model = HouseModel()
    config = KalmaRunConfig(model="mock", citations="constrained")
    with pytest.raises(ConfigError) as caught:
        run_kalma(
            tmp_path / "run", config, runtime=Runtime(limit=2), data_dir=data_dir, model=model
        )
    _check_message(str(caught.value))
    assert model.requests == []
    assert not (tmp_path / "run" / "samples.jsonl").exists()
    # the same model runs free
    free = run_kalma(
        tmp_path / "free",
        KalmaRunConfig(model="mock"),
        runtime=Runtime(limit=2),
        data_dir=data_dir,
        model=model,
    )
    assert len(model.requests) == 2 and free.metrics["n_answers"] == 2
    assert all(r.grammar is None for r in model.requests)


@pytest.mark.needs("spacy")
def test_ask_refuses_before_retrieving(data_dir: Path) -> None:
    model = HouseModel()
    kg = open_kg("biokalma", data_dir=data_dir).kg
    retrieved: list[str] = []

    class CountingRetriever(Retriever):
        async def __call__(self, question: str, kg: KnowledgeGraph) -> Retrieval:
            retrieved.append(question)
            return await super().__call__(question, kg)

    with pytest.raises(ConfigError) as caught:  # constrained by default
        ask("Who was Stephen Crane?", kg, model, retriever=CountingRetriever())
    _check_message(str(caught.value))
    assert model.requests == [] and retrieved == []
    free = ask("Who was Stephen Crane?", kg, model, citations="free")
    assert free.answer.text == ANSWER and free.citations.n_correct == 1


@pytest.mark.parametrize("command", ["run", "ask"])
def test_the_cli_exits_2_with_the_reason(
    command: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI builds its models from specs; a plugged-in factory stands for a user's class."""
    model = HouseModel()
    module = "citegraph.kalma.run._task" if command == "run" else "citegraph.cli._ask"
    monkeypatch.setattr(f"{module}.chat_model", lambda *args, **kwargs: model)
    if command == "run":
        args = ["kalma", "run", "--model", "mock", "--limit", "2", "--out", str(tmp_path / "o")]
        args += ["--citations", "constrained"]
    else:
        args = ["ask", "Who was Stephen Crane?", "--model", "mock"]
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)])
    assert result.exit_code == 2, result.output
    _check_message(" ".join(result.stderr.split()))
    assert "Traceback" not in result.output
    assert model.requests == []
