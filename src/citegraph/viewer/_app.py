"""``citegraph view``: the web viewer, a read-only ASGI app (Starlette) served by uvicorn.

Every route is a GET; a run is named by its catalog reference and resolved through
:class:`~citegraph.viewer._catalog.Catalog`, which refuses anything outside the directories the
viewer was given (404). A run that cannot be read (a damaged or hand-edited file) answers 422
with the reason, never 500. Templates escape every string of a run. The app answers only to the
host names it serves, with a strict Content-Security-Policy (:mod:`citegraph.viewer._guard`).
"""

from __future__ import annotations

import errno
import importlib
import socket
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, MissingDependency
from citegraph.io import encodable
from citegraph.viewer._guard import Guard, served_hosts
from citegraph.viewer._plots import chart_svg
from citegraph.viewer._render import environment, server_urls
from citegraph.viewer._site import UNREADABLE, Site, compare_context, unreadable


def create_app(
    roots: list[str | Path],
    *,
    warm: bool = True,
    host: str | None = None,
    port: int | None = None,
    allow_hosts: Sequence[str] = (),
) -> Any:
    """The viewer's ASGI app over the run directories under ``roots``.

    Args:
        roots: Directories to look for runs in (each a run or a folder of runs).
        warm: Index every run in a background thread at start-up, so that the first page view
            of a large run is as fast as the next.
        host: The address the app is served on: a request may name it in ``Host`` (besides
            localhost, 127.0.0.1 and [::1]).
        port: The port it is served on; when given, a ``Host`` naming another port is refused.
        allow_hosts: More host names a request may name (a viewer bound to ``0.0.0.0`` and
            opened by the machine's name).

    Raises:
        MissingDependency: Starlette or Jinja2 is not installed (the ``viewer`` extra).
    """
    try:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, Response
        from starlette.routing import Mount, Route
        from starlette.staticfiles import StaticFiles
    except ImportError as exc:
        raise MissingDependency("starlette", "viewer", cause=exc) from exc
    site = Site(roots)
    env = environment()
    urls = server_urls()

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        body = env.get_template(name).render(
            base="", inline=False, roots=site.catalog.roots, **urls, **context
        )
        return HTMLResponse(body, status_code=status)

    def not_found(what: str) -> HTMLResponse:
        return message_page("not found", what, 404)

    def guarded(route: Callable[[Request], Awaitable[Response]]) -> Any:
        async def answer(request: Request) -> Response:
            try:
                return await route(request)
            except UNREADABLE as exc:
                refs = ", ".join(request.query_params.getlist("run"))
                why = f"run {refs} cannot be shown: {unreadable(exc)}"
                return message_page("unreadable run", why, 422)

        return answer

    async def index(request: Request) -> Response:
        return page("index.html", runs=site.overviews())

    async def run(request: Request) -> Response:
        ref = request.query_params.get("run", "")
        path = site.catalog.resolve(ref)
        if path is None:
            return not_found("no such run under the viewer's directories")
        return page("run.html", **site.run_page(ref, path, dict(request.query_params)))

    async def sample(request: Request) -> Response:
        ref = request.query_params.get("run", "")
        path = site.catalog.resolve(ref)
        if path is None:
            return not_found("no such run under the viewer's directories")
        context = site.sample_page(ref, path, request.query_params.get("id", ""))
        if context is None:
            return not_found("no such sample in this run")
        return page("sample.html", **context)

    async def compare(request: Request) -> Response:
        refs = request.query_params.getlist("run")
        runs = [(r, p) for r in refs if (p := site.catalog.resolve(r)) is not None]
        if not runs or len(runs) != len(refs):
            return not_found("choose runs under the viewer's directories")
        context = compare_context(runs, site)
        figures = [(task, chart, chart_svg(chart)) for task, chart in context.pop("charts")]
        return page("compare.html", figures=figures, **context)

    static = Path(__file__).resolve().parent / "static"
    app = Starlette(
        routes=[
            Route("/", guarded(index)),
            Route("/run", guarded(run)),
            Route("/sample", guarded(sample)),
            Route("/compare", guarded(compare)),
            Mount("/static", app=StaticFiles(directory=static), name="static"),
        ]
    )
    if warm:
        threading.Thread(target=site.warm, name="citegraph-viewer-warm", daemon=True).start()
    return Guard(app, served_hosts(host, allow_hosts), port)


def message_page(title: str, text: str, status: int) -> Any:
    """A short HTML page saying ``text`` (escaped), answered with ``status``."""
    from starlette.responses import HTMLResponse

    body = f"<!doctype html><title>{title}</title><p>{_escape(text)}</p>"
    return HTMLResponse(body, status_code=status)


def require_viewer() -> None:
    """Check that the ``viewer`` extra is installed.

    Raises:
        MissingDependency: naming the first missing package and the extra.
    """
    for module, package in (
        ("starlette.applications", "starlette"),
        ("uvicorn", "uvicorn"),
        ("jinja2", "jinja2"),
        ("matplotlib", "matplotlib"),
    ):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingDependency(package, "viewer", cause=exc) from exc


def open_port(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, for :func:`serve` to listen on; checked before anything
    says where the viewer is, so a busy port fails first, with a free one to use instead.

    Raises:
        ConfigError: the port is in use (or cannot be bound): names it and suggests a free one.
    """
    try:
        return _bound(host, port)
    except OSError as exc:
        spare = next((p for p in range(port + 1, port + 50) if _free(host, p)), None)
        hint = f"; choose another with --port {spare}" if spare else "; choose another --port"
        why = "is in use (another viewer?)" if exc.errno == errno.EADDRINUSE else f"({exc})"
        raise ConfigError(f"port {port} on {host} {why}{hint}") from exc


def _bound(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _free(host: str, port: int) -> bool:
    try:
        _bound(host, port).close()
    except OSError:
        return False
    return True


def serve(
    roots: list[str | Path],
    *,
    host: str = "127.0.0.1",
    port: int = 7575,
    sock: socket.socket | None = None,
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve the viewer until interrupted.

    Args:
        roots: Run directories or folders of runs.
        host: Address to bind.
        port: Port to bind.
        sock: A socket already bound by :func:`open_port` (then ``host`` and ``port`` only
            label it); default: bind ``host:port`` here.
        allow_hosts: Host names a request may name besides ``host`` and the loopback names.

    Raises:
        MissingDependency: the ``viewer`` extra is not installed.
        ConfigError: the port is in use.
    """
    require_viewer()
    import uvicorn

    sock = sock or open_port(host, port)
    app = create_app(roots, host=host, port=port, allow_hosts=allow_hosts)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def _escape(text: str) -> str:
    import html

    return html.escape(encodable(text))
