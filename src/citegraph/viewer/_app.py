"""``citegraph view``: the web viewer, a read-only ASGI app (Starlette) served by uvicorn.

Every route is a GET; a run is named by its catalog reference and resolved through
:class:`~citegraph.viewer._catalog.Catalog`, which refuses anything outside the directories the
viewer was given (404). A run that cannot be read (a damaged or hand-edited file) answers 422
with the reason, never 500. Templates escape every string of a run. The app answers only to the
host names it serves, with a strict Content-Security-Policy, and refuses what other web sites
ask of it (:mod:`citegraph.viewer._guard`). Every page is built in a worker thread, so the
event loop always answers; what one request may cost is bounded (:mod:`citegraph.viewer._limits`).
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
from citegraph.viewer._limits import (
    MAX_COMPARE_RUNS,
    MAX_FIGURE_BYTES,
    RETRY_AFTER_S,
    Busy,
    HeavyRenders,
)
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
    max_figure_bytes: int | None = MAX_FIGURE_BYTES,
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
        max_figure_bytes: The most bytes of records a compare page reads for its figures (all
            its runs together); None: no bound.

    Raises:
        MissingDependency: Starlette or Jinja2 is not installed (the ``viewer`` extra).
    """
    try:
        from starlette.applications import Starlette
        from starlette.concurrency import run_in_threadpool
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, Response
        from starlette.routing import Mount, Route
        from starlette.staticfiles import StaticFiles
    except ImportError as exc:
        raise MissingDependency("starlette", "viewer", cause=exc) from exc
    site = Site(roots)
    env = environment()
    urls = server_urls()
    heavy = HeavyRenders()

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
                refs = ", ".join(dict.fromkeys(request.query_params.getlist("run")))
                why = f"run {refs} cannot be shown: {unreadable(exc)}"
                return message_page("unreadable run", why, 422)

        return answer

    async def index(request: Request) -> Response:
        return await run_in_threadpool(lambda: page("index.html", runs=site.overviews()))

    async def run(request: Request) -> Response:
        ref = request.query_params.get("run", "")
        query = dict(request.query_params)

        def build() -> Response:
            path = site.catalog.resolve(ref)
            if path is None:
                return not_found("no such run under the viewer's directories")
            return page("run.html", **site.run_page(ref, path, query))

        return await run_in_threadpool(build)

    async def sample(request: Request) -> Response:
        ref = request.query_params.get("run", "")
        sample_id = request.query_params.get("id", "")

        def build() -> Response:
            path = site.catalog.resolve(ref)
            if path is None:
                return not_found("no such run under the viewer's directories")
            context = site.sample_page(ref, path, sample_id)
            if context is None:
                return not_found("no such sample in this run")
            return page("sample.html", **context)

        return await run_in_threadpool(build)

    async def compare(request: Request) -> Response:
        refs = list(dict.fromkeys(request.query_params.getlist("run")))  # each run once
        if len(refs) > MAX_COMPARE_RUNS:
            why = (
                f"a compare page shows at most {MAX_COMPARE_RUNS} runs; {len(refs)} were asked "
                "for. Choose fewer runs."
            )
            return message_page("too many runs", why, 400)

        def build() -> Response:
            found: dict[Path, str] = {}
            for ref in refs:
                path = site.catalog.resolve(ref)
                if path is None:
                    return not_found("choose runs under the viewer's directories")
                found.setdefault(path, ref)  # two refs naming one directory: one run
            if not found:
                return not_found("choose runs under the viewer's directories")
            runs = [(ref, path) for path, ref in found.items()]
            context = compare_context(runs, site, max_figure_bytes=max_figure_bytes)
            figures = [(task, chart, chart_svg(chart)) for task, chart in context.pop("charts")]
            note = context.pop("figures_note", None)
            return page("compare.html", figures=figures, figures_note=note, **context)

        try:
            return await heavy.run(build)
        except Busy:
            why = (
                "other compare pages are being drawn; this one was not started. Try again in a "
                "moment."
            )
            answer = message_page("viewer busy", why, 503)
            answer.headers["retry-after"] = str(RETRY_AFTER_S)
            return answer

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
    return Guard(app, served_hosts(host, allow_hosts), port, heavy=HEAVY_PATHS)


#: The pages whose work grows with the runs they show: another web site may not ask for them,
#: even by a link, and they are drawn a few at a time.
HEAVY_PATHS = frozenset({"/compare"})


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
    says where the viewer is, so a busy port fails first, with a free one to use instead. Port 0
    binds a free port the system picks (``sock.getsockname()[1]`` says which).

    Raises:
        ConfigError: the port is not one of 0 to 65535, or is in use (or cannot be bound): names
            it and suggests a free one.
    """
    if not 0 <= port <= MAX_PORT:
        raise ConfigError(f"port {port} is not a TCP port: choose one of 0 to {MAX_PORT}")
    try:
        return _bound(host, port)
    except OSError as exc:
        spares = range(port + 1, min(port + 50, MAX_PORT + 1))
        spare = next((p for p in spares if _free(host, p)), None)
        hint = f"; choose another with --port {spare}" if spare else "; choose another --port"
        why = "is in use (another viewer?)" if exc.errno == errno.EADDRINUSE else f"({exc})"
        raise ConfigError(f"port {port} on {host} {why}{hint}") from exc


#: The largest TCP port.
MAX_PORT = 65535


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
    max_figure_bytes: int | None = MAX_FIGURE_BYTES,
) -> None:
    """Serve the viewer until interrupted.

    Args:
        roots: Run directories or folders of runs.
        host: Address to bind.
        port: Port to bind (0: one the system picks).
        sock: A socket already bound by :func:`open_port` (then ``host`` and ``port`` only
            label it); default: bind ``host:port`` here.
        allow_hosts: Host names a request may name besides ``host`` and the loopback names.
        max_figure_bytes: The most bytes of records a compare page reads for its figures.

    Raises:
        MissingDependency: the ``viewer`` extra is not installed.
        ConfigError: the port is in use.
    """
    require_viewer()
    import uvicorn

    sock = sock or open_port(host, port)
    if port == 0:  # the port the system picked: the one a request's Host names
        port = int(sock.getsockname()[1])
    app = create_app(
        roots, host=host, port=port, allow_hosts=allow_hosts, max_figure_bytes=max_figure_bytes
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def _escape(text: str) -> str:
    import html

    return html.escape(encodable(text))
