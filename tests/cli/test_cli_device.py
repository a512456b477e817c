"""``--device`` and ``--dtype`` on every command that loads a model, reaching the run records."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from citegraph.cli import main

#: Every command that can load a local model (NLI, T5, reranker, embeddings, LM, chat).
MODEL_COMMANDS = [
    ("ask",),
    ("demo",),
    ("kalma", "run"),
    ("kalma", "score"),
    ("kalma", "build"),
    ("conner", "generate"),
    ("conner", "retrieve"),
    ("conner", "score"),
    ("conner", "select"),
    ("caqa", "build"),
    ("caqa", "judge"),
    ("caqa", "finetune"),
]


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, f"no command {' '.join(path)}"
        command = found
    return command


@pytest.mark.parametrize("path", MODEL_COMMANDS, ids=" ".join)
def test_every_model_command_takes_device_and_dtype(path: tuple[str, ...]) -> None:
    options = {o for p in _command(path).params for o in getattr(p, "opts", [])}
    assert {"--device", "--dtype"} <= options


@pytest.mark.needs("transformers")
def test_a_device_the_machine_lacks_is_one_clear_error(tmp_path: Path, data_dir: Path) -> None:
    pytest.importorskip("torch")
    import torch

    if torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    answers = Path(__file__).parents[2] / "src" / "citegraph" / "kalma" / "demo" / "answers.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "kalma", "score", str(answers), "--out", str(tmp_path / "run"),
            "--data-dir", str(data_dir), "--nli", "hf:some/model", "--device", "cuda:7",
        ],
    )  # fmt: skip
    assert result.exit_code == 2  # citegraph's errors exit 2, with one red line
    assert "device 'cuda:7'" in result.output
    assert "Traceback" not in result.output


def test_kalma_score_records_the_dtype_it_was_asked_for(
    tmp_path: Path, data_dir: Path, tiny_nli_classifier_dir: Path
) -> None:
    pytest.importorskip("torch")
    answers = Path(__file__).parents[2] / "src" / "citegraph" / "kalma" / "demo" / "answers.jsonl"
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        [
            "kalma", "score", str(answers), "--out", str(out), "--data-dir", str(data_dir),
            "--nli", f"hf:{tiny_nli_classifier_dir}", "--device", "cpu", "--dtype", "bf16",
            "--limit", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    info = json.loads((out / "run.json").read_text())
    assert info["models"]["nli"]["dtype"] == "bfloat16"
    assert info["models"]["nli"]["device"] == "cpu"
    assert info["runtime"]["dtype"] == "bf16"
