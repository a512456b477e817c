"""citegraph's exception hierarchy.

Every error citegraph raises on purpose derives from :class:`CitegraphError`. Callers (and the
retry logic) key off these types, never off message strings::

    CitegraphError
    ├── ConfigError             bad option or combination of options
    ├── RunBusy                 another process is writing the run directory (holds its lock)
    ├── DataError               bad input data; names the file, line and field
    │   └── DataNotFoundError   a dataset directory or file is missing (says how to get it)
    ├── KGError                 knowledge-graph layer
    │   └── KGQueryError        a query failed or returned something unusable
    ├── EndpointError           a remote service (SPARQL endpoint or model server) failed
    │   ├── RateLimited         HTTP 429 (carries ``retry_after`` seconds when the server sent it)
    │   ├── ServerError         HTTP 5xx (retryable)
    │   ├── ClientError         HTTP 4xx other than 429 (not retryable)
    │   ├── EndpointUnavailable connection failures and timeouts, after the retries
    │   └── ResponseFormatError the body is not what the protocol promises
    └── ModelError              a scoring or generation model failed to load or run
        ├── PromptTooLong       the prompt does not fit the model's context (not retryable)
        └── MissingDependency   an optional extra is not installed (names the pip extra)

Each class has an exit status (:data:`EXIT_STATUSES`, found along the error's MRO by
:func:`exit_status_of`): 2 for a usage or input error, 3 for a model or endpoint failure. It
decides both how a command stopped by the error exits and how a run whose items failed with it
exits; a failed record stores its error's type (:func:`error_type_name`) for that.
"""

from __future__ import annotations

import sys
from pathlib import Path


class CitegraphError(Exception):
    """Base class of every error citegraph raises on purpose."""


class ConfigError(CitegraphError):
    """An option, or a combination of options, is invalid."""


class RunBusy(CitegraphError):
    """Another process is writing the run directory (it holds the directory's lock); the message
    names its pid and what to do. Not a :class:`ConfigError`: the options are fine, the
    directory is taken."""


class DataError(CitegraphError):
    """Input data is malformed.

    The message names the file, the line (1-based) and the field when they are known, so a user
    can go straight to the problem.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        where = []
        if self.path is not None:
            where.append(self.path if line is None else f"{self.path}:{line}")
        elif line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.reason = message


class DataNotFoundError(DataError):
    """A dataset directory or file is missing; the message says how to obtain it."""


class KGError(CitegraphError):
    """Knowledge-graph layer error."""


class KGQueryError(KGError):
    """A knowledge-graph query failed or returned something unusable."""


class EndpointError(CitegraphError):
    """A remote service failed: a SPARQL endpoint or an OpenAI-compatible model server.

    ``status`` is the HTTP status (the class's ``default_status`` when the raiser gives none),
    ``url`` the endpoint, ``retry_after`` the server's Retry-After in seconds when it sent one.
    """

    #: The status recorded when none is given (429 for :class:`RateLimited`).
    default_status: int | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        url: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status if status is not None else self.default_status
        self.url = url
        self.retry_after = retry_after


class RateLimited(EndpointError):
    """HTTP 429 Too Many Requests; ``retry_after`` is the server's Retry-After in seconds."""

    default_status = 429


class ServerError(EndpointError):
    """HTTP 5xx from the endpoint: worth retrying (after ``retry_after`` seconds when given)."""


class ClientError(EndpointError):
    """HTTP 4xx other than 429: the request itself is wrong; never retried."""


class EndpointUnavailable(EndpointError):
    """The endpoint could not be reached or did not answer in time (after the retries)."""


class ResponseFormatError(EndpointError):
    """The endpoint answered with something its protocol does not allow (not SPARQL JSON
    results, or not a chat completion)."""


class ModelError(CitegraphError):
    """A model failed to load or run."""


class PromptTooLong(ModelError):
    """The prompt does not fit the model's context: the same call fails again on any retry."""


class MissingDependency(ModelError, ImportError):
    """An optional dependency is not installed; the message names the pip extra (or ``hint``)."""

    def __init__(
        self,
        package: str,
        extra: str,
        *,
        hint: str | None = None,
        cause: ImportError | None = None,
    ) -> None:
        message = hint or (
            f"{package} is not installed; install it with: pip install 'citegraph[{extra}]'"
        )
        missing = getattr(cause, "name", None)
        if missing and missing.split(".")[0] not in package:
            # the package is there but something it imports is not: say what
            message = f"{package} could not be imported ({cause}); " + message.split("; ", 1)[-1]
        super().__init__(message)
        self.msg = message  # ImportError.__str__ reads msg
        self.package = package
        self.extra = extra


#: Exit status 2: a usage or input error (bad options or data, a busy run directory, a missing
#: optional dependency).
USAGE_STATUS = 2
#: Exit status 3: a model or endpoint failure.
FAILURE_STATUS = 3

#: The exit status of each citegraph error class; an error gets the status of the first class of
#: its MRO listed here (:func:`exit_status_of`), so a new subclass inherits its parent's.
EXIT_STATUSES: dict[type[CitegraphError], int] = {
    CitegraphError: USAGE_STATUS,
    ConfigError: USAGE_STATUS,
    RunBusy: USAGE_STATUS,
    DataError: USAGE_STATUS,
    KGError: USAGE_STATUS,
    EndpointError: FAILURE_STATUS,
    ModelError: FAILURE_STATUS,
    MissingDependency: USAGE_STATUS,  # a setup problem, though a ModelError
}


def exit_status_of(error: BaseException | type[BaseException]) -> int | None:
    """The exit status of a citegraph error (an instance or a class): that of the first class of
    its MRO in :data:`EXIT_STATUSES`; ``None`` for an error that is not citegraph's."""
    cls = error if isinstance(error, type) else type(error)
    return next((EXIT_STATUSES[c] for c in cls.__mro__ if c in EXIT_STATUSES), None)


def error_type_name(error: BaseException) -> str:
    """The module-qualified name of ``error``'s class (``citegraph.errors.DataError``,
    ``builtins.ValueError``): what a failed record stores as its ``error_type``."""
    cls = type(error)
    return f"{cls.__module__}.{cls.__qualname__}"


def error_class(name: object) -> type[CitegraphError] | None:
    """The citegraph error class an ``error_type`` (:func:`error_type_name`) names, or ``None``
    when it names none (not a :class:`CitegraphError`, or not known here).

    A name is looked up in the modules already imported, never by importing one (a record is
    data, not code to run), so a task's own subclass (of :class:`DataError`, say) is found while
    its task runs; a class of a module not imported here is found by its bare name when this
    module defines one of that name."""
    if not isinstance(name, str) or "." not in name:
        return None
    parts = name.split(".")
    found: object = None
    for cut in range(len(parts) - 1, 0, -1):  # the longest imported module the name starts with
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            found = module
            for part in parts[cut:]:
                found = getattr(found, part, None)
            break
    if not (isinstance(found, type) and issubclass(found, CitegraphError)):
        found = globals().get(parts[-1])
    if isinstance(found, type) and issubclass(found, CitegraphError):
        return found
    return None
