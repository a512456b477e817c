"""Input text holding lone surrogates, through the real commands (issue 37, item 5).

JSON's ``\\ud800`` escape decodes to a lone surrogate, text UTF-8 cannot encode. The probe put
one in a dataset's graph value and one in a question: ``kalma run`` aborted with every provider
(llguidance's ``grammar_from_lark`` under the mock, the OpenAI SDK's JSON dump for vllm,
llamacpp and openai, free or constrained) and ``kalma score`` crashed in spaCy. Now each input
file reads such text as U+FFFD and says so once, as a ``warning:`` line naming the file, the
line or entry and the field, and no model request holds a lone surrogate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from citegraph.cli import main
from citegraph.io import json_text
from citegraph.testing import FakeOpenAIServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own-kg"
SHAKESPEARE = {
    "name": "William Shakespeare",
    "spouse": "Anne\ud800 Hathaway",
    "child": ["Hamnet", "Susanna\udfff"],
    "qid": "Q692",
}
WARNED = "1 entry held text UTF-8 cannot encode"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "dataset"
    root.mkdir()
    entries = [["Who was William Shakespeare married to?", [SHAKESPEARE]]]
    for name in ("simple_question_graph.json", "complex_question_graph.json"):
        (root / name).write_text(json.dumps(entries), encoding="utf-8")
    return root


def _run(dataset: Path, out: Path, *more: str) -> Result:
    args = ["kalma", "run", "--dataset", str(dataset), "--split", "general", "--out", str(out)]
    return CliRunner().invoke(main, [*args, "--no-cache", *more])


def _record(out: Path) -> dict[str, Any]:
    [line] = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    record: dict[str, Any] = json.loads(line)
    return record


def _check(result: Result, out: Path) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert f"warning: {out.parent / 'dataset'}" in result.output and WARNED in result.output
    assert "entry 0, field 'entities[0][\"spouse\"]'" in result.output
    record = _record(out)
    assert record["status"] == "ok", record
    return record


@pytest.mark.needs("llguidance")
@pytest.mark.parametrize("citations", ["free", "constrained"])
def test_kalma_run_with_the_mock(dataset: Path, tmp_path: Path, citations: str) -> None:
    out = tmp_path / "run"
    record = _check(_run(dataset, out, "--model", "mock", "--citations", citations), out)
    if citations == "constrained":
        assert record["constraint"]["facts_left_out"] == 0  # read as U+FFFD: citable


def _reply(body: dict[str, Any]) -> str:
    if "response_format" in body:  # a strict JSON schema: a sentence citing NA
        return json.dumps({"sentences": [{"text": "He married Anne", "citations": ["NA"]}]})
    return "He married Anne [NA]."


@pytest.mark.parametrize("provider", ["vllm", "llamacpp", "openai"])
@pytest.mark.parametrize("citations", ["free", "constrained"])
def test_kalma_run_with_servers(
    dataset: Path, tmp_path: Path, provider: str, citations: str
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=_reply) as server:
        more = ["--model", f"{provider}/fake", "--base-url", server.base_url]
        result = _run(dataset, out, *more, "--citations", citations)
        sent = server.requests
    record = _check(result, out)
    assert record["answer"] == "He married Anne [NA]."
    [body] = sent
    assert "Anne\ufffd Hathaway" in body["messages"][-1]["content"]
    assert "\\ud8" not in json_text(body) and "\\udf" not in json_text(body)


@pytest.mark.needs("spacy")
def test_kalma_score_with_a_question_spacy_could_not_read(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answer = {
        "id": "q1",
        "question": "Who was Marie Curie\udfff married to?",
        "answer": "Marie Curie was married to Pierre Curie [ex:MarieCurie, spouse: Pierre Curie].",
    }
    answers.write_text(json_text(answer) + "\n", encoding="utf-8")
    assert "\\udfff" in answers.read_text(encoding="utf-8")
    out = tmp_path / "score"
    args = ["kalma", "score", str(answers), "--kg", str(EXAMPLE / "people.ttl"), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"warning: {answers}: 1 line held text UTF-8 cannot encode" in result.output
    assert "the first: line 1, field 'question'" in result.output
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["n_answers"] == 1 and metrics["n_citations"] == 1
