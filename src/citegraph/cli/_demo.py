"""``citegraph demo``: the main job on an embedded default, offline.

Scores four hand-written attributed answers about real BioKaLMA people (shipped with the package,
with a hand-written gold file) using the deterministic lexical matcher: no server, model download
or API key.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from citegraph.cli._console import console, reports_errors
from citegraph.cli._kalma import run_score
from citegraph.kalma import ScoreConfig


@click.command("demo")
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("runs/demo"), show_default=True
)
@click.option("--data-dir", type=click.Path(path_type=Path), default=None)
@click.option(
    "--mode", type=click.Choice(["paper", "reference"]), default="paper", show_default=True
)
@reports_errors
def demo(out: Path, data_dir: Path | None, mode: str) -> None:
    """Score the bundled demo answers against BioKaLMA (specific split)."""
    demo_dir = resources.files("citegraph.kalma") / "demo"
    answers = Path(str(demo_dir / "answers.jsonl"))
    gold = Path(str(demo_dir / "gold.jsonl"))
    console.print(f"Scoring {answers} against BioKaLMA (specific) with gold {gold.name}")
    config = ScoreConfig(split="specific", mode=mode, nli="lexical")  # type: ignore[arg-type]
    run_score(config, answers, gold, data_dir, out, overwrite=True)
