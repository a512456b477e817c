"""``citegraph kalma``: KaLMA commands (scoring attributed answers)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from citegraph.cli._console import console, progress_bar, reports_errors
from citegraph.cli._options import options_from_model
from citegraph.kalma import ScoreConfig, score_answers

_LABELS = {
    "correctness": "Correctness",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "alignment": "Alignment",
    "na_precision": "[NA] precision",
    "na_recall": "[NA] recall",
}


@click.group("kalma")
def kalma_group() -> None:
    """KaLMA: attributed answers citing KG triples, and their evaluation."""


@kalma_group.command("score")
@click.argument("answers", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@options_from_model(ScoreConfig)
@click.option(
    "--gold",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="gold.jsonl with minimum knowledge sets (and optional 'absent').",
)
@click.option("--data-dir", type=click.Path(path_type=Path), default=None)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Run directory.")
@click.option("--overwrite", is_flag=True, help="Replace a different run in --out.")
@reports_errors
def score(
    answers: Path,
    gold: Path | None,
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
    **options: Any,
) -> None:
    """Score attributed answers: citation quality, alignment and [NA] (KaLMA §4)."""
    config = ScoreConfig(**options)
    run_score(config, answers, gold, data_dir, out, overwrite)


def run_score(
    config: ScoreConfig,
    answers: Path,
    gold: Path | None,
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
) -> None:
    """Score, show progress, print the table (shared by ``kalma score`` and ``demo``)."""
    command = " ".join(shlex.quote(a) for a in ["citegraph", *sys.argv[1:]])
    with progress_bar("scoring answers") as update:
        result = score_answers(
            answers,
            out,
            config,
            gold_path=gold,
            data_dir=data_dir,
            overwrite=overwrite,
            command=command,
            progress=update,
        )
    if result.n_resumed:
        console.print(f"Resumed: {result.n_resumed} answers were already scored in {out}.")
    print_metrics(result.metrics)
    console.print(f"Wrote {out / 'metrics.json'} and {out / 'samples.jsonl'}")


def print_metrics(metrics: dict[str, Any]) -> None:
    """Render ``metrics.json`` as a rich table with the unmeasured counts and the setup."""
    cfg = metrics["config"]
    table = Table(
        title=f"KaLMA scores: {metrics['n_answers']} answers, {metrics['n_citations']} citations",
        caption=f"mode={cfg['mode']} parser={cfg['parser_version']} nli={cfg['nli_name']} "
        f"hypothesis={cfg['hypothesis']}",
    )
    table.add_column("metric")
    table.add_column("micro", justify="right")
    table.add_column("macro", justify="right")
    table.add_column("answers counted", justify="right")
    table.add_column("not measured (why)")
    for name, label in _LABELS.items():
        detail = metrics["details"][name]
        reasons = metrics["unmeasured"].get(name, {})
        why = "; ".join(f"{n}: {reason}" for reason, n in reasons.items())
        measured = detail["n"] - detail["n_unmeasured"] - detail["n_excluded"]
        table.add_row(
            label,
            _pct(metrics[name]["micro"]),
            _pct(metrics[name]["macro"]),
            f"{measured}/{metrics['n_answers']}",
            why,
        )
    console.print(table)


def _pct(value: float | None) -> str:
    return "unmeasured" if value is None else f"{100 * value:.1f}"
