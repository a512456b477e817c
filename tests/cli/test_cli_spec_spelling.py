"""A run made with a spec's old spelling is the run its new spelling makes: the same run id,
so a respelled command resumes it, and the old spelling is said once as a ``warning:`` line."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.models import specs_identity

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def _score(out: Path, data_dir: Path, nli: str) -> tuple[int, str]:
    args = ["kalma", "score", str(DEMO / "answers.jsonl"), "--gold", str(DEMO / "gold.jsonl")]
    result = CliRunner().invoke(
        main, [*args, "--nli", nli, "--out", str(out), "--data-dir", str(data_dir)]
    )
    return result.exit_code, result.output


def test_a_config_records_its_specs_in_their_first_spelling() -> None:
    dumped = {"nli": "lexical+hf/m", "model": None, "lm": "local", "seed": 1}
    roles = {"nli": "nli", "model": "chat", "lm": "lm"}
    assert specs_identity(dumped, roles) == {
        "nli": "lexical+hf:m",
        "model": None,
        "lm": "local",
        "seed": 1,
    }


@pytest.mark.needs("torch", "transformers")
def test_the_new_spelling_resumes_a_run_of_the_old_one(
    data_dir: Path, tmp_path: Path, tiny_nli_classifier_dir: Path
) -> None:
    out = tmp_path / "scored"
    code, output = _score(out, data_dir, f"lexical+hf:{tiny_nli_classifier_dir}")
    assert code == 0, output
    warned = [line for line in output.splitlines() if line.startswith("warning: nli spec")]
    assert warned == [
        f"warning: nli spec 'lexical+hf:{tiny_nli_classifier_dir}' uses the old spelling: "
        f"write 'lexical+hf/{tiny_nli_classifier_dir}'"
    ]
    before = json.loads((out / "run.json").read_text())
    assert before["config"]["nli"] == f"lexical+hf:{tiny_nli_classifier_dir}"
    code, output = _score(out, data_dir, f"lexical+hf/{tiny_nli_classifier_dir}")
    assert code == 0, output  # not refused as another run in the directory
    assert "warning: nli spec" not in output
    after = json.loads((out / "run.json").read_text())
    assert after["run_id"] == before["run_id"]
