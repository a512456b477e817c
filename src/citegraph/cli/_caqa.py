"""``citegraph caqa``: build attribution benchmarks from a KG, judge and fine-tune evaluators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from citegraph.caqa import (
    CaqaBuildConfig,
    CaqaFinetuneConfig,
    CaqaJudgeConfig,
    build_caqa,
    finetune,
    judge_caqa,
    load_caqa_split,
    render_report,
)
from citegraph.caqa.build import render_split_report, render_statistics
from citegraph.caqa.judge import compare_runs, render_comparison
from citegraph.cli._console import console, note_failed, progress_bar, reports_errors
from citegraph.cli._options import (
    options_from_model,
    runtime_from,
    showing_progress,
    task_options,
)


@click.group("caqa")
def caqa_group() -> None:
    """CAQA: attribution benchmarks from KGs, and benchmarking attribution evaluators."""


@caqa_group.command("build")
@options_from_model(CaqaBuildConfig, exclude=("categories",))
@task_options
@reports_errors
def build_command(data_dir: Path | None, out: Path, overwrite: bool, **options: Any) -> None:
    """Build a CAQA benchmark: extended queries, four attribution categories, text, splits.

    --shard i/N builds a share of the questions; `citegraph runs merge` of the shards makes the
    splits from all of them."""
    runtime = runtime_from(options, overwrite=overwrite)
    with showing_progress(runtime, "building CAQA samples") as live:
        result = build_caqa(out, CaqaBuildConfig(**options), data_dir=data_dir, runtime=live)
    m = result.metrics
    console.print(render_statistics(m["statistics"]), markup=False, soft_wrap=True)
    if "splits" in m:
        console.print(render_split_report(m["splits"]), markup=False, highlight=False)
    console.print(
        f"{result.n_samples} samples from {m['records']['ok']} questions "
        f"({m['records']['skipped']} skipped, {result.n_failed} failed; "
        f"{result.n_resumed} resumed) in {m['seconds']} s -> {result.out}",
        highlight=False,
    )
    if m["skipped"]:
        console.print(f"skipped: {m['skipped']}", highlight=False, markup=False)


@caqa_group.command("judge")
@click.argument("data")
@options_from_model(CaqaJudgeConfig, exclude=("data",))
@task_options
@reports_errors
def judge_command(
    data: str, data_dir: Path | None, out: Path, overwrite: bool, **options: Any
) -> None:
    """Judge samples (a CAQA split or 'attributionbench') with an evaluator and score it.

    Samples go to the evaluator in batches of --batch-size (default 8)."""
    runtime = runtime_from(options, overwrite=overwrite)
    config = CaqaJudgeConfig(data=data, **options)
    with showing_progress(runtime, "judging") as live:
        result = judge_caqa(out, config, data_dir=data_dir, runtime=live)
    console.print(render_report(result.report), markup=False, highlight=False, soft_wrap=True)
    note_failed(result.n_failed, "samples")
    console.print(f"-> {result.out}", highlight=False)


@caqa_group.command("finetune")
@click.argument("train", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@options_from_model(CaqaFinetuneConfig)
@click.option(
    "--dev",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A dev split scored after each epoch.",
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Folder for the fine-tuned model."
)
@click.option("--overwrite", is_flag=True, help="Replace a non-empty --out.")
@reports_errors
def finetune_command(
    train: Path, dev: Path | None, out: Path, overwrite: bool, **options: Any
) -> None:
    """Fine-tune an evaluator on a CAQA train split (§5.2); judge with it as cls/<out> (a
    classifier) or hf/<out> --prompt alpaca (a causal LM)."""
    config = CaqaFinetuneConfig(**options)
    train_samples = load_caqa_split(train)
    dev_samples = load_caqa_split(dev) if dev is not None else None
    with progress_bar("fine-tuning (steps)") as update:
        result = finetune(
            train_samples,
            config,
            out,
            dev=dev_samples,
            progress=lambda step, total, _info: update(step, total),
            overwrite=overwrite,
        )
    spec = f"cls/{result.out_dir}" if result.kind == "classifier" else f"hf/{result.out_dir}"
    console.print(
        f"{result.n_train} samples, {result.steps} steps, {result.epochs_run:g} epochs, final "
        f"loss {result.final_train_loss:.4f}"
        + (f", dev {result.dev}" if result.dev else "")
        + f" in {result.seconds:.1f} s -> {result.out_dir}\njudge with: --evaluator {spec}",
        highlight=False,
        soft_wrap=True,
    )


@caqa_group.command("compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the reports and correlation as JSON.")
@reports_errors
def compare_command(runs: tuple[Path, ...], as_json: bool) -> None:
    """Judge runs side by side (Tables 5-6), with kappa and the Pearson correlation of scores on
    automatic vs human labels when the runs had --human labels (§6.3)."""
    reports, correlation = compare_runs(runs)
    if as_json:
        payload = {
            "reports": [r.model_dump(mode="json") for r in reports],
            "pearson": correlation.model_dump(mode="json"),
        }
        click.echo(json.dumps(payload, indent=2))
        return
    console.print(render_comparison(reports, correlation), markup=False, soft_wrap=True)
