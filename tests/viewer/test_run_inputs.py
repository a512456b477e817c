"""Issue 36, defect 8, in the viewer, on real ``kalma score`` runs of the README's own-KG
example: runs that differ only in their answers file show it in the run list and on the
compare page, and a ``kalma score`` sample page does not say facts were removed before a
prompt (nothing was prompted)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests.viewer.conftest import cli

from citegraph.viewer import Site, write_report
from citegraph.viewer._site import compare_context

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own-kg"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """``<tmp>/runs/a`` and ``<tmp>/runs/b``: the same options, answers files that differ in
    one answer; and the first 12 hex digits of each answers file's SHA-256."""
    root = tmp_path_factory.mktemp("inputs") / "runs"
    first = EXAMPLE / "answers.jsonl"
    second = root.parent / "answers-b.jsonl"
    second.write_text(first.read_text(encoding="utf-8").replace("Lyon", "Paris"), "utf-8")
    short = []
    for name, answers in (("a", first), ("b", second)):
        cli("kalma", "score", answers, "--kg", EXAMPLE / "people.ttl",
            "--gold", EXAMPLE / "gold.jsonl", "--out", root / name)  # fmt: skip
        short.append(hashlib.sha256(answers.read_bytes()).hexdigest()[:12])
    return root, short


def test_the_run_list_shows_each_runs_answers_file(roots: tuple[Path, list[str]]) -> None:
    root, short = roots
    lines = {row.path.name: row for row in Site([root]).overviews()}
    assert lines["a"].settings["answers (sha256)"] == short[0]
    assert lines["b"].settings["answers (sha256)"] == short[1]
    same = {k: v for k, v in lines["a"].settings.items() if k != "answers (sha256)"}
    assert same == {k: v for k, v in lines["b"].settings.items() if k != "answers (sha256)"}


def test_the_compare_page_shows_the_answers_file_as_the_difference(
    roots: tuple[Path, list[str]],
) -> None:
    root, short = roots
    runs = [("0/a", root / "a"), ("0/b", root / "b")]
    assert compare_context(runs, Site([root]))["differ"] == {"answers (sha256)": short}


def test_a_kalma_score_page_says_nothing_was_prompted(roots: tuple[Path, list[str]]) -> None:
    root, _ = roots
    html = write_report([root / "a"], root.parent / "r.html").read_text(encoding="utf-8")
    assert "KG facts the answer was scored against" in html
    assert "nothing was prompted" in html
    assert "before prompting" not in html and "KG given to the model" not in html
