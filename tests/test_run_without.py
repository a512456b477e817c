"""tests/run_without.py: hiding an extra makes its tests skip with the reason, never fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import run_without

ROOT = Path(__file__).resolve().parents[1]


def test_an_extra_is_its_modules_and_a_module_is_itself() -> None:
    assert run_without.modules_of(["openai"]) == ["openai"]
    assert run_without.modules_of(["nli", "local"]) == [
        "torch", "transformers", "sentencepiece", "gguf", "accelerate", "llguidance",
    ]  # fmt: skip
    assert run_without.modules_of(["llguidance"]) == ["llguidance"]


def test_a_hidden_module_looks_uninstalled_to_imports_probes_and_metadata(tmp_path: Path) -> None:
    """Hidden as a missing package is: import fails with its name, ``find_spec`` (how
    transformers probes its optional dependencies) says None, and no distribution is found."""
    hook, names = run_without.hide(["click"], tmp_path)
    code = (
        "import importlib.util, importlib.metadata\n"
        "try:\n    import click\n"
        "except ModuleNotFoundError as exc:\n    print(exc.name, '|', exc)\n"
        "print(importlib.util.find_spec('click'), importlib.util.find_spec('click.core'))\n"
        "try:\n    importlib.metadata.version('click')\n"
        "except importlib.metadata.PackageNotFoundError:\n    print('no distribution')\n"
        "print(importlib.util.find_spec('json') is not None)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=os.environ | names | {"PYTHONPATH": str(hook)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.splitlines() == [
        "click | No module named 'click' (hidden by tests/run_without.py)",
        "None None",
        "no distribution",
        "True",
    ]


@pytest.mark.needs("llguidance")
def test_the_grammar_tests_skip_without_llguidance() -> None:
    """The largest group of tests that needs an extra (issue 35 found them failing instead)."""
    target = "tests/kalma/constrain/test_citation_grammar.py"
    done = subprocess.run(
        [sys.executable, "tests/run_without.py", "llguidance", "--", target, "-rs"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert "skipped" in summary and "failed" not in summary and "error" not in summary, summary
    assert "needs llguidance, which is not available here" in done.stdout
    assert "pip install 'citegraph[local]'" in done.stdout
