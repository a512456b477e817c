"""Issue 26, item 10: what a new user met in the viewer and the report, each reproduced first.

- a zero-citation answer said ``correctness unmeasured: ?``;
- ``citegraph view --port N`` printed the URL before failing on a busy port;
- a CONNER run page stacked one warning banner per note;
- the per-complexity F1 plot of a judge whose F1 is 0 everywhere was empty, on a negative axis;
- a long confusion-matrix title ran off the figure;
- the report named runs by their absolute local paths;
- the run table overflowed a 900 px window (the browser check is in ``test_browser.py``).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.viewer.conftest import DEMO, cli

from citegraph.cli import main
from citegraph.runs import Chart, Series
from citegraph.viewer import chart_svg, open_port, write_report
from citegraph.viewer._plots import TITLE_WIDTH, wrapped_title
from citegraph.viewer._render import environment


@pytest.fixture(scope="module")
def zero_citation_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """kalma score of one demo answer rewritten to cite nothing, under ``<tmp>/runs/``."""
    root = tmp_path_factory.mktemp("defects")
    first = json.loads((DEMO / "answers.jsonl").read_text(encoding="utf-8").splitlines()[0])
    first["answer"] = "Stephen Crane was an American writer."
    answers = root / "answers.jsonl"
    answers.write_text(json.dumps(first) + "\n", encoding="utf-8")
    out = root / "runs" / "zero"
    cli("kalma", "score", answers, "--gold", str(DEMO / "gold.jsonl"),
        "--data-dir", data_dir, "--out", out)  # fmt: skip
    return out


def test_a_zero_citation_answer_says_why_it_is_unmeasured(zero_citation_run: Path) -> None:
    report = write_report([zero_citation_run], zero_citation_run.parent.parent / "r.html")
    html = report.read_text(encoding="utf-8")
    assert "unmeasured: ?" not in html
    # correctness = 0 correct / 0 cited and precision likewise: unmeasured, with the reason
    assert html.count("unmeasured: no citations (the answer cites no KG triple: 0 / 0)") == 2
    assert "<dt>citations</dt><dd>0 (the answer cites no KG triple)</dd>" in html


def test_report_names_runs_relative_to_the_report(zero_citation_run: Path, tmp_path: Path) -> None:
    beside = write_report([zero_citation_run], zero_citation_run.parent.parent / "r.html")
    html = beside.read_text(encoding="utf-8")
    assert '<a href="#run-0">runs/zero</a>' in html
    assert str(zero_citation_run.parent) not in html  # no absolute path of this machine
    elsewhere = write_report([zero_citation_run], tmp_path / "sub" / "r.html")
    relative = Path("..") / ".." / zero_citation_run.relative_to(tmp_path.parent)
    assert f'<a href="#run-0">{relative.as_posix()}</a>' in elsewhere.read_text(encoding="utf-8")


def test_a_busy_port_fails_before_the_url_is_printed() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["view", "--port", str(port)])
        assert result.exit_code == 2
        assert f"port {port} on 127.0.0.1 is in use" in result.output
        assert re.search(r"choose another with --port \d+", result.output)
        assert "http://" not in result.output
        with pytest.raises(Exception, match="is in use"):
            open_port("127.0.0.1", port)
    sock = open_port("127.0.0.1", port)  # free again: bound, ready to serve
    assert sock.getsockname()[1] == port
    sock.close()


def test_several_notes_are_one_collapsible_list_with_a_count() -> None:
    template = environment().from_string('{% from "_blocks.html" import notes %}{{ notes(items) }}')
    seven = [f"note {i} <b>" for i in range(7)]
    html = template.render(items=seven)
    assert html.count("warn-note") == 1 and html.count("<li>") == 7
    assert html.startswith('<details class="notes warn-note"><summary>7 notes')
    assert "&lt;b&gt;" in html  # escaped
    assert template.render(items=["only"]) == '<p class="note warn-note">only</p>'
    assert template.render(items=[]).strip() == ""


def _texts(svg: str) -> list[str]:
    """The text of every ``<text>`` element (svg.fonttype none keeps text as text)."""
    return [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<text\b.*?</text>", svg, re.S)]


def test_an_all_zero_bar_chart_shows_its_zeros_on_a_non_negative_axis() -> None:
    """A judge that never parses gets micro-F1 0 at every level; union had no samples."""
    chart = Chart(
        kind="bar",
        title="micro-F1 per attribution complexity (Table 6)",
        y_label="micro-F1",
        series=[Series(name="llm:mock", x=["single", "concatenation", "union"],
                       y=[0.0, 0.0, None])],
    )  # fmt: skip
    texts = _texts(chart_svg(chart))
    assert not any("\u2212" in t or t.startswith("-") for t in texts), texts  # no negative tick
    assert texts.count("0") == 2  # each zero bar is labelled
    assert "n/a" in texts  # the level without a value is named, not drawn as a 0 bar
    assert "1.2" in texts  # the axis runs 0 .. 1.3 (headroom over a top of 1)


def test_a_long_chart_title_wraps_inside_the_figure() -> None:
    title = "Confusion matrix: llm:vllm/meta-llama/Llama-3.1-70B-Instruct:caqa-table11-gpt-v1"
    lines = wrapped_title(title).split("\n")
    assert lines == ["Confusion matrix: llm:vllm/meta-llama/",
                     "Llama-3.1-70B-Instruct:caqa-table11-gpt-v1"]  # fmt: skip
    assert all(len(line) <= TITLE_WIDTH for line in lines)
    chart = Chart(kind="heatmap", title=title, matrix=[[1.0, 2.0], [3.0, 4.0]])
    texts = _texts(chart_svg(chart))
    assert lines[0] in texts and lines[1] in texts
