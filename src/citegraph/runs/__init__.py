"""Run directories, provenance and records."""

from citegraph.runs._provenance import (
    canonical_json,
    package_versions,
    sha256_file,
    sha256_json,
)
from citegraph.runs._rundir import METRICS_FILE, RUN_FILE, SAMPLES_FILE, RunDir

__all__ = [
    "METRICS_FILE",
    "RUN_FILE",
    "SAMPLES_FILE",
    "RunDir",
    "canonical_json",
    "package_versions",
    "sha256_file",
    "sha256_json",
]
