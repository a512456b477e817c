"""AttributionBench loading: the real file (counts, hand-checked rows) and malformed rows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from citegraph.caqa.judge import attributionbench_path, load_attributionbench
from citegraph.errors import ConfigError, DataError, DataNotFoundError


def test_real_file_counts_and_rows(data_dir: Path) -> None:
    samples = load_attributionbench(data_dir)
    assert len(samples) == 1198
    assert Counter(s.label for s in samples) == {"supportive": 599, "unsupported": 599}
    assert Counter(s.source for s in samples) == {
        "attributionbench/Stanford-GenSearch": 544,
        "attributionbench/ExpertQA": 470,
        "attributionbench/LFQA": 110,
        "attributionbench/AttributedQA": 74,
    }
    first = samples[0]
    assert first.id == first.group == "AttributedQA_e8532c9c-5ff0-4dbf-8dee-1a12cb13b09e"
    assert first.question == "who sings the song i want to go outside in the rain"
    assert first.answer == "Milira sings the song 'I Want to Go Outside in the Rain.'"
    assert first.citation.startswith('Title: Go Outside in the Rain\n\n"Go Outside in the Rain"')
    assert first.citation.endswith("number thirty-six on Billboard's Hot R&B Singles chart.")
    assert (first.label, first.source, first.complexity) == (
        "supportive",
        "attributionbench/AttributedQA",
        None,
    )
    # line 216: two references, joined by one blank line
    two = samples[215]
    assert two.id == "ExpertQA_800dc2e5-3c8d-4fb6-9195-09624fd87620"
    assert two.citation.startswith("[2] http://keywen.com/en/GLOSSARY_OF_HEMATOLOGY\n\n")
    assert two.citation.count("\n\n[4] https://www.floridahealthfinder.gov/") == 1
    assert two.citation.endswith("These rods consist of clumps of azurophilic granule material.")
    last = samples[-1]
    assert last.id == "Stanford-GenSearch_7c45eddc-8347-42cd-b65c-bd1ba379b0c8"
    assert last.label == "unsupported"


def test_paths_and_limit(data_dir: Path) -> None:
    folder = data_dir / "attributionbench"
    file = folder / "dev_all_subset_balanced.jsonl"
    assert attributionbench_path(data_dir) == file
    assert attributionbench_path(folder) == file
    assert attributionbench_path(file) == file
    from_file = load_attributionbench(file, limit=2)
    assert len(from_file) == 2
    assert from_file[0].id == "AttributedQA_e8532c9c-5ff0-4dbf-8dee-1a12cb13b09e"
    assert load_attributionbench(folder, limit=2) == from_file
    assert load_attributionbench(file, limit=0) == []


ROW: dict[str, Any] = {
    "question": "q?",
    "claim": "c.",
    "references": ["r1", "r2"],
    "attribution_label": "not attributable",
    "src_dataset": "LFQA",
    "id": "x1",
}


def write(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "ab.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_small_file(tmp_path: Path) -> None:
    (sample,) = load_attributionbench(write(tmp_path, ROW))
    assert (sample.answer, sample.citation, sample.label) == ("c.", "r1\n\nr2", "unsupported")
    assert (sample.source, sample.group) == ("attributionbench/LFQA", "x1")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"claim": ""}, "claim"),
        ({"question": None}, "question"),
        ({"references": "r1"}, "references"),
        ({"references": []}, "references"),
        ({"references": ["ok", 3]}, "references"),
        ({"attribution_label": "partially"}, "attribution_label"),
        ({"src_dataset": 7}, "src_dataset"),
        ({"id": ""}, "id"),
    ],
)
def test_bad_rows_name_line_and_field(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    path = write(tmp_path, ROW | {"id": "ok"}, ROW | change)
    with pytest.raises(DataError) as info:
        load_attributionbench(path)
    assert (info.value.line, info.value.field) == (2, field)
    assert info.value.path == str(path)


def test_duplicate_ids_missing_file_and_bad_limit(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="duplicate id 'x1' \\(first on line 1\\)") as info:
        load_attributionbench(write(tmp_path, ROW, ROW))
    assert (info.value.line, info.value.field) == (2, "id")
    with pytest.raises(DataNotFoundError):
        load_attributionbench(tmp_path / "nowhere")
    with pytest.raises(ConfigError):
        load_attributionbench(tmp_path, limit=-1)
