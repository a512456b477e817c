"""KalmaSplit: BioKaLMA read entry by entry gives what the whole-file loader gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.datasets import KalmaSplit, load_biokalma
from citegraph.datasets._biokalma import SPLIT_FILES
from citegraph.errors import DataError


@pytest.mark.parametrize("split", ["general", "specific"])
def test_every_entry_equals_the_loaders(data_dir: Path, split: str) -> None:
    whole = load_biokalma(split, data_dir)  # type: ignore[arg-type]
    lazy = KalmaSplit("biokalma", split, data_dir)  # type: ignore[arg-type]
    assert len(lazy) == len(whole) == 1085
    ids = [s.id for s in whole]
    assert lazy.samples(ids) == whole
    assert lazy.samples([f"{split}-1084", f"{split}-0"]) == [whole[1084], whole[0]]


def test_ids_outside_the_split(data_dir: Path) -> None:
    lazy = KalmaSplit("biokalma", "specific", data_dir)
    assert lazy.index_of("specific-7") == 7
    for sid in ("specific-1085", "general-7", "specific-07", "specific-", "specific--1", "x"):
        assert lazy.index_of(sid) is None
    with pytest.raises(DataError, match="no sample 'general-7'"):
        lazy.samples(["general-7"])


def test_a_bad_entry_is_refused_when_the_split_is_opened(tmp_path: Path) -> None:
    good = ["Who was A?", [{"qid": "Q1", "name": "A", "occupation": "writer"}]]
    for name in SPLIT_FILES.values():
        (tmp_path / name).write_text(json.dumps([good, ["Who?", [{"name": "B"}]]]))
    with pytest.raises(DataError, match="entry 1: entity 0 has no 'qid'"):
        KalmaSplit(tmp_path, "specific")


def test_ids_and_has_graph_without_building_graphs(data_dir: Path) -> None:
    whole = load_biokalma("general", data_dir)
    lazy = KalmaSplit("biokalma", "general", data_dir)
    assert lazy.ids == [s.id for s in whole]
    assert [lazy.has_graph(s.id) for s in whole] == [s.has_graph for s in whole]
    assert sum(not lazy.has_graph(i) for i in lazy.ids) == 98
    assert not lazy.has_graph("general-5000")
