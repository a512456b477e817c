"""``citegraph data``: where the datasets are, and fetching the public originals."""

from __future__ import annotations

from pathlib import Path

import click

from citegraph.cli._console import console, reports_errors
from citegraph.cli._options import data_dir_option
from citegraph.datasets import SOURCES, default_download_dir, fetch_datasets, resolve_data_dir


@click.group("data")
def data_group() -> None:
    """Locate or download datasets."""


@data_group.command("where")
@data_dir_option
@reports_errors
def where(data_dir: Path | None) -> None:
    """Print the data directory citegraph would use."""
    console.print(str(resolve_data_dir(data_dir)))


@data_group.command("fetch")
@click.argument("names", nargs=-1, type=click.Choice(sorted(SOURCES)))
@click.option(
    "--dest",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Directory to fill (default {default_download_dir()}).",
)
@reports_errors
def fetch(names: tuple[str, ...], dest: Path | None) -> None:
    """Download the public originals (needs internet access), checking SHA-256 where known."""
    target = dest or default_download_dir()
    chosen = list(names) or sorted(SOURCES)

    def progress(name: str, done: int, total: int) -> None:
        console.print(f"[{done}/{total}] {name}")

    fetch_datasets(chosen, target, progress=progress)
    console.print(f"Data in {target}; pass --data-dir {target} or set CITEGRAPH_DATA={target}.")
