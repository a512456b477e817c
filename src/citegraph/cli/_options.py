"""Click options generated from a pydantic config model, so CLI flags mirror config fields.

Each field becomes ``--field-name`` with the field's description as help: ``Literal`` fields are
choices, ``bool`` fields are ``--name/--no-name`` flags, ``int`` and ``str`` fields take a value,
``tuple[str, ...]`` fields are repeatable options and ``dict[str, str]`` fields repeatable
``NAME=VALUE`` options. A field's ``json_schema_extra`` may name its ``flag`` (``--prefix`` for
``prefixes``) and ``metavar``.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import BaseModel

from citegraph.cli._console import command_line, progress_bar, warn
from citegraph.errors import ConfigError
from citegraph.io import ServerURL, check_base_url
from citegraph.kg import KGOptions
from citegraph.models.hf import DEVICE_HELP, DTYPE_HELP
from citegraph.runs import Runtime

F = TypeVar("F", bound=Callable[..., Any])


def _click_type(annotation: Any) -> tuple[Any, bool]:
    """The click type of a field annotation and whether the annotation admits None."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:  # ServerURL: a str that its dumps redact
        return _click_type(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        inner, _ = _click_type(args[0])
        return inner, True
    if origin is typing.Literal:
        return click.Choice([str(a) for a in typing.get_args(annotation)]), False
    return annotation, False


def _pairs(
    flag: str,
) -> Callable[[click.Context, click.Parameter, tuple[str, ...]], dict[str, str]]:
    """A click callback turning repeated ``NAME=VALUE`` texts into a dict (exit 2, naming the
    option, for a text without ``=`` or a name given twice with two values)."""

    def parse(
        ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
    ) -> dict[str, str]:
        out: dict[str, str] = {}
        for text in values:
            name, eq, value = text.partition("=")
            name, value = name.strip(), value.strip()
            if not eq or not name or not value:
                raise click.BadParameter(f"expects NAME=VALUE, got {text!r}", param_hint=flag)
            if out.get(name, value) != value:
                raise click.BadParameter(
                    f"{name} is given twice ({out[name]} and {value})", param_hint=flag
                )
            out[name] = value
        return out

    return parse


def _is_server_url(annotation: Any) -> bool:
    """Whether a field holds a model server's URL (:data:`citegraph.io.ServerURL`)."""
    return annotation == ServerURL or ServerURL in typing.get_args(annotation)


def _checked_url(
    flag: str,
) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A click callback refusing a malformed server URL before any work (exit 2, the reason,
    the URL's secrets masked: :func:`citegraph.io.check_base_url`)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check_base_url(value.strip(), what=flag)
        except ConfigError as exc:
            raise click.BadParameter(str(exc).removeprefix(f"{flag} "), param_hint=flag) from None

    return check


def _extra(field: Any) -> dict[str, Any]:
    extra = field.json_schema_extra
    return extra if isinstance(extra, dict) else {}


def options_from_model(
    model: type[BaseModel], *, exclude: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a click command with one option per field of ``model``."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for name, field in reversed(list(model.model_fields.items())):
            if name in exclude:
                continue
            extra = _extra(field)
            flag = str(extra.get("flag") or "--" + name.replace("_", "-"))
            metavar = extra.get("metavar")
            origin = typing.get_origin(field.annotation)
            help_text = (field.description or "").replace("%", "%%")
            if origin in (tuple, dict):
                func = click.option(
                    flag,
                    name,
                    multiple=True,
                    metavar=metavar,
                    callback=_pairs(flag) if origin is dict else None,
                    help=help_text,
                )(func)
                continue
            kind, _ = _click_type(field.annotation)
            checked = _checked_url(flag) if _is_server_url(field.annotation) else None
            if kind is bool:
                decl = f"{flag}/--no-{name.replace('_', '-')}"
                func = click.option(
                    decl, name, default=field.default, show_default=True, help=help_text
                )(func)
            else:
                required = field.is_required()
                default = None if required else field.default
                func = click.option(
                    flag,
                    name,
                    type=kind,
                    required=required,
                    default=default,
                    show_default=default is not None,
                    metavar=metavar,
                    callback=checked,
                    help=help_text,
                )(func)
        return func

    return decorate


kg_reading_options = options_from_model(KGOptions)
"""``--label-predicate``, ``--prefix``, ``--kg-cache`` and ``--kg-cache-max-age`` (the fields of
:class:`citegraph.kg.KGOptions`) for a command that opens ``--kg`` itself; read them back with
:func:`kg_options_from`. Commands whose config inherits ``KGOptions`` get them from
:func:`options_from_model` of the config."""


def kg_options_from(options: dict[str, Any], *, cache: bool = True) -> KGOptions:
    """The :class:`~citegraph.kg.KGOptions` of :data:`kg_reading_options` (popped from
    ``options``); ``cache=False`` turns the KG's cache off."""
    given = {name: options.pop(name) for name in KGOptions.model_fields if name in options}
    return KGOptions(**given).kg_options(cache=cache)


KG_HELP = (
    "biokalma, codex-s, wikidata, qlever, sparql+<url>, or RDF file paths (.nt .ttl .nq .trig "
    ".rdf .xml .owl .jsonld, several joined by ',')."
)

kg_option = click.option("--kg", "kg_spec", default="biokalma", show_default=True, help=KG_HELP)
"""``--kg``: the KG spec :func:`citegraph.kg.open_kg` takes."""

contact_option = click.option(
    "--contact", default=None, help="Your e-mail/URL for Wikidata's User-Agent policy."
)
"""``--contact``: goes into the User-Agent Wikidata requires."""

EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
"""The click type of an argument or option naming a file that must exist."""

EXISTING_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
"""The click type of an argument or option naming a directory that must exist (a run)."""

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Where the datasets are (default: $CITEGRAPH_DATA, ../shared/data, the download dir).",
)
"""``--data-dir``: see :func:`citegraph.datasets.resolve_data_dir`."""


def run_dir_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--out`` (a run directory, required) and ``--overwrite``."""
    func = click.option("--overwrite", is_flag=True, help="Replace a different run in --out.")(func)
    return click.option(
        "--out", type=click.Path(path_type=Path), required=True, help="Run directory."
    )(func)


limit_option = click.option(
    "--limit", type=int, default=None, help="Only the first N items (a run can grow later)."
)
"""``--limit``: run on the first N items; a later, larger limit resumes the run."""


def _count_option(flag: str, help_text: str) -> Callable[[F], F]:
    """An option taking a whole number >= 1, None when not given (the task's own default)."""
    return click.option(flag, type=click.IntRange(min=1), default=None, help=help_text)


def device_options(func: F) -> F:
    """``--device`` and ``--dtype``: where local models (NLI, T5, rerankers, embeddings, LMs,
    local chat models) run and in which dtype; a server's models ignore them."""
    func = click.option(
        "--dtype", default="auto", show_default=True, metavar="auto|float32|bfloat16|float16",
        help=f"Local models' dtype: {DTYPE_HELP} Recorded with the numbers (dtype moves them).",
    )(func)  # fmt: skip
    return click.option(
        "--device", default="auto", show_default=True, metavar="auto|cpu|cuda[:i]|mps",
        help=f"Where local models run: {DEVICE_HELP}",
    )(func)  # fmt: skip


def outcome_options(func: F) -> F:
    """``--allow-failures``, ``--fail-under`` and ``--allow-unmeasured``: what sets the exit
    status of a command that runs a task (read by the command wrapper,
    :mod:`citegraph.cli._exit`, which checks the ``--fail-under`` texts against the command's
    task before the command starts; the command itself never sees them)."""
    func = click.option(
        "--allow-unmeasured",
        is_flag=True,
        help="With --fail-under: an unmeasured metric (None, every sample unmeasured) passes.",
    )(func)
    func = click.option(
        "--fail-under",
        "fail_under",
        multiple=True,
        metavar="METRIC=VALUE[,...]",
        help="CI gate: exit 4 when a metric of metrics.json is below VALUE (a fraction such as "
        "0.6, or a percentage: 60%; a fraction's VALUE above 1 is refused), naming it on "
        "stderr. METRIC is a short name of the command's metrics (precision, factuality, "
        "micro_f1) or a dotted path into metrics.json (precision.macro); names and values are "
        "checked before any work (exit 2).",
    )(func)
    return click.option(
        "--allow-failures",
        is_flag=True,
        help="Exit 0 even when items failed (by default: 3 for model or endpoint failures, 2 "
        "for input errors).",
    )(func)


def deadline_options(func: F) -> F:
    """``--timeout``, ``--total-timeout`` and ``--max-response-mb``: how long a model server may
    take and how much it may send (chat models and served scorers); read back by
    :func:`runtime_from`."""
    func = click.option(
        "--max-response-mb",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="MIB",
        help="Most MiB one model-server answer may hold, decoded; a larger one (announced, "
        "streamed or compressed) fails the item, saying so (default: 32).",
    )(func)
    func = click.option(
        "--total-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help="Most seconds one model call of an item may take, every attempt and backoff wait "
        "included; past it the item fails, saying so (default: no bound).",
    )(func)
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help="Most seconds one attempt at a model call may take as a whole, the answer read "
        "included (a server trickling bytes is cut too); then it is retried (default: 120).",
    )(func)


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The engine's runtime options, the same on every command that runs a task: ``--limit``,
    ``--shard``, ``--concurrency``, ``--batch-size``, ``--no-cache``, ``--timeout``,
    ``--total-timeout`` and the executor
    (``--engine ray`` with ``--ray-address``, ``--ray-actors``, ``--ray-gpus-per-actor``; see
    :class:`citegraph.runs.Runtime`); read them back with :func:`runtime_from`. Then the
    exit status options of :func:`outcome_options`."""
    func = outcome_options(func)
    func = click.option(
        "--price-out",
        type=click.FloatRange(min=0),
        default=None,
        metavar="DOLLARS",
        help="With --dry-run: dollars per million completion tokens (for an estimated cost).",
    )(func)
    func = click.option(
        "--price-in",
        type=click.FloatRange(min=0),
        default=None,
        metavar="DOLLARS",
        help="With --dry-run: dollars per million prompt tokens (for an estimated cost).",
    )(func)
    func = click.option(
        "--dry-run",
        "dry_run",
        is_flag=True,
        help="Build the prompts and print the model calls and prompt tokens (an estimate: "
        "characters/4) without calling or loading a chat model; writes no run directory.",
    )(func)
    func = click.option(
        "--ray-gpus-per-actor",
        type=click.FloatRange(min=0),
        default=0.0,
        help="With --engine ray: GPUs each actor holds (its models are loaded on them).",
    )(func)
    func = _count_option(
        "--ray-actors", "With --engine ray: actors in the pool (default: one per CPU or GPU)."
    )(func)
    func = click.option(
        "--ray-address",
        default=None,
        metavar="auto|ray://HOST:10001",
        help="With --engine ray: the cluster to join (default: a local Ray on this machine).",
    )(func)
    func = click.option(
        "--engine",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Run the work in this process, or on a Ray actor pool (pip install "
        "'citegraph[ray]'); records and metrics are the same.",
    )(func)
    func = click.option("--no-cache", "no_cache", is_flag=True, help="Skip the response cache.")(
        func
    )
    func = deadline_options(func)
    func = device_options(func)
    func = _count_option(
        "--max-batch",
        "Most requests a local chat model (hf/..., local) puts in one generate call (default: "
        "8 on CPU, 32 on CUDA; 1: one at a time; the replies are the same at temperature 0).",
    )(func)
    func = _count_option("--batch-size", "Items per model call (default: the task's).")(func)
    func = _count_option(
        "--concurrency", "Model calls in flight at once (default: the model's or the task's)."
    )(func)
    func = click.option(
        "--shard",
        default=None,
        metavar="i/N",
        help="Run only this machine's share (0-based); merge shards with `citegraph runs merge`.",
    )(func)
    return limit_option(func)


def task_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options every command that runs a task into a run directory takes after its
    config's: the engine's (:func:`engine_options`), ``--data-dir`` (:data:`data_dir_option`),
    then ``--out`` and ``--overwrite`` (:func:`run_dir_options`), in that order in ``--help``."""
    return engine_options(data_dir_option(run_dir_options(func)))


def runtime_from(
    options: dict[str, Any],
    *,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Runtime:
    """The :class:`~citegraph.runs.Runtime` of a command's :func:`engine_options` (popped from
    ``options``), with the command line recorded."""
    return Runtime(
        limit=options.pop("limit", None),
        shard=options.pop("shard", None),
        concurrency=options.pop("concurrency", None),
        batch_size=options.pop("batch_size", None),
        cache=not options.pop("no_cache", False),
        timeout=options.pop("timeout", None),
        total_timeout=options.pop("total_timeout", None),
        max_response_mb=options.pop("max_response_mb", None),
        engine=options.pop("engine", "local"),
        ray_address=options.pop("ray_address", None),
        ray_actors=options.pop("ray_actors", None),
        ray_gpus_per_actor=options.pop("ray_gpus_per_actor", 0.0) or 0.0,
        device=options.pop("device", "auto"),
        dtype=options.pop("dtype", "auto"),
        max_batch=options.pop("max_batch", None),
        dry_run=bool(options.pop("dry_run", False)),
        price_in=options.pop("price_in", None),
        price_out=options.pop("price_out", None),
        overwrite=overwrite,
        command=command_line(),
        progress=progress,
        notify=warn,
    )


@contextmanager
def showing_progress(runtime: Runtime, description: str) -> Iterator[Runtime]:
    """``runtime`` reporting its progress to a :func:`~citegraph.cli._console.progress_bar`
    labelled ``description``, shown while the block runs, and printing the run's notes
    (``Runtime.notify``) as warnings."""
    with progress_bar(description) as update:
        yield runtime.model_copy(update={"progress": update, "notify": runtime.notify or warn})
