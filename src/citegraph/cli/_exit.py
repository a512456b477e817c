"""Exit statuses of every ``citegraph`` command, and the wrapper that sets them.

=====  ==========================================================================================
0      success (``--allow-failures``: also when items failed)
1      internal error (a bug: the traceback is printed)
2      usage or input error: bad options, unreadable data (``DataError``, ``ConfigError``), items
       that failed on their input, a missing optional dependency, a run directory another
       process is writing (``RunBusy``), a ``--fail-under`` gate that names no metric of the
       task or cannot be reached (``precision=60``): refused before any work
3      model or endpoint failure: items failed because a model call failed (``ModelError``,
       ``EndpointUnavailable`` and the other endpoint errors), or ``ask`` got no answer
4      a CI gate fell short: a ``--fail-under`` metric is below its threshold or unmeasured
130    interrupted by Ctrl-C (143: by SIGTERM); the finished records are kept, and the same
       command resumes the run
=====  ==========================================================================================

When several apply, the first in this order wins: 130, 2 or 3 (failed items), 4. Every non-zero
status is explained by one line on stderr. Whether an error is 2 or 3 is its type's
(:data:`citegraph.errors.EXIT_STATUSES`, along the class's MRO), whether it stopped the command
or failed items (their records store it as ``error_type``; records without one are judged by the
error type their text names, as before types were stored).
"""

from __future__ import annotations

import shlex
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import click
from pydantic import ValidationError

from citegraph.cli._streams import console, err_console, markup_escaped
from citegraph.errors import FAILURE_STATUS, USAGE_STATUS, CitegraphError, exit_status_of
from citegraph.io import redact_args
from citegraph.runs import (
    CommandRuns,
    DryRunFinished,
    FinishedRun,
    RunInterrupted,
    check_gates,
    collecting_runs,
    exit_status,
    graceful_interrupts,
    parse_thresholds,
    read_run_info,
    stop_requested,
    task_of_run,
    tokens_line,
)

OK = 0
INTERNAL = 1
USAGE = USAGE_STATUS
MODEL = FAILURE_STATUS
GATE = 4
INTERRUPTED = 130

EXIT_CODES_HELP = (
    "Exit status: 0 success; 1 internal error; 2 usage or input error (bad options or data, "
    "items failed on their input); 3 model or endpoint failure (items failed because a model "
    "call failed; ask got no answer); 4 a --fail-under gate fell short; 130 interrupted (143 "
    "on SIGTERM: the finished records are kept, the same command resumes). --allow-failures "
    "exits 0 when items failed."
)
"""The exit status table in one paragraph (``citegraph --help``)."""


@dataclass(frozen=True)
class ExitPolicy:
    """What a command's own options say about its exit status: ``--allow-failures``,
    ``--fail-under`` thresholds and ``--allow-unmeasured``."""

    allow_failures: bool = False
    fail_under: Mapping[str, float] = field(default_factory=dict)
    allow_unmeasured: bool = False

    @classmethod
    def pop_from(cls, options: dict[str, Any], *, task: str | None = None) -> ExitPolicy:
        """The policy of a command's options (popped: the command never sees them), its
        ``--fail-under`` texts checked against the metrics of ``task`` (the task whose runs the
        command gates; see :func:`citegraph.runs.parse_thresholds`).

        Raises:
            ConfigError: a ``--fail-under`` entry is malformed, names no metric of ``task``, or
                has a threshold that is negative or (for a fraction) above 1.
        """
        fail_under = options.pop("fail_under", None) or {}
        if not isinstance(fail_under, Mapping):  # the option's texts
            fail_under = parse_thresholds(fail_under, task=task)
        return cls(
            allow_failures=bool(options.pop("allow_failures", False)),
            fail_under=dict(fail_under),
            allow_unmeasured=bool(options.pop("allow_unmeasured", False)),
        )


def gated_task(options: Mapping[str, Any]) -> str | None:
    """The task whose metrics a command's ``--fail-under`` names: for ``runs report RUN_DIR``
    the task in the run's ``run.json``; else the command's own (``kalma score`` runs the task
    ``kalma.score``: group and command name the task). ``None`` without ``--fail-under``, or
    when the run directory cannot tell (the command then says why)."""
    if not options.get("fail_under"):
        return None
    run_dir = options.get("run_dir")
    if run_dir is not None:
        try:
            return task_of_run(read_run_info(run_dir), run_dir).name
        except CitegraphError:
            return None
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.parent is None:
        return None
    return f"{ctx.parent.command.name}.{ctx.command.name}"


def code_for_error(exc: CitegraphError) -> int:
    """The exit status of a command stopped by ``exc``: its class's in
    :data:`citegraph.errors.EXIT_STATUSES` (along its MRO): 3 for a model or endpoint failure,
    2 for everything else (a missing optional dependency is a setup problem, a busy run
    directory is taken: 2)."""
    return exit_status_of(exc) or USAGE


def _say(line: str) -> None:
    """Print a markup ``line`` on stderr (its untrusted parts passed through
    :func:`markup_escaped`)."""
    err_console.print(line, markup=True, highlight=False, soft_wrap=True)


def _stop(code: int) -> NoReturn:
    sys.exit(code)


def guarded(func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """Check the command's ``--fail-under`` gates (exit 2 before any work when one is
    malformed, names no metric of the command's task, or cannot be reached), run its body with
    the graceful Ctrl-C handlers and its runs collected, then exit with the status of the table
    in this module (what :func:`reports_errors` wraps every command in)."""
    try:  # before any work: a gate that can never pass wastes the whole run
        policy = ExitPolicy.pop_from(kwargs, task=gated_task(kwargs))
    except CitegraphError as exc:
        _say(f"[bold red]error:[/] {markup_escaped(str(exc))}")
        _stop(USAGE)
    with graceful_interrupts(), collecting_runs() as runs:
        try:
            result = func(*args, **kwargs)
        except DryRunFinished as exc:  # nothing was written: print the counts, exit 0
            for line in exc.report.lines():
                console.print(line, markup=False, highlight=False, soft_wrap=True)
            return None
        except RunInterrupted as exc:
            _interrupted(exc.signum, runs, exc)
        except KeyboardInterrupt:
            _interrupted(stop_requested() or signal.SIGINT, runs, None)
        except CitegraphError as exc:
            _say(f"[bold red]error:[/] {markup_escaped(str(exc))}")
            _stop(code_for_error(exc))
        except ValidationError as exc:  # a config model refused an option value
            for problem in exc.errors():
                where = "--" + "-".join(str(p).replace("_", "-") for p in problem["loc"])
                _say(
                    f"[bold red]error:[/] {where}: {markup_escaped(problem['msg'])} "
                    f"(got {markup_escaped(repr(problem.get('input')))})"
                )
            _stop(USAGE)
    for run in runs.finished:  # the chat calls' token totals, one line a run
        tokens = tokens_line(run.metrics)
        if tokens:
            console.print(tokens, markup=False, highlight=False, soft_wrap=True)
    code = judge_runs(runs.finished, policy)
    if code:
        _stop(code)
    return result


def resume_command() -> str:
    """The command that resumes an interrupted run: this one, without ``--overwrite`` (which
    would start the run afresh), URLs' credentials written as ``***``
    (:func:`citegraph.io.redact_args`: a hint on stderr may end up in a log), with a note to
    give them again when it hid any."""
    args = [a for a in sys.argv[1:] if a != "--overwrite"]
    shown = redact_args(args)
    line = " ".join(shlex.quote(a) for a in ["citegraph", *shown])
    if sum(a.count("***") for a in shown) > sum(a.count("***") for a in args):
        line += " (credentials shown as ***: give them again)"
    return line


def _interrupted(signum: int, runs: CommandRuns, exc: RunInterrupted | None) -> NoReturn:
    name = signal.Signals(signum).name
    if exc is not None:
        kept = f"{exc.n_done_now} item(s) finished in this call are kept in {exc.out}"
        _say(
            f"[yellow]interrupted ({name}):[/] {markup_escaped(kept)}, {exc.n_left} left; "
            f"resume with: {markup_escaped(resume_command())}"
        )
    elif runs.started:
        _say(
            f"[yellow]interrupted ({name}):[/] the finished records are kept in "
            f"{markup_escaped(str(runs.started[-1]))}; resume with: "
            f"{markup_escaped(resume_command())}"
        )
    else:
        _say(f"[yellow]interrupted ({name})[/]")
    _stop(exit_status(signum))


def judge_runs(finished: Sequence[FinishedRun], policy: ExitPolicy) -> int:
    """The exit status of a command's finished runs (0, 2, 3 or 4), each reason said on stderr:
    failed items first (unless allowed), then the ``--fail-under`` gates of every run (those
    that pass are said on stdout)."""
    failed = [run for run in finished if run.n_failed and run.failure is not None]
    if failed and not policy.allow_failures:
        run = failed[0]
        failure = run.failure
        assert failure is not None
        code = USAGE if failure.kind == "input" else MODEL
        what = "input error" if failure.kind == "input" else "model or endpoint failure"
        n_failed = sum(r.n_failed for r in failed)
        n_items = sum(r.n_items for r in failed)
        _say(
            f"[bold red]error:[/] {n_failed} of {n_items} items failed ({what}); first: "
            f"{markup_escaped(failure.id)}: {markup_escaped(failure.error)}. Re-run the same "
            "command to retry them, or pass --allow-failures to exit 0 anyway."
        )
        return code
    if not policy.fail_under:
        return OK
    short = []
    for run in finished:
        try:
            checks = check_gates(
                run.metrics, policy.fail_under, allow_unmeasured=policy.allow_unmeasured
            )
        except CitegraphError as exc:
            _say(f"[bold red]error:[/] --fail-under: {markup_escaped(str(exc))}")
            return USAGE
        where = f" ({run.out})" if len(finished) > 1 else ""
        for check in checks:
            if check.passed:
                console.print(f"passed: {check.describe()}{where}", highlight=False, markup=False)
            else:
                short.append(f"{check.describe()}{where}")
    for line in short:
        _say(f"[bold red]fell short:[/] {markup_escaped(line)}")
    return GATE if short else OK
