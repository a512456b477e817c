"""``citegraph models``: every model role, its providers and spec forms, what each needs
installed and whether it is usable here."""

from __future__ import annotations

import json

import click
from rich.table import Table

from citegraph.cli._console import console, reports_errors
from citegraph.models import ROLES, catalog, devices_here


def _status(missing: tuple[str, ...], extra: str | None) -> str:
    if not missing:
        return "yes"
    return f"no: {', '.join(missing)} missing" + (f" (pip install '{extra}')" if extra else "")


@click.command("models")
@click.option(
    "--role",
    type=click.Choice(list(ROLES)),
    default=None,
    help="List only this role's providers.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON, for tools.")
@reports_errors
def models_command(role: str | None, as_json: bool) -> None:
    """List the model roles, their providers and spec forms (``provider/model``), what each
    needs installed and whether it is usable here."""
    rows = catalog(role)
    devices = devices_here()
    if as_json:
        payload = {
            "devices": devices,
            "roles": {name: r.summary for name, r in ROLES.items() if role in (None, name)},
            "providers": [row.as_json() for row in rows],
        }
        click.echo(json.dumps(payload, indent=2))
        return
    for name, spec_role in ROLES.items():
        if role not in (None, name):
            continue
        table = Table(title=f"{name}: {spec_role.summary}", title_justify="left")
        for column in ("spec", "example", "what", "usable here"):
            table.add_column(column, overflow="fold")
        for row in rows:
            if row.role == name:
                what = row.summary + (" (runs on --device)" if row.device else "")
                table.add_row(row.form, row.example, what, _status(row.missing, row.extra))
        if spec_role.takes:
            table.add_row(f"any {spec_role.takes} spec", "", f"as the {spec_role.takes} role", "")
        if spec_role.cascade_first:
            first = spec_role.cascade_first[0]
            table.add_row(
                f"{first}+<spec>", f"{first}+hf/<path>", f"{first} first, then the model", ""
            )
        console.print(table)
    console.print(
        f"Devices here: {', '.join(devices)}. Old spellings (hf:<path>) still work, with a warning."
    )
