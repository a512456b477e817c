"""Reading a whole JSON file with errors that name the file, line and column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from citegraph.errors import DataError


def load_json(path: Path) -> Any:
    """Parse a JSON file, turning syntax errors into :class:`DataError` with line and column."""
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON (column {exc.colno}): {exc.msg}"
        raise DataError(msg, path=path, line=exc.lineno) from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8: {exc.reason}", path=path) from exc
