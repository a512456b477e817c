"""Rewrite the fixtures of ``test_cli_regression.py`` from the code as it is now.

Regenerate only when an output change is intended (a new metric, a fixed bug, a new case), never
to make a failing regression test pass after a refactor that should not change any output: the
fixtures are what the code wrote before, and the test's worth is that they stay so. Review the
diff of ``tests/regression/fixtures/`` before committing it.

Usage (from the repository root, with the project's environment)::

    python tests/regression/regenerate.py               # every case
    python tests/regression/regenerate.py kalma_score   # only the cases named (pytest -k)

It runs the test module with ``CITEGRAPH_REGRESSION_REGENERATE=1``, under which each case writes
``fixtures/<case>.json`` instead of comparing with it (and fails if an absolute path is left in
the snapshot), with the same fixtures, environment and single torch thread as the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def main(argv: list[str]) -> int:
    env = os.environ | {
        "CITEGRAPH_REGRESSION_REGENERATE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(HERE / "test_cli_regression.py"),
    ]
    if argv:
        command += ["-k", " or ".join(argv)]
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
