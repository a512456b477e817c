"""``--citations constrained`` on OpenAI-compatible servers, end to end over HTTP.

``kalma run`` and ``citegraph ask`` talk to a real local server (:class:`FakeOpenAIServer`) that
records every request body. Checked per provider: the field that carries the question's citation
grammar (vLLM ``structured_outputs.grammar``, llama.cpp ``grammar``, OpenAI and Ollama a strict
``response_format``), that it is exactly the grammar made from that question's graphs, that
``--citations free`` sends the request it always sent, and for JSON-schema servers that the
reply is rendered into the KaLMA answer that is recorded and scored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from citegraph.cli import main
from citegraph.datasets import BioKaLMASample, load_biokalma
from citegraph.kalma.constrain import (
    JSON_INSTRUCTION,
    ONCE_AFTER_REPLY,
    CitationChoices,
    citation_grammar,
    render_json_answer,
)
from citegraph.kalma.generate import build_messages
from citegraph.kalma.parse import parse_answer
from citegraph.kg import Subgraph
from citegraph.testing import FakeOpenAIServer, FakeReply

N = 3
GRAMMAR_FIELDS = ("structured_outputs", "grammar", "response_format")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> list[BioKaLMASample]:
    return load_biokalma("specific", data_dir)[:N]


def _sample_of(body: dict[str, Any], samples: list[BioKaLMASample]) -> BioKaLMASample:
    [sample] = [s for s in samples if s.question in body["messages"][-1]["content"]]
    return sample


def _kalma_run(
    server: FakeOpenAIServer, spec: str, out: Path, data_dir: Path, *more: str
) -> Result:
    args = ["kalma", "run", "--model", spec, "--base-url", server.base_url, "--limit", str(N)]
    args += ["--data-dir", str(data_dir), "--out", str(out), *more]
    return CliRunner().invoke(main, args)


def _records(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}  # the last record of an id wins


def _first_fact_answer(choices: CitationChoices) -> str:
    entity = choices.entities[0]
    return f"It is known [{entity.display_id}, {entity.facts[0]}]. The rest is not [NA]."


@pytest.mark.parametrize(("provider", "mode"), [("vllm", "vllm-grammar"), ("llamacpp", "gbnf")])
def test_grammar_servers_get_the_question_gbnf(
    provider: str, mode: str, samples: list[BioKaLMASample], data_dir: Path, tmp_path: Path
) -> None:
    def reply(body: dict[str, Any]) -> str:
        return _first_fact_answer(CitationChoices(_sample_of(body, samples).graphs))

    spec = f"{provider}/fake-model"
    with FakeOpenAIServer(reply=reply) as server:
        constrained = _kalma_run(
            server, spec, tmp_path / "c", data_dir, "--citations", "constrained"
        )
        assert constrained.exit_code == 0, constrained.output
        sent = server.requests
        server.reset()
        free = _kalma_run(server, spec, tmp_path / "f", data_dir, "--citations", "free")
        assert free.exit_code == 0, free.output
        sent_free = server.requests
    assert len(sent) == len(sent_free) == N
    free_by_id = {_sample_of(b, samples).id: b for b in sent_free}
    for body in sent:
        sample = _sample_of(body, samples)
        gbnf = citation_grammar(CitationChoices(sample.graphs)).gbnf
        if provider == "vllm":
            assert body["structured_outputs"] == {"grammar": gbnf}
            assert "grammar" not in body
        else:
            assert body["grammar"] == gbnf
            assert "structured_outputs" not in body
        assert "response_format" not in body
        # the grammar is the only difference from the free request
        rest = {k: v for k, v in body.items() if k not in ("structured_outputs", "grammar")}
        assert rest == free_by_id[sample.id]
    for body in sent_free:  # free: the body as it always was, field by field
        sample = _sample_of(body, samples)
        messages = build_messages(sample.question, sample.graphs)
        assert body == {
            "model": "fake-model",
            "messages": [m.model_dump(mode="json") for m in messages],
            "temperature": 0.5,
            "top_p": 1.0,
            "max_tokens": 512,
            "seed": 0,
        }
        assert list(body) == ["model", "messages", "temperature", "top_p", "max_tokens", "seed"]
    records = _records(tmp_path / "c")
    for sample in samples:
        choices = CitationChoices(sample.graphs)
        record = records[sample.id]
        assert record["answer"] == _first_fact_answer(choices)
        assert record["constraint"] == {
            "grammar": "kalma-citations-v2",
            "mode": mode,
            "citable_facts": choices.size,
            "facts_left_out": len(choices.dropped),
            "cut_open_citation": False,
            "each_fact_once": ONCE_AFTER_REPLY,
            "repeats_removed": 0,
        }
        assert "constraint" not in _records(tmp_path / "f")[sample.id]
    metrics = json.loads((tmp_path / "c" / "metrics.json").read_text())
    assert metrics["setup"]["citations"] == "constrained"
    assert metrics["correctness"]["micro"] == 1.0 and metrics["n_citations"] == N
    assert metrics["n_na_markers"] == N


def _json_reply(body: dict[str, Any]) -> str:
    """A reply in the request's schema: the first two choices, then an NA sentence."""
    schema = body["response_format"]["json_schema"]["schema"]
    enum = schema["properties"]["sentences"]["items"]["properties"]["citations"]["items"]["enum"]
    sentences = [
        {"text": "Two facts are given.", "citations": enum[:2]},
        {"text": "The rest is not", "citations": ["NA"]},
    ]
    return json.dumps({"sentences": sentences})


@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_json_schema_servers_get_the_choices_and_the_reply_is_rendered(
    provider: str, samples: list[BioKaLMASample], data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=_json_reply) as server:
        result = _kalma_run(
            server, f"{provider}/fake-model", out, data_dir, "--citations", "constrained"
        )
        assert result.exit_code == 0, result.output
        sent = server.requests
    assert len(sent) == N
    replies = {}
    for body in sent:
        sample = _sample_of(body, samples)
        choices = CitationChoices(sample.graphs)
        assert "structured_outputs" not in body and "grammar" not in body
        response_format = body["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["strict"] is True
        assert response_format["json_schema"]["name"] == "kalma_citations_v2"
        schema = response_format["json_schema"]["schema"]
        assert schema == citation_grammar(choices).json_schema
        items = schema["properties"]["sentences"]["items"]["properties"]["citations"]["items"]
        expected = [f"{e.display_id}, {f}" for e in choices.entities for f in e.facts]
        assert items["enum"] == [*expected, "NA"] and len(set(expected)) == len(expected)
        assert body["messages"][0]["content"].endswith(JSON_INSTRUCTION)
        replies[sample.id] = _json_reply(body)
    records = _records(out)
    crane = records["specific-0"]  # Stephen Crane: his graph's first two facts, read by hand
    assert crane["answer"] == (
        "Two facts are given [Q206534, sex or gender: male, place of birth: Newark]. "
        "The rest is not [NA]."
    )
    for sample in samples:
        record = records[sample.id]
        choices = CitationChoices(sample.graphs)
        assert record["status"] == "ok"
        assert record["answer"] == render_json_answer(replies[sample.id], choices)
        assert record["constraint"]["mode"] == "json-schema"
        parsed = parse_answer(record["answer"], sample.graphs)
        retrieved = {(t.subject, t.relation, t.value) for g in sample.graphs for t in g.triples}
        cited = [c.triple for c in parsed.citations if c.kind == "kg"]
        assert len(cited) == 2 and not parsed.issues
        assert all(t is not None and (t.subject, t.relation, t.value) in retrieved for t in cited)
        assert [len(s.citations) for s in parsed.sentences] == [2, 1]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["correctness"]["micro"] == 1.0
    assert metrics["n_citations"] == 2 * N and metrics["n_na_markers"] == N


def test_a_reply_outside_the_schema_fails_and_is_asked_again_on_resume(
    samples: list[BioKaLMASample], data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    script = {"prose": True}

    def reply(body: dict[str, Any]) -> str | FakeReply:
        return "Stephen Crane was a writer [NA]." if script["prose"] else _json_reply(body)

    with FakeOpenAIServer(reply=reply) as server:
        failed = _kalma_run(
            server, "openai/fake-model", out, data_dir, "--citations", "constrained"
        )
        assert failed.exit_code == 3, failed.output
        records = _records(out)
        assert [r["status"] for r in records.values()] == ["failed"] * N
        error = records["specific-0"]["error"]
        assert error.startswith("ResponseFormatError: the constrained reply is not the JSON")
        assert "'Stephen Crane was a writer [NA].'" in error
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["generation"]["n_failed"] == N and metrics["n_answers"] == 0
        assert metrics["correctness"]["micro"] is None  # failed is not zero

        script["prose"] = False
        server.reset()
        resumed = _kalma_run(
            server, "openai/fake-model", out, data_dir, "--citations", "constrained"
        )
        assert resumed.exit_code == 0, resumed.output
        assert len(server.requests) == N  # asked again, not read back from the response cache
    assert [r["status"] for r in _records(out).values()] == ["ok"] * N
    assert json.loads((out / "metrics.json").read_text())["correctness"]["micro"] == 1.0


def _ask(server: FakeOpenAIServer, spec: str, data_dir: Path, *more: str) -> dict[str, Any]:
    args = ["ask", "Who was Stephen Crane?", "--model", spec, "--base-url", server.base_url]
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir), "--json", *more])
    assert result.exit_code == 0, result.output
    shown: dict[str, Any] = json.loads(result.stdout)
    return shown


@pytest.mark.needs("spacy")
@pytest.mark.parametrize("provider", ["vllm", "llamacpp", "openai", "ollama"])
def test_ask_sends_the_retrieved_graphs_grammar(provider: str, data_dir: Path) -> None:
    def reply(body: dict[str, Any]) -> str:
        if "response_format" in body:
            return _json_reply(body)
        return "Crane was a writer [Q206534, occupation: writer]."

    with FakeOpenAIServer(reply=reply) as server:
        shown = _ask(server, f"{provider}/fake-model", data_dir)  # constrained by default
        [body] = server.requests
        server.reset()
        free = _ask(server, f"{provider}/fake-model", data_dir, "--citations", "free")
        [free_body] = server.requests
    graphs = [Subgraph.model_validate(g) for g in shown["retrieval"]["graphs"]]
    assert "Q206534" in [g.center.id for g in graphs]
    grammar = citation_grammar(CitationChoices(graphs))
    field = {
        "vllm": ("structured_outputs", {"grammar": grammar.gbnf}),
        "llamacpp": ("grammar", grammar.gbnf),
        "openai": ("response_format", None),
        "ollama": ("response_format", None),
    }[provider]
    if field[1] is None:
        assert body["response_format"]["json_schema"]["schema"] == grammar.json_schema
        assert shown["answer"]["text"] == render_json_answer(
            _json_reply(body), CitationChoices(graphs)
        )
    else:
        assert body[field[0]] == field[1]
        assert shown["answer"]["text"] == "Crane was a writer [Q206534, occupation: writer]."
    assert [k for k in GRAMMAR_FIELDS if k in body] == [field[0]]
    assert shown["answer"]["citations"] == "constrained"
    assert shown["citations"]["n_correct"] == shown["citations"]["n_citations"] > 0
    assert not any(k in free_body for k in GRAMMAR_FIELDS)
    assert free["answer"]["citations"] == "free" and free["answer"]["constraint"] is None
