"""Reading a whole JSON file with errors that name the file, line and column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from citegraph.errors import DataError
from citegraph.io._text import read_text


def parse_json(text: str, path: Path, *, line: int | None = None) -> Any:
    """Parse JSON text read from ``path`` (at ``line`` for one line of a JSONL file).

    Raises:
        DataError: not valid JSON, nested too deeply, or a number Python refuses (an integer of
            more than 4,300 digits); names the file and line (and column when known).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if line is None:
            msg = f"invalid JSON (column {exc.colno}): {exc.msg}"
            raise DataError(msg, path=path, line=exc.lineno) from exc
        msg = f"not valid JSON ({exc.msg}, column {exc.colno}); expected one JSON object a line"
        raise DataError(msg, path=path, line=line) from exc
    except RecursionError as exc:
        raise DataError("not valid JSON (nested too deeply)", path=path, line=line) from exc
    except ValueError as exc:  # e.g. an integer too long to convert
        raise DataError(f"not valid JSON ({exc})", path=path, line=line) from exc


def load_json(path: Path) -> Any:
    """Parse a JSON file (UTF-8, a byte-order mark tolerated).

    Raises:
        DataError: the file is not UTF-8 or not valid JSON (names the line and column).
    """
    return parse_json(read_text(Path(path)), Path(path))
