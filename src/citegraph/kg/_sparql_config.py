"""Configuration of the remote SPARQL client, the User-Agent policy, and endpoint presets.

Presets:

- :func:`wikidata`: the Wikidata Query Service (``https://query.wikidata.org/sparql``), one
  request at a time. Wikimedia's User-Agent policy
  (https://meta.wikimedia.org/wiki/User-Agent_policy) requires contact information in the
  User-Agent, so this preset refuses to build a config without one.
- :func:`qlever_wikidata`: QLever's Wikidata endpoint (``https://qlever.cs.uni-freiburg.de/api/wikidata``).
- :func:`virtuoso`: any Virtuoso (or other SPARQL 1.1) endpoint URL.

Dialect differences are avoided rather than handled: the queries citegraph sends always declare
their PREFIXes (QLever predeclares none, WDQS predeclares them, Virtuoso some) and never use the
WDQS-only ``wikibase:label`` service (labels come from ``rdfs:label`` with a language filter),
so the same query text runs on all three.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

import httpx2
from pydantic import BaseModel, ConfigDict, Field, field_validator

from citegraph import __version__
from citegraph.errors import ConfigError

__all__ = [
    "DEFAULT_USER_AGENT",
    "SparqlClientConfig",
    "SparqlOptions",
    "qlever_wikidata",
    "user_agent_for",
    "virtuoso",
    "wikidata",
]

WIKIDATA_URL = "https://query.wikidata.org/sparql"
QLEVER_WIKIDATA_URL = "https://qlever.cs.uni-freiburg.de/api/wikidata"
USER_AGENT_POLICY = "https://meta.wikimedia.org/wiki/User-Agent_policy"
_CONTACT_PLACEHOLDER = "contact not set"
_LIBRARY = f"httpx2/{httpx2.__version__}"

#: Default User-Agent: names citegraph and its version, with a placeholder instead of a contact.
DEFAULT_USER_AGENT = f"citegraph/{__version__} ({_CONTACT_PLACEHOLDER}) {_LIBRARY}"

_EMAIL = re.compile(r"[^\s@()<>;]+@[^\s@()<>;]+\.[A-Za-z]{2,}")
_URL = re.compile(r"https?://[^\s()<>;]+\.[^\s()<>;]+")


def _has_contact(text: str) -> bool:
    return _CONTACT_PLACEHOLDER not in text and bool(_EMAIL.search(text) or _URL.search(text))


def user_agent_for(contact: str) -> str:
    """A policy-conforming User-Agent: ``citegraph/<version> (<contact>) httpx2/<version>``.

    Args:
        contact: An e-mail address or a URL where the operator can be reached, optionally with
            more text (``"https://example.org/me; me@example.org"``).

    Raises:
        ConfigError: ``contact`` holds neither an e-mail address nor an http(s) URL, or holds
            line breaks or parentheses.
    """
    text = contact.strip()
    if not _has_contact(text) or re.search(r"[\r\n()]", text):
        raise ConfigError(
            f"contact {contact!r} must be an e-mail address or an http(s) URL (no line breaks "
            f"or parentheses); see {USER_AGENT_POLICY}"
        )
    return f"citegraph/{__version__} ({text}) {_LIBRARY}"


class SparqlClientConfig(BaseModel):
    """How to talk to one SPARQL endpoint. Presets: :func:`wikidata`, :func:`qlever_wikidata`,
    :func:`virtuoso`."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    endpoint: str
    """The endpoint URL (http or https) that takes ``query=`` requests."""
    user_agent: str = DEFAULT_USER_AGENT
    """User-Agent header. Should name the software and a contact (e-mail or URL); build one with
    ``user_agent_for(contact)``. The default holds a placeholder instead of a contact."""
    require_contact: bool = False
    """Refuse to send requests unless ``user_agent`` contains an e-mail address or URL (on for
    Wikidata, whose User-Agent policy requires it)."""
    method: Literal["GET", "POST"] = "POST"
    """HTTP method. POST (form-encoded ``query=``) has no URL length limit; GET is cacheable by
    the server."""
    max_concurrency: int = Field(default=4, ge=1)
    """Most requests in flight at once from one client."""
    connect_timeout: float = Field(default=10.0, gt=0)
    """Seconds to wait for a connection."""
    read_timeout: float = Field(default=65.0, gt=0)
    """Seconds to wait for the response (also used for write and pool waits). Keep it above
    the server's own query limit (60 s on WDQS) so that the server's timeout message arrives."""
    max_retries: int = Field(default=5, ge=0)
    """Retries after HTTP 429, HTTP 5xx, connection errors and timeouts (never after other
    errors)."""
    max_retry_wait: float = Field(default=60.0, ge=0)
    """Cap in seconds on any single wait between attempts, including a server's Retry-After."""
    backoff_base: float = Field(default=1.0, ge=0)
    """Backoff without Retry-After: before retry ``n`` (0-based) wait between half and all of
    ``min(max_retry_wait, backoff_base * 2**n)`` seconds (random jitter)."""
    cache_path: Path | None = None
    """SQLite file caching results (keyed by endpoint, method and query); ``None`` disables
    caching."""
    cache_max_age: float | None = Field(default=None, gt=0)
    """Cached results older than this many seconds are fetched again (``None``: keep forever)."""

    @field_validator("endpoint")
    @classmethod
    def _check_endpoint(cls, value: str) -> str:
        if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
            raise ValueError(f"endpoint must be an http(s) URL, got {value!r}")
        return value

    @field_validator("user_agent")
    @classmethod
    def _check_user_agent(cls, value: str) -> str:
        if not value.strip() or re.search(r"[\x00-\x1f\x7f]", value):
            raise ValueError("user_agent must be non-empty and free of control characters")
        return value

    def check_contact(self) -> None:
        """Raise ConfigError if ``require_contact`` is set and ``user_agent`` has no contact."""
        if self.require_contact and not _has_contact(self.user_agent):
            raise ConfigError(
                f"the endpoint {self.endpoint} requires contact information (an e-mail address "
                f"or URL) in the User-Agent, see {USER_AGENT_POLICY}; got {self.user_agent!r}. "
                "Pass contact='you@example.org' to the preset, or user_agent=user_agent_for(...)."
            )


class SparqlOptions(TypedDict, total=False):
    """The :class:`SparqlClientConfig` fields a preset's caller may set (see the fields)."""

    require_contact: bool
    method: Literal["GET", "POST"]
    max_concurrency: int
    connect_timeout: float
    read_timeout: float
    max_retries: int
    max_retry_wait: float
    backoff_base: float
    cache_path: str | Path | None
    cache_max_age: float | None


def _preset(
    endpoint: str,
    contact: str | None,
    user_agent_: str | None,
    defaults: SparqlOptions,
    overrides: SparqlOptions,
) -> SparqlClientConfig:
    if contact is not None and user_agent_ is not None:
        raise ConfigError("give either contact or user_agent, not both")
    fields: dict[str, Any] = {"endpoint": endpoint, **defaults, **overrides}
    if contact is not None:
        fields["user_agent"] = user_agent_for(contact)
    elif user_agent_ is not None:
        fields["user_agent"] = user_agent_
    config = SparqlClientConfig(**fields)
    config.check_contact()
    return config


def wikidata(
    contact: str | None = None, *, user_agent: str | None = None, **overrides: Unpack[SparqlOptions]
) -> SparqlClientConfig:
    """Config for the Wikidata Query Service: one request at a time, contact required.

    Args:
        contact: Your e-mail address or URL; it goes into the User-Agent.
        user_agent: A complete User-Agent instead of ``contact``; it must contain a contact.
        **overrides: Other :class:`SparqlClientConfig` fields (``cache_path``, ``max_retries``...).

    Raises:
        ConfigError: no contact information was given (Wikimedia's User-Agent policy).
    """
    defaults: SparqlOptions = {"max_concurrency": 1, "require_contact": True}
    return _preset(WIKIDATA_URL, contact, user_agent, defaults, overrides)


def qlever_wikidata(
    contact: str | None = None, *, user_agent: str | None = None, **overrides: Unpack[SparqlOptions]
) -> SparqlClientConfig:
    """Config for QLever's Wikidata endpoint (contact optional but polite)."""
    return _preset(QLEVER_WIKIDATA_URL, contact, user_agent, {"max_concurrency": 2}, overrides)


def virtuoso(
    url: str,
    contact: str | None = None,
    *,
    user_agent: str | None = None,
    **overrides: Unpack[SparqlOptions],
) -> SparqlClientConfig:
    """Config for a Virtuoso (or any SPARQL 1.1) endpoint at ``url``."""
    return _preset(url, contact, user_agent, {}, overrides)
