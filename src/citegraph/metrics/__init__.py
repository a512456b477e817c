"""Shared metric arithmetic: micro / macro ratios, F1, bootstrap intervals, run summaries."""

from citegraph.metrics._bootstrap import (
    bootstrap_ci,
    bootstrap_f1,
    bootstrap_many,
    bootstrap_micro_macro,
    percentile,
    with_bootstrap,
)
from citegraph.metrics._interval import BootstrapConfig, ConfidenceInterval
from citegraph.metrics._ratio import (
    MicroMacro,
    RatioPair,
    ZeroDenominator,
    f1_micro_macro,
    f1_score,
    macro_value,
    micro_macro,
    micro_value,
)
from citegraph.metrics._runs import (
    MicroMacroRuns,
    RunSummary,
    summarise_micro_macro_runs,
    summarise_runs,
)

__all__ = [
    "BootstrapConfig",
    "ConfidenceInterval",
    "MicroMacro",
    "MicroMacroRuns",
    "RatioPair",
    "RunSummary",
    "ZeroDenominator",
    "bootstrap_ci",
    "bootstrap_f1",
    "bootstrap_many",
    "bootstrap_micro_macro",
    "f1_micro_macro",
    "f1_score",
    "macro_value",
    "micro_macro",
    "micro_value",
    "percentile",
    "summarise_micro_macro_runs",
    "summarise_runs",
    "with_bootstrap",
]
