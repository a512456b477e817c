"""Any text is written safely: a lone surrogate (what JSON's ``\\ud800`` escape decodes to) is
kept as an escape in JSON and shown as U+FFFD, never a UnicodeEncodeError (issue 27, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

from citegraph.io import atomic_write, encodable, json_bytes, json_text

LONE = "\ud800"


def test_json_text_escapes_a_lone_surrogate_and_reads_back_unchanged() -> None:
    value = {"answer": f"a{LONE}b é 😀", f"k{LONE}": [1, "\udfff"]}
    text = json_text(value)
    assert "\\ud800" in text and "\\udfff" in text
    assert "é 😀" in text  # other non-ASCII text stays as it is
    assert json.loads(text) == value
    assert json.loads(json_bytes(value, indent=2).decode("utf-8")) == value


def test_json_text_equals_json_dumps_without_surrogates() -> None:
    value = {"b": ["x", 1.5, None], "a": "ü"}
    assert json_text(value, sort_keys=True) == json.dumps(value, ensure_ascii=False, sort_keys=True)


def test_encodable_replaces_only_lone_surrogates() -> None:
    assert encodable(f"a{LONE}b\udfffc é") == "a\ufffdb\ufffdc é"
    assert encodable("plain") == "plain"


def test_atomic_write_of_text_with_a_lone_surrogate(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    atomic_write(target, f"# x{LONE}y\n")
    assert target.read_text(encoding="utf-8") == "# x\ufffdy\n"
