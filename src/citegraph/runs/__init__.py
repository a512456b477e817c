"""The engine every pipeline runs on.

A :class:`Task` is a config, a list of items with stable ids, the work on one batch of items
(with the models it opened once) and the metrics over the records. :func:`run_task` runs any
task into a run directory (``run.json``, append-only ``samples.jsonl``, ``metrics.json``) with
resume, retry of failed items, ``limit``, ``shard``, bounded concurrency or batching and progress,
all set by one :class:`Runtime`. The registry maps the ``task`` name in ``run.json`` to its task,
so :func:`finalize` (``runs report``), :func:`merge_runs` and :func:`export_run` (``runs export``:
flat Parquet / CSV / JSONL tables) work for the runs of every task, and a task's
:class:`Presenter` says how its runs are shown (viewer, HTML report, export).
A public entry point builds its task, awaits :func:`run_task_async` and returns a
:class:`TaskResult` subclass (:meth:`TaskResult.of` the outcome); :func:`blocking` gives its
blocking form. API rule: every coroutine function is named ``..._async`` and has a blocking twin
with the plain name, made by :func:`blocking` (inside a running event loop it raises: await the
``_async`` form there).
A run directory holds where its records are, not them: :class:`StoredRecords` reads them from
``samples.jsonl`` as they are used, so metrics and reports stream a run of any size.
A run is finished while ``samples.jsonl`` matches what ``metrics.json`` was computed from
(:func:`run_state`, never file times); :class:`Completion` says how much of what it asked for
it holds (all its items, every item its own ``--limit`` asked for, or less: partial). One
process writes a run directory at a time (its lock; another gets :class:`RunBusy`).
:func:`differing_settings` names the config keys and input files that tell runs apart
(``runs compare``; :func:`run_settings`, :func:`input_settings`).
:func:`check_records` refuses records that are not the task's (another task's shape), naming
their line, wherever a run is read (resume, report, merge, export); a count of ``run.json``
edited out of shape is left out with a :class:`RunFileWarning`. ``run.json`` records its layout's
``schema_version`` (:data:`SCHEMA_VERSION`); every reader migrates an older one to the current
layout (:func:`migrate_run_info`) and refuses one written by a newer citegraph.
:func:`check_gates` checks a run's metrics against thresholds (``--fail-under``, CI), and
:class:`RunInterrupted` is what a run stopped by the command line's Ctrl-C raises.
"""

from citegraph.runs._compare import (
    differing_settings,
    input_settings,
    run_settings,
    setting_text,
)
from citegraph.runs._completion import Completion
from citegraph.runs._engine import (
    RunOutcome,
    finalize,
    run_task,
    run_task_async,
    write_metrics,
)
from citegraph.runs._export import EXPORT_FORMATS, export_run
from citegraph.runs._fit import check_records
from citegraph.runs._gates import (
    GateCheck,
    available_metrics,
    check_gates,
    parse_thresholds,
    read_metrics,
    resolve_metric,
)
from citegraph.runs._interrupt import (
    RunInterrupted,
    exit_status,
    graceful_interrupts,
    stop_requested,
)
from citegraph.runs._lifetime import given_or_loaded
from citegraph.runs._lock import RunBusy
from citegraph.runs._merge import merge_runs, read_run_info
from citegraph.runs._metric_names import TaskMetrics
from citegraph.runs._outcomes import (
    CommandRuns,
    Failure,
    FinishedRun,
    collecting_runs,
    error_fields,
    failure_kind,
    first_failure,
    note_finished,
    note_started,
    typed_failure_kind,
)
from citegraph.runs._pending import (
    hand_back_slot,
    run_bounded,
    run_bounded_async,
    run_pending,
    run_pending_async,
    run_pending_batches,
    run_pending_batches_async,
)
from citegraph.runs._placements import check_same_dtypes, model_placements
from citegraph.runs._present import (
    Block,
    Chart,
    FieldsBlock,
    Mark,
    MetricRow,
    Presenter,
    RawBlock,
    RunData,
    RunPresentation,
    SampleSummary,
    Segment,
    Series,
    TableBlock,
    TextBlock,
    field_text,
    token_table,
)
from citegraph.runs._provenance import (
    package_versions,
    sha256_file,
    sha256_json,
)
from citegraph.runs._registry import register_task, registered_tasks, task_of_run, task_type
from citegraph.runs._result import TaskResult
from citegraph.runs._rundir import (
    FAILED,
    METRICS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
    RunDir,
    samples_fingerprint,
)
from citegraph.runs._runfile import RunFileWarning, check_run_identity
from citegraph.runs._runtime import Progress, Runtime, parse_shard
from citegraph.runs._schema import SCHEMA_VERSION, migrate_run_info
from citegraph.runs._state import RunState, run_state
from citegraph.runs._stored import StoredRecords, sorted_records
from citegraph.runs._task import Record, Task, in_id_order, natural_key, opened, recorded_config
from citegraph.runs._twin import blocking, run_sync
from citegraph.runs._usage import (
    TOKENS_COUNTED,
    USAGE_FILE,
    DryRunFinished,
    DryRunReport,
    read_usage,
    tokens_line,
)

__all__ = [
    "EXPORT_FORMATS",
    "FAILED",
    "METRICS_FILE",
    "RUN_FILE",
    "SAMPLES_FILE",
    "SCHEMA_VERSION",
    "TOKENS_COUNTED",
    "USAGE_FILE",
    "Block",
    "Chart",
    "CommandRuns",
    "Completion",
    "DryRunFinished",
    "DryRunReport",
    "Failure",
    "FieldsBlock",
    "FinishedRun",
    "GateCheck",
    "Mark",
    "MetricRow",
    "Presenter",
    "Progress",
    "RawBlock",
    "Record",
    "RunBusy",
    "RunData",
    "RunDir",
    "RunFileWarning",
    "RunInterrupted",
    "RunOutcome",
    "RunPresentation",
    "RunState",
    "Runtime",
    "SampleSummary",
    "Segment",
    "Series",
    "StoredRecords",
    "TableBlock",
    "Task",
    "TaskMetrics",
    "TaskResult",
    "TextBlock",
    "available_metrics",
    "blocking",
    "check_gates",
    "check_records",
    "check_run_identity",
    "check_same_dtypes",
    "collecting_runs",
    "differing_settings",
    "error_fields",
    "exit_status",
    "export_run",
    "failure_kind",
    "field_text",
    "finalize",
    "first_failure",
    "given_or_loaded",
    "graceful_interrupts",
    "hand_back_slot",
    "in_id_order",
    "input_settings",
    "merge_runs",
    "migrate_run_info",
    "model_placements",
    "natural_key",
    "note_finished",
    "note_started",
    "opened",
    "package_versions",
    "parse_shard",
    "parse_thresholds",
    "read_metrics",
    "read_run_info",
    "read_usage",
    "recorded_config",
    "register_task",
    "registered_tasks",
    "resolve_metric",
    "run_bounded",
    "run_bounded_async",
    "run_pending",
    "run_pending_async",
    "run_pending_batches",
    "run_pending_batches_async",
    "run_settings",
    "run_state",
    "run_sync",
    "run_task",
    "run_task_async",
    "samples_fingerprint",
    "setting_text",
    "sha256_file",
    "sha256_json",
    "sorted_records",
    "stop_requested",
    "task_of_run",
    "task_type",
    "token_table",
    "tokens_line",
    "typed_failure_kind",
    "write_metrics",
]
