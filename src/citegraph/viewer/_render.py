"""The Jinja2 environment shared by the web viewer and the HTML report (autoescape on: every
string from a run, model text included, is escaped; a lone surrogate is shown as U+FFFD and a
control character as its ``\\xNN`` escape, so any text renders)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any
from urllib.parse import quote, urlencode

from citegraph.errors import MissingDependency
from citegraph.io import encodable, printable

UrlOf = Callable[..., str]


def environment() -> Any:
    """A Jinja2 environment over the package's templates.

    Raises:
        MissingDependency: Jinja2 is not installed (the ``viewer`` extra).
    """
    try:
        import jinja2
    except ImportError as exc:
        raise MissingDependency("jinja2", "viewer", cause=exc) from exc
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("citegraph.viewer", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        finalize=shown,
    )
    env.filters["combine"] = _combine
    env.filters["svg_uri"] = svg_uri
    env.filters["urlencode"] = lambda value: quote(encodable(str(value)), safe="/")
    return env


def assets() -> dict[str, str]:
    """The stylesheet and script, as text (inlined by the report)."""
    static = resources.files("citegraph.viewer") / "static"
    return {
        "css": (static / "viewer.css").read_text(encoding="utf-8"),
        "js": (static / "viewer.js").read_text(encoding="utf-8"),
    }


def server_urls(base: str = "") -> dict[str, UrlOf]:
    """URL builders of the web viewer's pages."""

    def run_url(ref: str, params: Mapping[str, Any] | None = None) -> str:
        return f"{base}/run?" + query({"run": ref, **(params or {})})

    def sample_url(ref: str, sample_id: str) -> str:
        return f"{base}/sample?" + query({"run": ref, "id": sample_id})

    return {"run_url": run_url, "sample_url": sample_url}


def shown(value: Any) -> Any:
    """What a template writes for ``value`` (the environment's ``finalize``): text as
    :func:`~citegraph.io.printable` shows it (a lone surrogate as U+FFFD, so a page always
    encodes as UTF-8; a control character as its visible ``\\xNN`` escape, so a saved page
    printed to a terminal cannot drive it); markup stays markup."""
    if not isinstance(value, str):
        return value
    text = printable(value)
    if text == value:
        return value
    return type(value)(text) if hasattr(value, "__html__") else text


def svg_uri(svg: str) -> str:
    """An SVG as a ``data:`` URI, for an ``<img>``: the web viewer's Content-Security-Policy
    allows no inline style, and matplotlib styles its SVG inline (the report inlines it)."""
    return "data:image/svg+xml;base64," + base64.b64encode(encodable(svg).encode("utf-8")).decode()


def query(params: Mapping[str, Any]) -> str:
    """``params`` as a URL query string; a lone surrogate in a value is sent as U+FFFD."""
    return urlencode({k: encodable(str(v)) for k, v in params.items()})


def _combine(params: Mapping[str, Any], **more: Any) -> dict[str, Any]:
    return {**params, **more}
