"""``citegraph ask`` and ``citegraph kalma score / run / retrieve / build``: options, outputs,
shards, and errors reported as one clear line."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.models import ModelOptions
from citegraph.runs import finalize, merge_runs, task_type

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def test_score_bad_answers_file_is_one_clear_error(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "specific-0"}\n')
    result = CliRunner().invoke(
        main,
        ["kalma", "score", str(answers), "--out", str(tmp_path / "o"), "--data-dir", str(data_dir)],
    )
    assert result.exit_code == 2
    assert "a.jsonl:1, field 'answer': missing field" in result.output
    assert "Traceback" not in result.output


def test_unknown_nli_spec_is_reported(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "specific-0", "answer": "x"}\n')
    result = CliRunner().invoke(
        main,
        [
            "kalma",
            "score",
            str(answers),
            "--out",
            str(tmp_path / "o"),
            "--nli",
            "bogus",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "bogus" in result.output


def _score_demo(tmp_path: Path, data_dir: Path, nli: str) -> dict:
    demo = DEMO
    out = tmp_path / nli.replace(":", "_").replace("/", "_")
    result = CliRunner().invoke(
        main,
        [
            "kalma",
            "score",
            str(demo / "answers.jsonl"),
            "--gold",
            str(demo / "gold.jsonl"),
            "--nli",
            nli,
            "--out",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    # one warning line, only when the lexical stand-in alone decided alignment and [NA]
    warned = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warned) == (1 if nli == "lexical" else 0), result.output
    return json.loads((out / "metrics.json").read_text())


def test_score_with_the_lexical_stand_in_warns(tmp_path: Path, data_dir: Path) -> None:
    """The default NLI is the lexical matcher: the metrics are computed, the table names it, and
    one warning line says it is a stand-in and which flag passes a real model."""
    metrics = _score_demo(tmp_path, data_dir, "lexical")
    assert metrics["config"]["nli_name"] == "lexical"
    assert metrics["na_edge_case"]["decided_by"] == ["lexical-overlap (stand-in)"]


def test_score_with_a_real_hf_cross_encoder_path(tmp_path: Path, data_dir: Path) -> None:
    """The real loading code end to end, on tiny saved models whose decision is forced."""
    import pytest

    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)
    from citegraph.testing import build_tiny_nli_classifier

    always = build_tiny_nli_classifier(tmp_path / "always", entail_bias=10.0)
    never = build_tiny_nli_classifier(tmp_path / "never", entail_bias=-10.0)
    # Every one of the 22 sentence-citation pairs entailed; both [NA] sentences entail their
    # absent fact, so [NA] precision and recall are 1.
    metrics = _score_demo(tmp_path, data_dir, f"hf/{always}")
    assert metrics["alignment"] == {"micro": 1.0, "macro": 1.0}
    assert metrics["na_precision"]["micro"] == 1.0
    assert metrics["config"]["nli_name"] == f"hf:{always}"
    # Model never entails: the cascade keeps exactly the lexical matcher's decisions (21/22).
    cascade = _score_demo(tmp_path, data_dir, f"lexical+hf/{never}")
    assert cascade["alignment"]["micro"] == 21 / 22
    assert set(cascade["config"]["alignment_sources"]) == {"lexical", f"hf:{never}"}


@pytest.mark.needs("llguidance", "spacy")
def test_ask_over_an_rdf_kg_shows_the_short_id_and_the_iri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # examples/own-kg/people.ttl declares ex: = http://example.org/kg/: the table shows the id
    # the prompt shows (ex:MarieCurie) with the full IRI under it.
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    kg = Path(__file__).parents[2] / "examples" / "own-kg" / "people.ttl"
    question = "Which awards did Marie Curie receive?"
    result = CliRunner().invoke(
        main, ["ask", question, "--kg", str(kg), "--model", "mock"], env={"COLUMNS": "120"}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(i for i, line in enumerate(lines) if "Marie Curie" in line)
    assert "ex:MarieCurie" in lines[row] and "http://example.org/kg/MarieCurie" in lines[row + 1]


@pytest.mark.needs("llguidance", "spacy")
def test_ask_with_mock_model(data_dir: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "ask",
            "Who was Stephen Crane and what shaped his writing?",
            "--model",
            "mock",
            "--data-dir",
            str(data_dir),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [g["center"]["id"] for g in out["retrieval"]["graphs"]] == ["Q206534"]
    assert out["model"] == "mock/mock"
    assert out["answer"]["prompt_version"] == "kalma-table13-v1"


def test_kalma_run_seeds_and_merge(tmp_path: Path, data_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    base = ["kalma", "run", "--model", "mock", "--limit", "3", "--data-dir", str(data_dir)]
    result = CliRunner().invoke(main, [*base, "--seeds", "0,1", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert summary["n_runs"] == 2 and summary["seeds"] == [0, 1]
    assert summary["citation_validity"]["malformed_rate"]["n_runs"] == 2
    assert (tmp_path / "s" / "seed-1" / "metrics.json").exists()
    for i in range(2):
        shard = [*base, "--shard", f"{i}/2", "--out", str(tmp_path / f"shard{i}")]
        assert CliRunner().invoke(main, shard).exit_code == 0
    merged = CliRunner().invoke(
        main,
        [
            "runs",
            "merge",
            str(tmp_path / "shard0"),
            str(tmp_path / "shard1"),
            "--out",
            str(tmp_path / "merged"),
        ],
    )
    assert merged.exit_code == 0, merged.output
    assert json.loads((tmp_path / "merged" / "metrics.json").read_text())["n_answers"] == 3
    report = CliRunner().invoke(main, ["runs", "report", str(tmp_path / "merged")])
    assert report.exit_code == 0, report.output
    # the shards of a --limit 3 run, merged: every item its limit asked for (issue 36, defect 7)
    n_total = json.loads((tmp_path / "merged" / "run.json").read_text())["runtime"]["n_total"]
    assert f"finished (limit 3 of {n_total})" in report.output
    assert "partial run" not in report.output


def test_kalma_run_remove_knowledge_needs_gold(tmp_path: Path, data_dir: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["kalma", "run", "--model", "mock", "--remove-knowledge", "1", "--out", str(tmp_path)],
    )
    assert result.exit_code != 0
    assert "--gold" in result.output


@pytest.mark.needs("spacy")
def test_kalma_retrieve_reports_accuracy(tmp_path: Path, data_dir: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["kalma", "retrieve", "--limit", "4", "--data-dir", str(data_dir), "--out", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in (tmp_path / "retrievals.jsonl").read_text().splitlines()]
    assert rows[0] == {
        "id": "specific-0",
        "qids": ["Q206534"],
        "gold_qids": ["Q206534"],
        "mentions": ["Stephen Crane"],
    }
    report = json.loads((tmp_path / "report.json").read_text())
    hits = sum(len(set(r["qids"]) & set(r["gold_qids"])) for r in rows)
    assert report["n_correct"] == hits
    assert report["precision"]["micro"] == hits / sum(len(r["qids"]) for r in rows)


def test_kalma_score_shards_merge_to_the_single_run(tmp_path: Path, data_dir: Path) -> None:
    base = ["kalma", "score", str(DEMO / "answers.jsonl"), "--gold", str(DEMO / "gold.jsonl")]
    base += ["--data-dir", str(data_dir), "--batch-size", "2"]
    whole = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    for i in range(2):
        shard = CliRunner().invoke(
            main, [*base, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")]
        )
        assert shard.exit_code == 0, shard.output
    info = json.loads((tmp_path / "s0" / "run.json").read_text())
    assert info["task"] == "kalma.score" and info["config"]["batch_size"] == 2
    merged = merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "merged")
    metrics = finalize(task_type(info["task"]), merged)
    assert metrics == json.loads((tmp_path / "whole" / "metrics.json").read_text())


def test_kalma_score_limit(tmp_path: Path, data_dir: Path) -> None:
    args = ["kalma", "score", str(DEMO / "answers.jsonl"), "--limit", "1"]
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "metrics.json").read_text())["n_answers"] == 1


def test_mode_help_points_at_a_file_in_the_repository() -> None:
    """``--mode`` help names docs/modes.md (shipped with the repository), not the authors' notes
    that live outside it."""
    repo = Path(__file__).resolve().parents[2]
    for command in ("run", "score"):
        result = CliRunner().invoke(main, ["kalma", command, "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        assert "REFERENCE_NOTES" not in result.output
        assert "docs/modes.md" in result.output
    assert (repo / "docs" / "modes.md").is_file()


@pytest.mark.needs("llguidance", "spacy")
def test_ask_sends_the_local_defaults_and_reports_progress(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--model local`` without sampling options: 128 tokens, the stop sequences and the
    repetition penalty reach the model call; the progress callback is handed to the model."""
    from citegraph.cli import _ask as ask_cli
    from citegraph.models import GenerationProgress, MockChat
    from citegraph.models.chat._local import LOCAL_STOP, local_generate_config

    class ReportingMock(MockChat):
        progress = None

        async def generate(self, request):  # type: ignore[no-untyped-def]
            assert self.progress is not None
            self.progress(GenerationProgress(1, request.config.max_tokens, 9, 0.5, 0.5))
            self.progress(GenerationProgress(2, request.config.max_tokens, 9, 0.5, 1.0))
            return await super().generate(request)

    mock = ReportingMock("Stephen Crane was a writer [Q206534, occupation: novelist].")
    lines: list[str] = []
    real_line = ask_cli.progress_line
    opened: list[dict[str, Any]] = []

    def fake_chat_model(spec: str, options: ModelOptions) -> MockChat:
        opened.append({"spec": spec, **options.placement(), "base_url": options.base_url})
        mock.default_config = local_generate_config()  # as chat_model("local") builds it
        return mock

    monkeypatch.setattr(ask_cli, "chat_model", fake_chat_model)
    monkeypatch.setattr(
        ask_cli,
        "progress_line",
        lambda show: real_line(lambda line: (lines.append(line), show(line))),
    )
    question = "Who was Stephen Crane and what shaped his writing?"
    result = CliRunner().invoke(main, ["ask", question, "--data-dir", str(data_dir), "--json"])
    assert result.exit_code == 0, result.output
    # the local model is placed by --device / --dtype (auto unless given)
    assert opened == [{"spec": "local", "base_url": None, "device": "auto", "dtype": "auto"}]
    config = mock.requests[0].config
    assert (config.max_tokens, config.repetition_penalty, config.stop) == (128, 1.3, LOCAL_STOP)
    assert mock.progress is None  # restored after the call
    assert json.loads(result.output)["citations"]["n_citations"] == 1  # [Qid, relation: value]
    assert lines[-1].startswith("Generating: 2/128 tokens, 2.0 tokens/s (prompt 9 tokens")
    override = ["--max-tokens", "40", "--repetition-penalty", "1.1", "--stop", "END"]
    result = CliRunner().invoke(
        main, ["ask", question, "--data-dir", str(data_dir), "--json", *override]
    )
    config = mock.requests[1].config
    assert (config.max_tokens, config.repetition_penalty, config.stop) == (40, 1.1, ("END",))
