"""Citation validity of a free-mode ``kalma run`` (scripted mock model, real BioKaLMA questions):
the ``metrics.json`` block, the viewer's filters and sample page, and the HTML report's table.

The script answers specific-0 (Stephen Crane) with 4 brackets: a fact of his graph, a real KG
entity's fact that was not retrieved (Ernst Hanfstaengl's birthplace), an id BioKaLMA does not
have (Q999999999) and ``[1]``; specific-1 without any citation; specific-2 with one ``[NA]``.
A second run (``clean``) cites one fact of each graph and nothing else, to compare with.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.viewer.conftest import cli

from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import Runtime

CRANE = (
    "Stephen Crane was born in Newark [Q206534, place of birth: Newark]. "
    "He met Ernst Hanfstaengl, born in Munich [Q58051, place of birth: Munich]. "
    "He had a friend called Casper [Q999999999, friend: Casper]. "
    "See the biography [1]."
)


def script(request: ChatRequest) -> str:
    user = request.messages[-1].content
    if "{name: Stephen Crane," in user:
        return CRANE
    if "{name: Ernst Hanfstaengl," in user:
        return "Ernst Hanfstaengl was a German businessman. He lived in Munich."
    return "Andreas Pereira plays football [NA]."


def clean(request: ChatRequest) -> str:
    user = request.messages[-1].content
    if "{name: Stephen Crane," in user:
        return "Stephen Crane was born in Newark [Q206534, place of birth: Newark]."
    return "I cannot say [NA]."


@pytest.fixture(scope="module")
def free_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    root = tmp_path_factory.mktemp("validity") / "runs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEGRAPH_CACHE", str(root.parent / "cache"))
        run_kalma(
            root / "free",
            KalmaRunConfig(model="mock"),
            runtime=Runtime(limit=3),
            data_dir=data_dir,
            model=MockChat(script),
        )
        run_kalma(
            root / "clean",
            KalmaRunConfig(model="mock"),
            runtime=Runtime(limit=3),
            data_dir=data_dir,
            model=MockChat(clean, name="mock/clean"),
        )
    return root


def _ids(body: str) -> list[str]:
    return re.findall(r'class="sample-link" href="[^"]*">([^<]+)</a>', body)


def test_the_run_writes_the_block(free_run: Path) -> None:
    block = json.loads((free_run / "free" / "metrics.json").read_text())["citation_validity"]
    assert block["n_answers"] == 3
    assert (block["brackets"], block["malformed_brackets"]) == (5, 1)
    assert (block["kg_citations"], block["na_citations"]) == (3, 1)
    assert (block["outside_retrieved"], block["not_in_kg"], block["not_in_kg_checked"]) == (2, 1, 3)
    # sentences: 4 + 2 + 1; citations: 3 + 0 + 1; cited sentences: 3 + 0 + 1.
    assert (block["sentences"], block["citations"], block["sentences_cited"]) == (7, 4, 4)
    assert block["citations_per_sentence"] == pytest.approx(4 / 7)
    assert block["citations_per_sentence_mean"] == pytest.approx((3 / 4 + 0 + 1) / 3)
    assert block["answers_without_citations"] == 1
    assert block["unmeasured"] == {}


def test_the_viewer_filters_on_validity(free_run: Path) -> None:
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    client = TestClient(create_app([free_run], warm=False), base_url="http://127.0.0.1")
    expected = {
        "validity:malformed-brackets": ["specific-0"],
        "validity:outside-retrieved": ["specific-0"],
        "validity:not-in-kg": ["specific-0"],
        "validity:no-citations": ["specific-1"],
        "validity:not-in-kg-unmeasured": [],
    }
    for tag, ids in expected.items():
        response = client.get("/run", params={"run": "0/free", "tag": tag})
        assert response.status_code == 200
        assert _ids(response.text) == ids, tag
    overview = client.get("/run", params={"run": "0/free"}).text
    assert "<h3>Citation validity</h3>" in overview
    assert "tag=validity%3Amalformed-brackets" in overview  # the count links to its samples
    page = client.get("/sample", params={"run": "0/free", "id": "specific-0"}).text
    assert "<h3>Citation validity</h3>" in page
    assert "1 / 3 = 33.3% (Q999999999)" in page  # cited ids not in the KG
    assert "[1] (not a citation" in page


def test_the_report_has_the_table(free_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    cli("report", free_run / "free", "--out", out)
    html = out.read_text(encoding="utf-8")
    table = html[html.index("<h3>Citation validity</h3>") :]
    table = table[: table.index("</table>")]
    assert "malformed brackets" in table and "5 brackets" in table and "20.0%" in table
    assert "cited ids not in the KG" in table and "33.3%" in table
    assert "KG citations outside the retrieved graphs" in table and "66.7%" in table


def test_runs_compare_side_by_side(free_run: Path) -> None:
    from starlette.testclient import TestClient

    from citegraph.viewer import create_app

    client = TestClient(create_app([free_run], warm=False), base_url="http://127.0.0.1")
    body = client.get("/compare?run=0/free&run=0/clean").text
    for name, free, clean in [
        ("malformed brackets", "20.0", "0.0"),
        ("citations outside the retrieved graphs", "66.7", "0.0"),
        ("cited ids not in the KG", "33.3", "0.0"),
        ("citations per sentence", "0.5714", "1"),
    ]:
        row = body[body.index(f"<td>{name}</td>") :]
        row = row[: row.index("</tr>")]
        cells = re.findall(r'<td class="num">([^<]+)', row)
        assert [c.strip() for c in cells] == [free, clean], name
