"""``citegraph view`` (the run viewer in the browser) and ``citegraph report`` (one
self-contained HTML file)."""

from __future__ import annotations

from pathlib import Path

import click

from citegraph.cli._console import console, err_console, reports_errors
from citegraph.cli._options import EXISTING_DIR
from citegraph.cli._streams import markup_escaped

#: ``--max-figure-mb``'s default: :data:`citegraph.viewer.MAX_FIGURE_BYTES` in MiB (kept here
#: so that ``--help`` does not import the viewer).
MAX_FIGURE_MB = 128


@click.command("view")
@click.argument("run_dirs", nargs=-1, type=EXISTING_DIR)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=7575,
    show_default=True,
    help="Port to serve on; 0: a free one the system picks (the URL printed names it).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; the default serves this machine only.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name the browser may use besides localhost, 127.0.0.1, [::1] and --host "
    "(repeatable): the machine's name when serving on 0.0.0.0. Requests naming any other host "
    "are refused, so a web page cannot read the runs by pointing its own name here.",
)
@click.option(
    "--max-figure-mb",
    type=click.IntRange(min=0),
    default=MAX_FIGURE_MB,
    show_default=True,
    help="The most MiB of records (samples.jsonl, all its runs together) a compare page reads "
    "to draw its figures; beyond it the page shows the metrics and says so (draw the figures "
    "with `citegraph report`). Bounds the viewer's memory per page.",
)
@reports_errors
def view_command(
    run_dirs: tuple[Path, ...],
    port: int,
    host: str,
    allow_hosts: tuple[str, ...],
    max_figure_mb: int,
) -> None:
    """Browse runs in a web browser: answers with their citations checked, metrics, filters.

    RUN_DIRS are run directories or folders of runs (default: ./runs). Read-only: the viewer
    never writes, and serves nothing outside these directories.
    """
    from citegraph.viewer import open_port, require_viewer, serve

    require_viewer()
    roots = list(run_dirs) or [Path("runs")]
    sock = open_port(host, port)  # a busy port fails here, before the URL is printed
    if port == 0:  # the system picked one: say which, and serve the Host naming it
        port = int(sock.getsockname()[1])
    if host not in ("127.0.0.1", "localhost", "::1"):
        err_console.print(
            f"[yellow]warning:[/] serving on {markup_escaped(host)}: anyone who can reach this "
            "address can read these runs (open it by this address, or name the machine with "
            "--allow-host)",
            markup=True,
        )
    shown = f"[{host}]" if ":" in host else host
    console.print(f"citegraph viewer on http://{shown}:{port}/ (Ctrl+C to stop)")
    serve(
        [str(r) for r in roots],
        host=host,
        port=port,
        sock=sock,
        allow_hosts=allow_hosts,
        max_figure_bytes=max_figure_mb * 2**20,
    )


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=EXISTING_DIR)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
)
@click.option("--samples", type=int, default=5, show_default=True, help="Samples shown per run.")
@reports_errors
def report_command(run_dirs: tuple[Path, ...], out: Path, samples: int) -> None:
    """Write one self-contained HTML report (metrics, the papers' figures, sample answers) of
    RUN_DIRS; it opens from disk, with no server."""
    from citegraph.viewer import write_report

    path = write_report(run_dirs, out, samples=samples)
    console.print(f"Wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
