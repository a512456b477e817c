"""``citegraph kalma run``: generate attributed answers over a benchmark and score them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from citegraph.cli._console import command_line, console, reports_errors
from citegraph.cli._options import (
    contact_option,
    data_dir_option,
    engine_options,
    options_from_model,
    run_dir_options,
    runtime_from,
    showing_progress,
)
from citegraph.kalma import (
    KalmaBuildConfig,
    KalmaRunConfig,
    KalmaRunResult,
    build_benchmark,
    run_kalma,
)
from citegraph.kalma.run import summarise_seeds
from citegraph.runs import METRICS_FILE, Runtime


@click.command("run")
@options_from_model(KalmaRunConfig, exclude=("seed",))
@engine_options
@click.option(
    "--seeds",
    default="0",
    show_default=True,
    help="Comma-separated seeds. Several seeds run one sub-run each (out/seed-<s>) and write "
    "summary.json with mean and standard deviation, as the paper's Table 3 reports.",
)
@contact_option
@data_dir_option
@run_dir_options
@reports_errors
def run_command(
    seeds: str,
    contact: str | None,
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
    **options: Any,
) -> None:
    """Answer a benchmark split with citations (KaLMA §3) and score the answers (§4)."""
    from citegraph.cli._kalma import print_metrics

    runtime = runtime_from(options, overwrite=overwrite)
    seed_list = _seeds(seeds)
    all_metrics = []
    for seed in seed_list:
        config = KalmaRunConfig(**options, seed=seed)
        target = out if len(seed_list) == 1 else out / f"seed-{seed}"
        result = run_one(target, config, runtime, data_dir, contact, overwrite)
        print_metrics(result.metrics)
        print_run_extras(result)
        all_metrics.append(result.metrics)
    if len(seed_list) > 1:
        summary = summarise_seeds(all_metrics)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        _print_summary(summary)
        console.print(f"Wrote {out / 'summary.json'}")


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"--seeds takes integers like 0,1,2; got {text!r}") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise click.BadParameter("--seeds needs distinct integers")
    return seeds


def run_one(
    out: Path,
    config: KalmaRunConfig,
    runtime: Runtime,
    data_dir: Path | None,
    contact: str | None,
    overwrite: bool,
) -> KalmaRunResult:
    """Run one seed with a progress bar and the resume / failure notes."""
    runtime = runtime.model_copy(
        update={"overwrite": overwrite, "command": runtime.command or command_line()}
    )
    asked = (
        f"your questions ({config.questions}) over {config.kg}"
        if config.questions is not None
        else f"{config.split} questions"
    )
    console.print(
        f"kalma run: {asked}, model {config.model}, prompt {config.prompt}, "
        f"seed {config.seed} -> {out}"
    )
    with showing_progress(runtime, "answering questions") as live:
        result = run_kalma(
            out,
            config,
            runtime=live,
            data_dir=data_dir,
            contact=contact,
        )
    if result.n_resumed:
        console.print(f"Resumed: {result.n_resumed} questions were already done in {out}.")
    if result.n_failed:
        console.print(
            f"{result.n_failed} questions have no answer because the model call failed; "
            "run the same command again to retry them.",
            style="yellow",
        )
    return result


def print_run_extras(result: KalmaRunResult) -> None:
    """Print generation, retrieval, text quality and gold notes of a run."""
    m = result.metrics
    gen = m["generation"]
    console.print(
        f"Generation: {gen['n_questions']} questions, {gen['n_failed']} failed, "
        f"{gen['n_empty']} empty, {gen['n_cached']} from cache, finish {gen['finish_reasons']}."
    )
    if m.get("retrieval"):
        r = m["retrieval"]
        console.print(f"Retrieval accuracy: {json.dumps(_short(r))}")
    if m.get("text_quality"):
        console.print(f"Text quality: {json.dumps(_short(m['text_quality']))}")
    if m["setup"].get("gold_note"):
        console.print(f"Gold: {m['setup']['gold_note']}", style="yellow")
    console.print(f"Wrote {result.out / METRICS_FILE}")


def _short(obj: Any) -> Any:
    if isinstance(obj, float):
        return round(obj, 4)
    if isinstance(obj, dict):
        return {k: _short(v) for k, v in obj.items() if not isinstance(v, (list, tuple))}
    return obj


def _print_summary(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"Mean (std) over {summary['n_runs']} seeds {summary['seeds']}")
    table.add_column("metric")
    table.add_column("micro", justify="right")
    table.add_column("macro", justify="right")
    for name, cells in summary.items():
        if not isinstance(cells, dict) or "micro" not in cells:
            continue
        table.add_row(name, _mean_std(cells["micro"]), _mean_std(cells["macro"]))
    console.print(table)


def _mean_std(cell: dict[str, Any]) -> str:
    if "f1_of_means" in cell and cell["f1_of_means"] is not None:
        return f"{100 * cell['f1_of_means']:.1f}"
    if cell.get("mean") is None:
        return "unmeasured"
    std = "" if cell.get("std") is None else f" ({100 * cell['std']:.1f})"
    return f"{100 * cell['mean']:.1f}{std}"


@click.command("build")
@options_from_model(KalmaBuildConfig)
@engine_options
@data_dir_option
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Dataset directory.")
@click.option("--overwrite", is_flag=True, help="Replace a different build in --out.")
@reports_errors
def build_command(
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
    **options: Any,
) -> None:
    """Build a KaLMA benchmark with gold knowledge from a KG (evolutionary question generation).

    --concurrency: items evolving at once (default: the model's request limit).
    """
    runtime = runtime_from(options, overwrite=overwrite)
    config = KalmaBuildConfig(**options)
    source = config.pairs or f"{config.sample_pairs} pairs sampled from the KG"
    console.print(
        f"kalma build: {source}, KG {config.kg}, model {config.model}, LM {config.lm}, "
        f"{config.rounds} rounds, alpha {config.alpha} -> {out}"
    )
    with showing_progress(runtime, "building items") as live:
        result = build_benchmark(
            out,
            config,
            runtime=live,
            data_dir=data_dir,
        )
    m = result.metrics
    sel, stats = m["selection"], m["stats"]
    console.print(
        f"Pairs: {sel['n_pairs']} given, {sel['n_incomplete_names']} incomplete names, "
        f"{sel['n_resolved']} resolved, {sel['n_ambiguous']} ambiguous, "
        f"{sel['n_unresolved']} unresolved."
    )
    console.print(
        f"Items: {result.n_items} built ({result.n_resumed} resumed), {result.n_failed} failed "
        f"(run again to retry). Facts per question: {stats['facts_per_question']}; "
        f"{stats['n_relations']} relations, {stats['n_occupations']} occupations."
    )
    checks = stats["checks"]
    console.print(
        f"Checks: {len(checks['gold_facts_not_in_kg'])} gold facts not in the KG, "
        f"{len(checks['questions_not_mentioning_their_people'])} questions missing a person, "
        f"fallbacks {checks['n_fallbacks']}, {checks['n_injected_not_cited']} injected facts "
        "not cited by the model."
    )
    console.print(
        f"Wrote {out}: simple_question_graph.json, complex_question_graph.json, gold.jsonl, "
        "stats.json, human_check.csv, samples.jsonl. Next: citegraph kalma run --dataset "
        f"{out} --model ..."
    )
