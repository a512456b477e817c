"""An input path that is not a regular file says what it is (issue 37, item 12).

A directory named ``kg.ttl`` or ``answers.jsonl``, and ``/dev/zero`` or ``/dev/urandom`` given as
answers, gold, questions, a dataset or the KG, said "file not found" (or, for a whole-file
reader, read the endless device until memory ran out). Each is now named for what it is, before
a byte is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.datasets import QuestionsFile, read_answers, read_gold
from citegraph.datasets._biokalma import load_kalma_dataset
from citegraph.errors import DataError, DataNotFoundError
from citegraph.io import iter_jsonl, load_json, read_text, regular_file
from citegraph.kg import open_kg

DEVICES = [d for d in ("/dev/zero", "/dev/urandom") if os.path.exists(d)]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own-kg"

READERS: dict[str, Callable[[Path], Any]] = {
    "answers": read_answers,
    "gold": read_gold,
    "questions": QuestionsFile,
    "jsonl": lambda p: list(iter_jsonl(p)),
    "json": load_json,
    "text": read_text,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_device_is_refused_by_name_and_never_read(reader: str, device: str) -> None:
    with pytest.raises(DataError) as caught:
        READERS[reader](Path(device))
    assert not isinstance(caught.value, DataNotFoundError)
    assert str(caught.value) == (
        f"{device}: is not a regular file (a character device), expected a file"
    )


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_directory_is_named_a_directory(reader: str, tmp_path: Path) -> None:
    folder = tmp_path / "answers.jsonl"
    folder.mkdir()
    with pytest.raises(DataError) as caught:
        READERS[reader](folder)
    assert not isinstance(caught.value, DataNotFoundError)
    assert str(caught.value) == f"{folder}: is a directory, expected a file"


def test_a_link_to_a_device_is_the_device_and_a_missing_file_is_not_found(
    tmp_path: Path,
) -> None:
    link = tmp_path / "answers.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(DataError, match="is not a regular file \\(a character device\\)"):
        read_answers(link)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="is not a regular file \\(a pipe\\)"):
        read_answers(fifo)  # never opened: opening a pipe would wait for a writer
    with pytest.raises(DataNotFoundError, match="file not found"):
        read_answers(tmp_path / "missing.jsonl")
    with pytest.raises(DataNotFoundError, match="file not found"):
        regular_file(tmp_path / "answers.jsonl" / "x")  # under a link to a device


def test_the_kg_says_what_its_path_is(tmp_path: Path) -> None:
    folder = tmp_path / "kg.ttl"
    folder.mkdir()
    with pytest.raises(DataError) as caught:
        open_kg(str(folder))
    assert str(caught.value) == f"{folder}: is a directory, expected an RDF file of the KG"
    device = tmp_path / "zero.ttl"
    device.symlink_to("/dev/zero")
    with pytest.raises(DataError) as caught:
        open_kg(str(device))
    assert str(caught.value) == (
        f"{device}: is not a regular file (a character device), expected an RDF file of the KG"
    )
    with pytest.raises(DataNotFoundError, match="the KG file does not exist"):
        open_kg(str(tmp_path / "missing.ttl"))


def test_a_dataset_split_file_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "simple_question_graph.json").mkdir()
    (tmp_path / "complex_question_graph.json").write_text(json.dumps([]), encoding="utf-8")
    with pytest.raises(DataError, match="is a directory, expected a JSON file"):
        load_kalma_dataset(tmp_path, "general")
    assert load_kalma_dataset(tmp_path, "specific") == []


def test_the_cli_names_a_device_given_as_answers_gold_or_kg(tmp_path: Path) -> None:
    """The issue's repro: each command exits 2 with one line saying what the path is."""
    zero = tmp_path / "zero.ttl"
    zero.symlink_to("/dev/zero")
    answers, kg = EXAMPLE / "answers.jsonl", EXAMPLE / "people.ttl"
    cases = [
        (["/dev/zero", "--kg", kg], "/dev/zero: is not a regular file (a character device)"),
        ([answers, "--kg", kg, "--gold", "/dev/urandom"], "/dev/urandom: is not a regular"),
        ([answers, "--kg", zero], f"{zero}: is not a regular file (a character device)"),
    ]
    for k, (args, says) in enumerate(cases):
        out = tmp_path / f"run{k}"
        result = CliRunner().invoke(main, ["kalma", "score", *map(str, args), "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert says in result.output
        assert "not found" not in result.output and "Traceback" not in result.output
