"""Progress reporting: plain lines where stderr is not a terminal (nohup, CI logs)."""

from __future__ import annotations

import io

from rich.console import Console

from citegraph.cli._console import progress_bar, progress_line


def test_progress_line_by_hand() -> None:
    # 48 of 500 in 600 s: 4.8 per minute; the other 452 take 600 * 452 / 48 = 5650 s = 1:34:10
    line = progress_line("scoring knowledge", 48, 500, 600.0)
    assert line == "scoring knowledge: 48/500 (10%), elapsed 0:10:00, 4.8/min, ETA 1:34:10"
    assert progress_line("starting", 0, 0, 0.0) == "starting: 0/0, elapsed 0:00:00"


def _run(console: Console, every: float) -> list[str]:
    with progress_bar("scoring", out=console, every=every) as update:
        update(1, 3)
        update(2, 3)
        update(3, 3, "candidate 2/2: scoring")
    output = console.file.getvalue()  # type: ignore[attr-defined]
    return [line for line in output.splitlines() if ", elapsed " in line]


def test_plain_lines_when_not_a_terminal() -> None:
    every_time = _run(Console(file=io.StringIO(), force_terminal=False, width=200), every=0.0)
    assert [line.split(", elapsed")[0] for line in every_time] == [
        "scoring: 1/3 (33%)",
        "scoring: 2/3 (67%)",
        "candidate 2/2: scoring: 3/3 (100%)",
    ]
    # rate-limited: the first line and the step change only
    limited = _run(Console(file=io.StringIO(), force_terminal=False, width=200), every=3600.0)
    assert [line.split(":")[0] for line in limited] == ["scoring", "candidate 2/2"]


def test_no_plain_lines_on_a_terminal() -> None:
    assert _run(Console(file=io.StringIO(), force_terminal=True, width=200), every=0.0) == []
