"""Entity references (gold subjects, answers' ``entities``) resolved to ids, or refused."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from citegraph.errors import DataError
from citegraph.kalma import score_answers
from citegraph.kalma.score._resolve import Reference, resolve_in_graphs
from citegraph.kg import Entity, Subgraph

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def _ref(text: str) -> Reference:
    return Reference(text=text, path=Path("gold.jsonl"), line=3, field="knowledge", what="subject")


def _graph(qid: str, name: str) -> Subgraph:
    return Subgraph(center=Entity(id=qid, name=name))


def test_a_name_of_one_entry_graph_is_its_id() -> None:
    graphs = [_graph("Q1", "John Smith"), _graph("Q2", "Jane Doe")]
    assert resolve_in_graphs(_ref("Q2"), graphs) == "Q2"
    assert resolve_in_graphs(_ref("  jane DOE "), graphs) == "Q2"


def test_a_name_two_entry_graphs_share_is_ambiguous() -> None:
    graphs = [_graph("Q1", "John Smith"), _graph("Q7", "John Smith")]
    with pytest.raises(DataError) as caught:
        resolve_in_graphs(_ref("John Smith"), graphs)
    error = caught.value
    assert (error.path, error.line, error.field) == ("gold.jsonl", 3, "knowledge")
    assert "subject 'John Smith' is ambiguous: it names 2 entities among the entry's graphs" in (
        str(error)
    )
    assert "(Q1, Q7)" in str(error)


def test_entities_over_a_dataset_are_an_error(tmp_path: Path, data_dir: Path) -> None:
    rows = [json.loads(line) for line in (DEMO / "answers.jsonl").read_text().splitlines()]
    rows[1]["entities"] = ["Q58051"]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match="'entities' choose graphs from your own KG") as caught:
        score_answers(answers, tmp_path / "run", data_dir=data_dir)
    assert (caught.value.line, caught.value.field) == (2, "entities")
