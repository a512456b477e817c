"""``citegraph conner``: acquire knowledge (generate, retrieve), score it from six perspectives,
select the best, and correlate the metrics with human ratings (the CONNER paper)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import click

from citegraph.cli._console import console, note_failed, reports_errors, warn
from citegraph.cli._options import (
    EXISTING_FILE,
    options_from_model,
    runtime_from,
    showing_progress,
    task_options,
)
from citegraph.conner import (
    ConnerGenerateConfig,
    ConnerKnowledgeResult,
    ConnerRetrieveConfig,
    ConnerScoreConfig,
    ConnerSelectConfig,
    correlate_runs,
    generate_run,
    retrieve_run,
    score_knowledge,
    select_run,
)
from citegraph.conner.correlate import Method, render_correlations
from citegraph.conner.score import render_score, stand_in_warning


@click.group("conner")
def conner_group() -> None:
    """CONNER: reference-free evaluation of generated or retrieved knowledge."""


def _report_acquired(result: ConnerKnowledgeResult) -> None:
    m = result.metrics
    words = "-" if m["mean_words"] is None else f"{m['mean_words']:.1f}"
    console.print(
        f"{m['n_knowledge']} knowledge texts for {result.n_samples} items "
        f"({m['n_empty']} empty, {result.n_failed} failed; {result.n_resumed} resumed), "
        f"{words} words on average, source {', '.join(m['sources']) or '-'} -> {result.out}",
        highlight=False,
        soft_wrap=True,
    )
    if result.n_failed:
        console.print(
            f"failed (re-run the command to retry): {'; '.join(m['errors'])}", style="yellow"
        )


@conner_group.command("generate")
@options_from_model(ConnerGenerateConfig)
@task_options
@reports_errors
def generate_command(data_dir: Path | None, out: Path, overwrite: bool, **options: Any) -> None:
    """Generate knowledge for a task's test items with a chat model (Tables 11-12 prompts)."""
    runtime = runtime_from(options, overwrite=overwrite)
    config = ConnerGenerateConfig(**options)
    with showing_progress(runtime, "generating knowledge") as live:
        result = generate_run(out, config, data_dir=data_dir, runtime=live)
    _report_acquired(result)


@conner_group.command("retrieve")
@options_from_model(ConnerRetrieveConfig)
@task_options
@reports_errors
def retrieve_command(data_dir: Path | None, out: Path, overwrite: bool, **options: Any) -> None:
    """Retrieve knowledge for a task's test items from a passage corpus (dense embeddings)."""
    runtime = runtime_from(options, overwrite=overwrite)
    config = ConnerRetrieveConfig(**options)
    _report_acquired(retrieve_run(out, config, data_dir=data_dir, runtime=runtime))


@conner_group.command("score")
@click.argument("knowledge")
@options_from_model(ConnerScoreConfig, exclude=("knowledge", "metrics"))
@click.option(
    "--metrics",
    default="all",
    show_default=True,
    help="Comma-separated metrics, or 'all': factuality, relevance, coherence_sent, "
    "coherence_para, informativeness, helpfulness, validity.",
)
@task_options
@reports_errors
def score_command(
    knowledge: str,
    metrics: str,
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
    **options: Any,
) -> None:
    """Score KNOWLEDGE ('gold', a knowledge run directory or a JSONL file of {id, text}) for a
    task's test items: factuality, relevance, coherence, informativeness, helpfulness, validity.

    Items are scored 16 per model call unless --batch-size says otherwise; --no-cache skips the
    answer model's response cache."""
    runtime = runtime_from(options, overwrite=overwrite)
    chosen: dict[str, Any] = {} if metrics.strip() == "all" else {"metrics": metrics}
    config = ConnerScoreConfig(knowledge=knowledge, **chosen, **options)
    with showing_progress(runtime, "scoring knowledge") as live:
        result = score_knowledge(out, config, data_dir=data_dir, runtime=live)
    console.print(render_score(result.metrics), markup=False, highlight=False, soft_wrap=True)
    warn(stand_in_warning(config))
    note_failed(result.n_failed, "items")
    console.print(
        f"{result.n_samples} items ({result.n_resumed} resumed) in "
        f"{result.metrics['seconds']} s -> {result.out}",
        highlight=False,
    )


#: Score options that ``conner select`` takes from the generation config or sets itself.
_SELECT_SCORE_EXCLUDE = (
    "knowledge",
    "metrics",
    "task",
    "split",
    "seed",
    "base_url",
    "u",
    "answer_model",
    "answer_shots",
)


@conner_group.command("select")
@options_from_model(ConnerSelectConfig, exclude=("weights",))
@click.option(
    "--weights",
    default="1,1,1,1",
    show_default=True,
    help="γ for factuality, relevance, coherence_para, informativeness (Eq. 9; the paper "
    "does not give its values).",
)
@options_from_model(ConnerGenerateConfig, exclude=("temperature", "top_p"))
@click.option("--temperature", type=float, default=1.0, show_default=True, help="Sampling.")
@click.option("--top-p", "top_p", type=float, default=0.9, show_default=True, help="Paper: 0.9.")
@options_from_model(ConnerScoreConfig, exclude=_SELECT_SCORE_EXCLUDE)
@task_options
@reports_errors
def select_command(data_dir: Path | None, out: Path, overwrite: bool, **options: Any) -> None:
    """Sample --candidates knowledge texts per item, score them, keep the best by Eq. 9 (§5).

    The output is a knowledge run: score it with 'conner score OUT'."""
    runtime = runtime_from(options, overwrite=overwrite)
    parts: dict[str, dict[str, Any]] = {"select": {}, "generate": {}, "score": {}}
    for name, value in options.items():
        if name in ConnerSelectConfig.model_fields:
            parts["select"][name] = value
        elif name in ConnerGenerateConfig.model_fields:
            parts["generate"][name] = value
        else:
            parts["score"][name] = value
    config = ConnerSelectConfig(**parts["select"])
    generate = ConnerGenerateConfig(**parts["generate"])
    score = ConnerScoreConfig(knowledge="-", **parts["score"])
    with showing_progress(runtime, "selecting knowledge") as live:
        result = select_run(
            out, config, generate=generate, score=score, data_dir=data_dir, runtime=live
        )
    _report_acquired(result)


@conner_group.command("correlate")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--ratings",
    type=EXISTING_FILE,
    required=True,
    help="CSV: id,<metric>,... with human ratings 0/1/2 (blank: not rated).",
)
@click.option(
    "--methods", default="somers_d,spearman", show_default=True, help="somers_d, spearman, pearson."
)
@click.option(
    "--somers-given",
    type=click.Choice(["rating", "metric"]),
    default="rating",
    show_default=True,
    help="Somers' D(metric | rating) (default) or D(rating | metric).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@reports_errors
def correlate_command(
    runs: tuple[Path, ...], ratings: Path, methods: str, somers_given: str, as_json: bool
) -> None:
    """Correlate score runs' metrics with human ratings (Somers' D, Spearman; §6, Table 9)."""
    chosen = cast(list[Method], [m.strip() for m in methods.split(",") if m.strip()])
    results = correlate_runs(
        runs,
        ratings,
        methods=chosen,
        somers_given="metric" if somers_given == "metric" else "rating",
    )
    if as_json:
        payload = {run: [r.model_dump(mode="json") for r in rows] for run, rows in results.items()}
        click.echo(json.dumps(payload, indent=2))
        return
    console.print(render_correlations(results), markup=False, highlight=False, soft_wrap=True)
