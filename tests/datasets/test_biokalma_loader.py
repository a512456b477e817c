"""BioKaLMA loader on the real files: ids, prefix removal, graphs, entries without a graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.datasets import load_biokalma, resolve_data_dir
from citegraph.errors import ConfigError, DataNotFoundError
from citegraph.kg import Triple


def test_both_splits_have_1085_entries_and_98_without_graph(data_dir: Path) -> None:
    for split in ("general", "specific"):
        samples = load_biokalma(split, data_dir)
        assert len(samples) == 1085
        assert sum(not s.has_graph for s in samples) == 98
        assert [s.id for s in samples[:2]] == [f"{split}-0", f"{split}-1"]
        assert samples[1084].index == 1084


def test_general_prefix_removed(data_dir: Path) -> None:
    general = load_biokalma("general", data_dir)
    # Entry 1 of simple_question_graph.json is "question: Who was Ernst Hanfstaengl and ..."
    assert general[1].question.startswith("Who was Ernst Hanfstaengl")
    assert general[1].prefix_stripped
    assert not any(s.question.startswith("question: ") for s in general)
    assert sum(s.prefix_stripped for s in general) == 978  # counted with grep on the raw file


def test_specific_first_entry_is_stephen_crane(data_dir: Path) -> None:
    sample = load_biokalma("specific", data_dir)[0]
    assert sample.id == "specific-0"
    assert sample.question.startswith("What were some significant aspects of Stephen Crane")
    (graph,) = sample.graphs
    assert graph.center.id == "Q206534"
    assert graph.center.name == "Stephen Crane"
    assert graph.center.types == ("human",)
    assert Triple(subject="Q206534", relation="place of birth", value="Newark") in graph
    assert Triple(subject="Q206534", relation="date_of_birth", value="1871-11-01") in graph
    # 27 keys in the raw dict (counted by hand): qid is identity, the other 26 are facts.
    assert len(graph) == 26


def test_empty_values_are_not_facts(data_dir: Path) -> None:
    # specific-2: Andreas Pereira has "date_of_death": "" (living person).
    (graph,) = load_biokalma("specific", data_dir)[2].graphs
    assert graph.center.id == "Q17619350"
    assert graph.values("date_of_death") == []
    assert graph.values("father") == ["Marcos Pereira"]


def test_unknown_split_is_a_clear_error(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="unknown BioKaLMA split"):
        load_biokalma("complex", data_dir)  # type: ignore[arg-type]


def test_missing_data_dir_says_how_to_fetch(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="citegraph data fetch"):
        resolve_data_dir(tmp_path / "nope")


def test_env_variable_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_DATA", str(tmp_path))
    assert resolve_data_dir() == tmp_path
    with pytest.raises(DataNotFoundError, match="biokalma"):
        load_biokalma("specific")
