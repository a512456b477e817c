"""Progress reporting: plain lines where stderr is not a terminal (nohup, CI logs)."""

from __future__ import annotations

import io

from rich.console import Console

from citegraph.cli._console import progress_bar, progress_line, rate_text


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


class FakeClock:
    """Seconds set by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_and_eta_count_only_the_items_done_in_this_process() -> None:
    """Issue 17, item 8: a run resumed with 9 of 30 done that does 1 item in 6 s goes at
    10/min with 20 left (ETA 2 min), not at (10 items) / (6 s) = 100/min."""
    clock = FakeClock()
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    with progress_bar("answering", out=console, every=0.0, clock=clock) as update:
        update(9, 30)  # the engine's first call: what the run directory held
        clock.now += 6
        update(10, 30)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines == [
        "answering: 9/30 (30%), elapsed 0:00:00",
        "answering: 10/30 (33%), elapsed 0:00:06, 10.0/min, ETA 0:02:00",
    ]
    assert progress_line("x", 10, 30, 60.0, start_done=9, working=6.0) == (
        "x: 10/30 (33%), elapsed 0:01:00, 10.0/min, ETA 0:02:00"
    )


def test_a_slow_short_run_shows_its_rate_in_a_readable_unit() -> None:
    """A run of 1 item in 25 s showed ``0.0/s``: 2.4/min it is."""
    assert rate_text(12.34) == "12.3/s"
    assert rate_text(1 / 25) == "2.4/min"
    assert rate_text(1 / 3600) == "1.0/h"
    clock = FakeClock()
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    with progress_bar("scoring", out=console, clock=clock) as update:
        update(0, 2)
        clock.now += 25
        update(1, 2)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "2.4/min" in output and "0.0/s" not in output


def test_not_a_terminal_prints_plain_lines_only_and_the_final_state_once() -> None:
    """Issue 17, item 8: no final bar after the plain lines; the last state is written once."""
    clock = FakeClock()
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    with progress_bar("judging", out=console, every=3600.0, clock=clock) as update:
        update(0, 3)
        clock.now += 1
        update(1, 3)
        clock.now += 1
        update(3, 3)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines == [
        "judging: 0/3 (0%), elapsed 0:00:00",
        "judging: 3/3 (100%), elapsed 0:00:02, 1.5/s",
    ]
    assert "━" not in console.file.getvalue()  # type: ignore[attr-defined]
