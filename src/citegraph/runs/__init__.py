"""Run directories, provenance and records."""

from citegraph.runs._lifetime import given_or_loaded
from citegraph.runs._merge import merge_runs, read_run_info
from citegraph.runs._pending import run_pending, run_pending_batches
from citegraph.runs._provenance import (
    canonical_json,
    package_versions,
    sha256_file,
    sha256_json,
)
from citegraph.runs._rundir import FAILED, METRICS_FILE, RUN_FILE, SAMPLES_FILE, RunDir

__all__ = [
    "FAILED",
    "METRICS_FILE",
    "RUN_FILE",
    "SAMPLES_FILE",
    "RunDir",
    "canonical_json",
    "given_or_loaded",
    "merge_runs",
    "package_versions",
    "read_run_info",
    "run_pending",
    "run_pending_batches",
    "sha256_file",
    "sha256_json",
]
