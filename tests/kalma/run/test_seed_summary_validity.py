"""``summarise_seeds`` carries the citation-validity rates across seeds (mean and sample std)."""

from __future__ import annotations

from typing import Any

import pytest

from citegraph.kalma.run import summarise_seeds
from citegraph.kalma.score._report import METRICS


def _run(seed: int, validity: dict[str, Any] | None) -> dict[str, Any]:
    metrics: dict[str, Any] = {name: {"micro": None, "macro": None} for name in METRICS}
    metrics["setup"] = {"seed": seed, "run_id": f"run-{seed}"}
    if validity is not None:
        metrics["citation_validity"] = validity
    return metrics


DENOMINATORS = {"malformed_rate": "brackets", "citations_per_sentence": "sentences"}


def test_validity_rates_are_summarised_over_seeds() -> None:
    runs = [
        _run(
            0, {"malformed_rate": 0.1, "citations_per_sentence": 1.0, "denominators": DENOMINATORS}
        ),
        _run(
            1, {"malformed_rate": 0.3, "citations_per_sentence": None, "denominators": DENOMINATORS}
        ),
        _run(2, None),
    ]
    summary = summarise_seeds(runs)["citation_validity"]
    assert set(summary) == {"malformed_rate", "citations_per_sentence"}
    # (0.1 + 0.3) / 2 = 0.2; sample std of {0.1, 0.3} = sqrt(2 * 0.1**2 / 1) = 0.1414...
    assert summary["malformed_rate"]["mean"] == pytest.approx(0.2)
    assert summary["malformed_rate"]["std"] == pytest.approx(0.1414213562)
    assert summary["malformed_rate"]["n_measured"] == 2 and summary["malformed_rate"]["n_runs"] == 3
    # one measured run: its value, and no std
    assert summary["citations_per_sentence"]["mean"] == 1.0
    assert summary["citations_per_sentence"]["std"] is None


def test_runs_without_validity_add_no_block() -> None:
    assert "citation_validity" not in summarise_seeds([_run(0, None), _run(1, None)])
