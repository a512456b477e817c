"""load_kalma_dataset: BioKaLMA by name, or a dataset directory written by kalma build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.datasets._biokalma import kalma_dataset_path, load_kalma_dataset
from citegraph.errors import ConfigError, DataError, DataNotFoundError

SHAKESPEARE = {
    "name": "William Shakespeare",
    "spouse": "Anne Hathaway",
    "child": ["Hamnet Shakespeare", "Susanna Hall", "Judith Quiney"],
    "instance of": "human",
    "qid": "Q692",
}
HATHAWAY = {"name": "Anne Hathaway", "spouse": "William Shakespeare", "qid": "Q2851130"}


def _dataset(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    general = [
        ["Who was William Shakespeare married to?", [SHAKESPEARE, HATHAWAY]],
        ["question: How many children did Shakespeare have?", [SHAKESPEARE]],
    ]
    specific = [["Which of William Shakespeare's children was his only son?", [SHAKESPEARE]]]
    (root / "simple_question_graph.json").write_text(json.dumps(general), encoding="utf-8")
    (root / "complex_question_graph.json").write_text(json.dumps(specific), encoding="utf-8")
    return root


def test_directory_dataset(tmp_path: Path) -> None:
    root = _dataset(tmp_path / "built")
    general = load_kalma_dataset(str(root), "general")
    assert [s.id for s in general] == ["general-0", "general-1"]
    assert general[1].question == "How many children did Shakespeare have?"
    assert general[1].prefix_stripped
    will, anne = general[0].graphs
    assert [e.id for e in general[0].entities] == ["Q692", "Q2851130"]
    assert will.values("child") == ["Hamnet Shakespeare", "Susanna Hall", "Judith Quiney"]
    assert len(will) == 6  # name, spouse, three children, instance of
    assert anne.values("spouse") == ["William Shakespeare"]
    [specific] = load_kalma_dataset(root, "specific")  # a Path works too
    assert (specific.id, specific.index, specific.split) == ("specific-0", 0, "specific")
    assert kalma_dataset_path(root, "general") == root / "simple_question_graph.json"
    assert kalma_dataset_path(str(root), "specific") == root / "complex_question_graph.json"


def test_biokalma_by_name_uses_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _dataset(data / "biokalma")
    path = kalma_dataset_path("biokalma", "specific", data)
    assert path == data / "biokalma" / "complex_question_graph.json"
    assert [s.id for s in load_kalma_dataset("biokalma", "general", data)] == [
        "general-0",
        "general-1",
    ]


def test_missing_directory_or_file(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="not a dataset directory") as info:
        load_kalma_dataset(tmp_path / "nope", "general")
    assert info.value.path == str(tmp_path / "nope")
    root = _dataset(tmp_path / "half")
    (root / "complex_question_graph.json").unlink()
    assert len(load_kalma_dataset(root, "general")) == 2
    with pytest.raises(DataNotFoundError, match=r"simple_question_graph\.json and") as info:
        kalma_dataset_path(root, "specific")
    assert info.value.path == str(root / "complex_question_graph.json")


def test_bad_split_and_bad_values(tmp_path: Path) -> None:
    root = _dataset(tmp_path / "built")
    with pytest.raises(ConfigError, match="unknown KaLMA split"):
        load_kalma_dataset(root, "complex")  # type: ignore[arg-type]
    bad = [["q?", [{"qid": "Q1", "name": "A B", "child": ["C D", 7]}]]]
    (root / "simple_question_graph.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(DataError, match="entry 0: entity 0: a list value must hold") as info:
        load_kalma_dataset(root, "general")
    assert info.value.field == "child"
