"""Issue 39 item 6, every task: an item that fails because a model raised is recorded with the
error's type (``error_type``, module-qualified) beside its ``error`` text, carried from the
exception through the answer and judgement objects to the record, and the exit status is read
from that type: 3 for a model or endpoint error, 2 for an input error (``DataError``).

Covered: ``kalma run`` (the answer's error), ``kalma score`` (a failed answer's type kept from
the answers file; a text-quality judge that fails for good stops the command with its type's
status), ``conner generate`` (the knowledge's error), ``conner score`` (the answer model's
error), ``conner select`` (an item no candidate has knowledge for: the first candidate's error),
``caqa judge`` (LLM, NLI and classifier judges)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from _conner_stubs import StubLM, StubRelevance, SubstringNLI, WordCount
from citegraph.caqa import CaqaJudgeConfig, CaqaSample, LLMJudge, judge_caqa, write_samples
from citegraph.caqa.judge import NLIJudge
from citegraph.cli import main
from citegraph.conner import (
    ConnerGenerateConfig,
    ConnerScoreConfig,
    ConnerSelectConfig,
    generate_run,
    score_knowledge,
    select_run,
)
from citegraph.conner.acquire import GeneratedKnowledge, generate_answers
from citegraph.conner.score import ScoreModels
from citegraph.datasets import load_conner
from citegraph.errors import (
    ClientError,
    DataError,
    EndpointUnavailable,
    ModelError,
    ServerError,
    error_type_name,
)
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.kalma.generate import generate_answer
from citegraph.models import ChatRequest, MockChat, NLIPair, NLIVerdict
from citegraph.runs import FAILED, FinishedRun, Runtime, collecting_runs
from citegraph.testing import FakeOpenAIServer, FakeReply

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))
MODEL_ERROR = "citegraph.errors.ModelError"
NO_CACHE = Runtime(cache=False, concurrency=1)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _failed(out: Path) -> list[dict[str, Any]]:
    return [r for r in _lines(out / "samples.jsonl") if r.get("status") == FAILED]


def _collected(run: Callable[[], Any]) -> FinishedRun:
    """The one run ``run`` finished, as the command line sees it."""
    with collecting_runs() as runs:
        run()
    (finished,) = runs.finished
    return finished


def _report_exit(out: Path) -> tuple[int, str]:
    """``citegraph runs report OUT``: its exit status (from the records) and stderr."""
    result = CliRunner().invoke(main, ["runs", "report", str(out)])
    return result.exit_code, result.stderr


def _raising(error: Exception, when: Callable[[str], bool] = lambda prompt: True) -> MockChat:
    """A chat model that raises ``error`` for the prompts ``when`` picks, else answers."""

    def reply(request: ChatRequest) -> str:
        if when(request.messages[-1].content):
            raise error
        return "Some words about it."

    return MockChat(reply)


# --- kalma run -------------------------------------------------------------------------------


def test_an_answer_keeps_the_type_of_its_models_error() -> None:
    answer = generate_answer("Who?", [], _raising(EndpointUnavailable("timed out")))
    assert answer.error == "EndpointUnavailable: timed out"
    assert answer.error_type == "citegraph.errors.EndpointUnavailable"
    fine = generate_answer("Who?", [], MockChat("He was."))
    assert (fine.error, fine.error_type) == (None, None)


def test_kalma_run_records_the_answer_models_error_type(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    model = MockChat(["An answer.", "x"], fail_times=1, error=ModelError("the GPU fell over"))
    finished = _collected(
        lambda: run_kalma(
            out,
            KalmaRunConfig(model="mock"),
            runtime=Runtime(limit=2, concurrency=1),
            data_dir=data_dir,
            model=model,
        )
    )
    (failed,) = _failed(out)
    assert failed["error"] == "ModelError: the GPU fell over"
    assert failed["error_type"] == MODEL_ERROR
    ok = [r for r in _lines(out / "samples.jsonl") if r["status"] == "ok"]
    assert ok and all("error_type" not in r for r in ok)
    assert finished.failure is not None
    assert (finished.failure.kind, finished.failure.error_type) == ("model", MODEL_ERROR)
    code, stderr = _report_exit(out)
    assert code == 3 and "(model or endpoint failure)" in stderr


def test_kalma_run_over_a_refusing_server_exits_3_by_type(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=lambda body: FakeReply(status=400, text="no such model")) as s:
        result = CliRunner().invoke(
            main,
            ["kalma", "run", "--model", "vllm/fake", "--base-url", s.base_url, "--limit", "1",
             "--data-dir", str(data_dir), "--out", str(out)],
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    (failed,) = _failed(out)
    assert failed["error_type"] == "citegraph.errors.ClientError"
    assert "no such model" in failed["error"]


# --- kalma score -----------------------------------------------------------------------------


def _answers_with_a_failed_line(tmp_path: Path, error_type: str | None) -> Path:
    demo = _lines(DEMO / "answers.jsonl")[:2]
    failed = {"id": demo[1]["id"], "answer": "", "status": "failed", "error": "X: boom"}
    if error_type is not None:
        failed["error_type"] = error_type
    path = tmp_path / f"answers-{error_type}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [demo[0], failed]), "utf-8")
    return path


@pytest.mark.parametrize(
    ("error_type", "status"),
    [
        (MODEL_ERROR, 3),
        ("citegraph.errors.DataError", 2),  # the answering side's input error
        (None, 3),  # no type given: the text rule ("X: boom" names no input error)
    ],
)
def test_kalma_score_keeps_a_failed_answers_type_and_exits_by_it(
    tmp_path: Path, data_dir: Path, error_type: str | None, status: int
) -> None:
    answers = _answers_with_a_failed_line(tmp_path, error_type)
    out = tmp_path / "score"
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(answers), "--gold", str(DEMO / "gold.jsonl"),
         "--data-dir", str(data_dir), "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == status, result.output
    (failed,) = _failed(out)
    assert failed["error"] == "the answer's model call failed: X: boom"
    assert failed.get("error_type") == error_type


def test_an_answers_error_type_must_be_a_string(tmp_path: Path, data_dir: Path) -> None:
    answers = _answers_with_a_failed_line(tmp_path, None)
    lines = _lines(answers)
    lines[1]["error_type"] = 7
    answers.write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(answers), "--data-dir", str(data_dir),
         "--out", str(tmp_path / "score")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "field 'error_type'" in result.stderr


@pytest.mark.parametrize(("reply", "status"), [(400, 3), (200, 0)])
def test_kalma_score_stopped_by_its_judge_exits_by_the_errors_type(
    tmp_path: Path, data_dir: Path, reply: int, status: int
) -> None:
    """A judge call that fails for good (here HTTP 400: a ``ClientError``, never retried) stops
    the command with its type's status; a judge that answers lets it pass."""
    with FakeOpenAIServer(reply=lambda body: FakeReply(status=reply, text="3")) as server:
        result = CliRunner().invoke(
            main,
            ["kalma", "score", str(DEMO / "answers.jsonl"), "--data-dir", str(data_dir),
             "--out", str(tmp_path / "score"), "--text-quality", "vllm/judge",
             "--judge-base-url", server.base_url, "--limit", "1"],
        )  # fmt: skip
    assert result.exit_code == status, result.output
    if status:
        assert "error:" in result.stderr


# --- conner ----------------------------------------------------------------------------------


def test_conner_generate_records_the_models_error_type(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "gen"
    model = _raising(ModelError("out of memory"), lambda prompt: "dragon ball" in prompt.lower())
    finished = _collected(
        lambda: generate_run(
            out,
            ConnerGenerateConfig(model="mock"),
            data_dir=data_dir,
            model=model,
            runtime=Runtime(limit=3),
        )
    )
    (failed,) = _failed(out)
    assert (failed["error"], failed["error_type"]) == ("ModelError: out of memory", MODEL_ERROR)
    assert finished.failure is not None and finished.failure.error_type == MODEL_ERROR
    assert _report_exit(out)[0] == 3


def test_a_downstream_answer_without_knowledge_keeps_the_knowledges_type(data_dir: Path) -> None:
    samples = load_conner("nq", data_dir)[:2]
    lost = GeneratedKnowledge(
        id=samples[0].id, knowledge=None, error="ClientError: gone", prompt_version="v",
        error_type="citegraph.errors.ClientError",
    )  # fmt: skip
    answers = generate_answers(
        samples, [lost], _raising(ClientError("refused", status=400)), shots=0
    )
    assert answers[0].error == "no knowledge: ClientError: gone"
    assert answers[0].error_type == "citegraph.errors.ClientError"
    assert (answers[1].error, answers[1].error_type) == ("no knowledge for this sample", None)


def test_conner_score_records_the_answer_models_error_type(data_dir: Path, tmp_path: Path) -> None:
    knowledge = tmp_path / "know.jsonl"
    rows = [{"id": "nq:0", "text": "Firefox 28.0 runs on Windows."}, {"id": "nq:1", "text": "Z."}]
    knowledge.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    answerer = _raising(ModelError("CUDA error"), lambda prompt: "Z." in prompt)
    config = ConnerScoreConfig(
        knowledge=str(knowledge), task="nq", u=1, answer_model="mock", answer_shots=0,
        metrics=("validity",),
    )  # fmt: skip
    models = ScoreModels(
        lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance(), paragraph=WordCount(),
        answer=answerer,
    )  # fmt: skip
    out = tmp_path / "score"
    finished = _collected(
        lambda: score_knowledge(
            out, config, data_dir=data_dir, models=models, runtime=Runtime(limit=2)
        )
    )
    (failed,) = _failed(out)
    assert failed["id"] == "nq:1"
    assert (failed["error"], failed["error_type"]) == (
        "answer model: ModelError: CUDA error",
        MODEL_ERROR,
    )
    assert finished.failure is not None and finished.failure.kind == "model"
    assert _report_exit(out)[0] == 3


def test_conner_select_records_the_first_failed_candidates_type(
    data_dir: Path, tmp_path: Path
) -> None:
    """nq:1 has no candidate: candidate 0's call failed with a ``ServerError``, candidate 1's
    with a ``ModelError``; its record keeps the first one's type (nq:0 is chosen as usual)."""
    errors_by_seed = {
        0: ServerError("scripted outage", status=503, url="mock://"),
        1: ModelError("OOM"),
    }

    def sampler(request: ChatRequest) -> str:
        if "dragon ball" in request.messages[-1].content.lower():
            raise errors_by_seed[request.config.seed or 0]
        return "Dragon Ball Z is an anime."

    out = tmp_path / "select"
    with collecting_runs() as runs:
        select_run(
            out,
            ConnerSelectConfig(candidates=2, weights="1,1,0,1"),  # type: ignore[arg-type]
            generate=ConnerGenerateConfig(model="mock", temperature=1.0),
            score=ConnerScoreConfig(knowledge="-"),
            data_dir=data_dir,
            model=MockChat(sampler),
            score_models=ScoreModels(lm=StubLM(), nli=SubstringNLI(), relevance=StubRelevance()),
            runtime=Runtime(limit=2),
        )
    candidates = [_failed(out / "candidates" / f"c{i}")[0]["error_type"] for i in range(2)]
    assert candidates == ["citegraph.errors.ServerError", MODEL_ERROR]
    (failed,) = _failed(out)
    assert failed["id"] == "nq:1" and failed["error"].startswith("no candidate: ")
    assert failed["error_type"] == "citegraph.errors.ServerError"
    selection = runs.finished[-1]
    assert selection.out == out and selection.failure is not None
    assert selection.failure.error_type == "citegraph.errors.ServerError"
    assert _report_exit(out)[0] == 3


# --- caqa judge ------------------------------------------------------------------------------


def _caqa_split(tmp_path: Path) -> Path:
    samples = [
        CaqaSample(
            id=f"s{i}",
            question=f"Question {i}?",
            answer=f"Answer {i}.",
            citation=f"cite-{i}",
            label="supportive",
            complexity="single",
            source="hand",
            group=f"g{i}",
        )
        for i in range(3)
    ]
    path = tmp_path / "test.jsonl"
    write_samples(path, samples)
    return path


def _judge(tmp_path: Path, evaluator: Any, name: str = "run") -> tuple[FinishedRun, Path]:
    config = CaqaJudgeConfig(data=str(_caqa_split(tmp_path)), evaluator="mock", bootstrap=0)
    out = tmp_path / name
    finished = _collected(lambda: judge_caqa(out, config, evaluator=evaluator, runtime=NO_CACHE))
    return finished, out


def test_caqa_llm_judge_records_the_models_error_type(tmp_path: Path) -> None:
    judge = LLMJudge(_raising(ModelError("model crashed"), lambda prompt: "cite-1" in prompt))
    finished, out = _judge(tmp_path, judge)
    (failed,) = _failed(out)
    assert (failed["id"], failed["error_type"]) == ("s1", MODEL_ERROR)
    assert failed["error"] == "ModelError: model crashed"
    ok = [r for r in _lines(out / "samples.jsonl") if r["status"] == "ok"]
    assert len(ok) == 2 and all("error_type" not in r for r in ok)
    assert finished.failure is not None and finished.failure.kind == "model"
    assert _report_exit(out)[0] == 3


class _BrokenNLI:
    """An NLI model that fails with ``error``, or gives one verdict too few."""

    name = "broken"

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        if self.error is not None:
            raise self.error
        return [NLIVerdict(entailed=True, source="broken") for _ in pairs[1:]]


@pytest.mark.parametrize("error", [ModelError("NLI server died"), None])
def test_caqa_nli_judge_records_the_models_error_type(
    tmp_path: Path, error: Exception | None
) -> None:
    _, out = _judge(tmp_path, NLIJudge(_BrokenNLI(error)))  # type: ignore[arg-type]
    failed = _failed(out)
    assert len(failed) == 3 and {r["error_type"] for r in failed} == {MODEL_ERROR}
    expected = "ModelError: NLI server died" if error else "ModelError: 2 NLI verdicts for 3 "
    assert failed[0]["error"].startswith(expected)
    assert _report_exit(out)[0] == 3


@pytest.mark.parametrize(
    ("error", "status"),
    [(DataError("the citation is empty", field="citation"), 2), (RuntimeError("CUDA OOM"), 3)],
)
def test_caqa_classifier_judge_records_the_batchs_error_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, status: int
) -> None:
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)
    from citegraph.caqa import CATEGORIES
    from citegraph.caqa.finetune import ClassifierJudge, _classifier_judge
    from citegraph.testing import build_tiny_nli_classifier

    folder = build_tiny_nli_classifier(tmp_path / "judge", id2label=dict(enumerate(CATEGORIES)))
    judge = ClassifierJudge(folder, device="cpu")

    def texts(*args: object, **kwargs: object) -> object:
        raise error

    monkeypatch.setattr(_classifier_judge, "classifier_texts", texts)
    finished, out = _judge(tmp_path, judge)
    failed = _failed(out)
    assert len(failed) == 3
    assert {r["error_type"] for r in failed} == {error_type_name(error)}
    assert failed[0]["error"].startswith(f"model error: {type(error).__name__}: ")
    assert finished.failure is not None
    assert finished.failure.kind == ("input" if status == 2 else "model")
    assert _report_exit(out)[0] == status


def test_caqa_judge_over_a_refusing_server_exits_3_by_type(tmp_path: Path) -> None:
    split = _caqa_split(tmp_path)
    with FakeOpenAIServer(reply=lambda body: FakeReply(status=400, text="bad request")) as s:
        result = CliRunner().invoke(
            main,
            ["caqa", "judge", str(split), "--evaluator", "vllm/judge", "--base-url", s.base_url,
             "--bootstrap", "0", "--out", str(tmp_path / "j")],
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    failed = _failed(tmp_path / "j")
    assert len(failed) == 3
    assert {r["error_type"] for r in failed} == {"citegraph.errors.ClientError"}
