"""A pytest plugin (registered as the ``pytest11`` entry point ``citegraph``): the
``citegraph_run`` fixture, to gate a run's metrics in a test suite.

::

    def test_answers_are_good_enough(citegraph_run):
        run = citegraph_run("runs/nightly")          # or: pytest --citegraph-run runs/nightly
        run.assert_at_least(precision=0.6, alignment=0.8)
        assert run["recall"] is not None

The assertion is :func:`citegraph.testing.assert_metrics`, the gate of ``--fail-under``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from citegraph.testing._metrics import RunMetrics

#: The environment variable naming the default run directory (as ``--citegraph-run`` does).
RUN_ENV = "CITEGRAPH_RUN"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--citegraph-run DIR``: the run directory ``citegraph_run()`` loads by default."""
    parser.addoption(
        "--citegraph-run",
        default=None,
        metavar="DIR",
        help=f"citegraph run directory the citegraph_run fixture loads by default (or ${RUN_ENV}).",
    )


@pytest.fixture
def citegraph_run(request: pytest.FixtureRequest) -> Callable[..., RunMetrics]:
    """A loader of a run's metrics: ``citegraph_run(path)``, or ``citegraph_run()`` for the run
    of ``--citegraph-run`` / ``$CITEGRAPH_RUN``; the result offers ``.assert_at_least(...)``."""
    default = request.config.getoption("--citegraph-run") or os.environ.get(RUN_ENV)

    def load(path: str | Path | None = None) -> RunMetrics:
        chosen = path if path is not None else default
        if chosen is None:
            pytest.fail(
                f"citegraph_run() needs a run directory: give one, --citegraph-run or ${RUN_ENV}"
            )
        return RunMetrics(chosen)

    return load
