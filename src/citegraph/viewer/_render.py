"""The Jinja2 environment shared by the web viewer and the HTML report (autoescape on: every
string from a run, model text included, is escaped)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from citegraph.errors import MissingDependency

UrlOf = Callable[..., str]


def environment() -> Any:
    """A Jinja2 environment over the package's templates.

    Raises:
        MissingDependency: Jinja2 is not installed (the ``viewer`` extra).
    """
    try:
        import jinja2
    except ImportError as exc:
        raise MissingDependency("jinja2", "viewer") from exc
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("citegraph.viewer", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["combine"] = _combine
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
        return f"{base}/run?" + urlencode({"run": ref, **(params or {})})

    def sample_url(ref: str, sample_id: str) -> str:
        return f"{base}/sample?" + urlencode({"run": ref, "id": sample_id})

    return {"run_url": run_url, "sample_url": sample_url}


def _combine(params: Mapping[str, Any], **more: Any) -> dict[str, Any]:
    return {**params, **more}
