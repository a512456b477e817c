"""Fuzz the CLI's printers and the run export with hostile text (issue 27, items 8 and 11).

A seeded generator mixes rich markup (``[link=...]``, ``[/]``, ``[bold]``), ANSI and OSC escape
sequences (colours, OSC 8 hyperlinks, title changes, screen clears), C0 and C1 control
characters, lone surrogates, spreadsheet formula prefixes (``=``, ``+``, ``-``, ``@``, tab, CR)
and ordinary text. Each text goes through the printers a command uses (warnings, the failure and
gate lines of the exit status, the KaLMA metrics table, tables, ``ask``'s answer and ``kalma
run``'s failure reasons through the CLI runner) and through ``runs export`` (CSV, Parquet,
JSONL). Asserted: the counts of inputs tried; no exception other than citegraph's own (0
tracebacks); every text printed literally where it is printed on one line (no markup read: 0
silent successes); no raw ESC, C1 control, BEL or lone surrogate in any output beyond rich's
own colour codes; no CSV text cell a spreadsheet would read as a formula; no exported row lost
or duplicated.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import BaseModel, ConfigDict

import citegraph.cli._console as console_module
import citegraph.cli._exit as exit_module
import citegraph.cli._kalma as kalma_module
from _fuzz import fuzz_size
from citegraph.cli import main
from citegraph.cli._exit import ExitPolicy, judge_runs
from citegraph.cli._streams import SafeConsole, literal, shown
from citegraph.errors import CitegraphError
from citegraph.runs import (
    Failure,
    FinishedRun,
    Record,
    Task,
    export_run,
    opened,
    register_task,
    run_sync,
    run_task_async,
)
from citegraph.testing import FakeOpenAIServer, FakeReply

SEED = 27
N_PRINTS = fuzz_size(100, 300)
N_ASKS = 10
N_RUNS = 4
N_RECORDS = fuzz_size(100, 300)

FRAGMENTS = [
    "[link=http://evil]click[/link]", "[/]", "[bold red]", "[", "]", "[/bold]", ":warning:",
    "\x1b[31m", "\x1b[0m", "\x1b]8;;http://evil\x1b\\", "\x1b]8;;\x1b\\", "\x1b]0;pwned\x07",
    "\x1b[2J", "\x1b[H", "\x1bc", "\x9b31m", "\x90q", "\x9d", "\x07", "\x08", "\r", "\r\n",
    "\x00", "\x7f", "\ud800", "\udfff", "=", "+", "-", "@", "\t", "=HYPERLINK(\"x\")", "=1+2",
    "@SUM(A1)", "\u202e", "\u2028", "é", "日本", "🙂", "Stephen Crane", "Newark", " ", "\n",
]  # fmt: skip
#: Rich's own colour and style codes (SGR), the only escape sequences an output may hold.
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


class _EmptyConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@register_task
class _EmptyTask(Task[int, None]):
    """A run with no items: the fuzz appends its hostile records to samples.jsonl itself."""

    name = "testing.fuzz-hostile-export"

    def __init__(self, config: _EmptyConfig) -> None:
        self.config = config

    def items(self) -> list[tuple[str, int]]:
        return []

    def open(self, runtime: Any) -> Any:
        return opened(None)

    async def work(self, batch: Any, models: None) -> list[Record]:
        return []

    @classmethod
    def summarize(cls, records: Any, info: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(records)}


def hostile(rng: random.Random, *, start_with_formula: bool = False) -> str:
    parts = rng.choices(FRAGMENTS, k=rng.randint(1, 8))
    if start_with_formula:
        parts.insert(0, rng.choice(["=", "+", "-", "@", "\t", "\r"]))
    return "".join(parts)


def unsafe_in(output: str) -> list[str]:
    """What of ``output`` could drive a terminal: any control character (ESC included) once
    rich's own colour codes are taken out, and any lone surrogate."""
    return [repr(c) for c in _UNSAFE.findall(_SGR.sub("", output)) if c not in "\n"]


def plain(output: str) -> str:
    return _SGR.sub("", output)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The CLI's consoles as a colour terminal writing to one buffer."""
    buffer = io.StringIO()
    term = SafeConsole(file=buffer, force_terminal=True, color_system="truecolor", width=100)
    for module in (console_module, exit_module, kalma_module):
        for name in ("console", "err_console"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, term)
    return buffer


def test_printers_show_hostile_text_literally(terminal: io.StringIO, data_dir: Path) -> None:
    rng = random.Random(SEED)
    metrics = _metrics(data_dir)
    tried = tracebacks = silent = 0
    problems: list[str] = []
    for case in range(N_PRINTS):
        text = hostile(rng)
        tried += 1
        terminal.seek(0)
        terminal.truncate()
        try:
            console_module.warn(text)
            failure = Failure(id=hostile(rng), error=text, kind="model")
            finished = FinishedRun(Path(hostile(rng)), {}, 2, 1, failure)
            judge_runs([finished], ExitPolicy())
            console_module.console.print(literal(text), soft_wrap=True)
            hostile_metrics = json.loads(json.dumps(metrics))
            hostile_metrics["unmeasured"]["recall"] = {text: 1}
            hostile_metrics["config"]["nli_name"] = text
            kalma_module.print_metrics(hostile_metrics)
        except CitegraphError:
            continue
        except Exception as exc:
            tracebacks += 1
            problems.append(f"case {case}: {type(exc).__name__}: {exc}")
            continue
        out = terminal.getvalue()
        visible = " ".join(shown(text).split())  # rich expands tabs: compare words
        if visible and visible not in " ".join(plain(out).split()):
            silent += 1  # the text was read (markup), not shown
            problems.append(f"case {case}: {text!r} not shown literally")
        if bad := unsafe_in(out):
            problems.append(f"case {case}: {text!r} let {bad[:3]} through")
    assert tried == N_PRINTS
    assert (tracebacks, silent, problems) == (0, 0, [])


@pytest.mark.needs("spacy")
def test_ask_and_run_failures_print_hostile_text_inertly(tmp_path: Path, data_dir: Path) -> None:
    rng = random.Random(SEED + 1)
    replies = [hostile(rng) for _ in range(N_ASKS)]
    errors = [hostile(rng).replace("\ud800", "").replace("\udfff", "") for _ in range(N_RUNS)]
    runner = CliRunner()
    asked = ran = 0
    with FakeOpenAIServer(reply=lambda body: FakeReply(text=replies[asked])) as server:
        for i, reply in enumerate(replies):  # a new question each time: no cached reply
            result = runner.invoke(
                main,
                ["ask", f"Who was Stephen Crane ({i})?", "--model", "vllm/fake", "--base-url",
                 server.base_url, "--data-dir", str(data_dir)],
            )  # fmt: skip
            assert result.exit_code == 0, (reply, result.output, result.exception)
            assert unsafe_in(result.output) == [], reply
            visible = " ".join(shown(reply).split())
            assert not visible or visible[:20] in " ".join(result.stdout.split()), reply
            asked += 1
    for i, error in enumerate(errors):
        with FakeOpenAIServer(reply=lambda body, e=error: FakeReply(status=400, text=e)) as server:
            out = tmp_path / f"run-{i}-[/]-[link=evil]x[/link]"
            result = runner.invoke(
                main,
                ["kalma", "run", "--model", "vllm/fake", "--base-url", server.base_url,
                 "--limit", "1", "--data-dir", str(data_dir), "--out", str(out)],
            )  # fmt: skip
        assert result.exit_code == 3, (error, result.output, result.exception)
        folded = "".join(result.output.split())  # a long path is folded across lines
        assert unsafe_in(result.output) == [] and "[link=evil]x[/link]" in folded
        ran += 1
    assert (asked, ran) == (N_ASKS, N_RUNS)


def test_export_of_hostile_records(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rng = random.Random(SEED + 2)
    out = tmp_path / "run"
    run_sync(run_task_async(_EmptyTask(_EmptyConfig()), out))
    ids: list[str] = []
    with (out / "samples.jsonl").open("a", encoding="utf-8") as fh:
        for i in range(N_RECORDS):
            record: dict[str, Any] = {
                "id": f"h-{i}",
                "question": hostile(rng, start_with_formula=i % 2 == 0),
                "note": hostile(rng, start_with_formula=True),
                "value": rng.choice([-0.5, -3, 2.5, None]),
            }
            fh.write(json.dumps(record) + "\n")  # ASCII JSON: surrogates as escapes
            ids.append(record["id"])
    tracebacks = formulas = 0
    for fmt in ("csv", "parquet", "jsonl"):
        try:
            written = export_run(out, tmp_path / fmt, fmt)
        except CitegraphError:
            continue
        except Exception:
            tracebacks += 1
            continue
        if fmt == "csv":
            with written["samples"].open(encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh))
            for row in rows:
                for name, cell in row.items():
                    if cell.startswith(("=", "+", "-", "@", "\t", "\r")) and name != "value":
                        formulas += 1
                    if name == "value" and cell:
                        float(cell)  # a number column stays numbers
        elif fmt == "parquet":
            rows = pq.read_table(written["samples"]).to_pylist()
        else:
            rows = [
                json.loads(line)
                for line in written["samples"].read_text("utf-8").split("\n")
                if line
            ]
        got = [row["id"] for row in rows]
        assert sorted(got) == sorted(ids), f"{fmt}: rows lost or duplicated"
    assert (tracebacks, formulas) == (0, 0)


_DEMO_METRICS: dict[str, Any] = {}


def _metrics(data_dir: Path) -> dict[str, Any]:
    """A real ``kalma score`` metrics.json (the demo answers), made once."""
    if not _DEMO_METRICS:
        import tempfile
        from importlib import resources

        from citegraph.kalma import score_answers

        demo = Path(str(resources.files("citegraph.kalma") / "demo"))
        with tempfile.TemporaryDirectory() as tmp:
            result = score_answers(demo / "answers.jsonl", Path(tmp) / "s", data_dir=data_dir)
        _DEMO_METRICS.update(result.metrics)
    return _DEMO_METRICS
