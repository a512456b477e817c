"""CONNER test-set loader: the real NQ / WoW files (counts and quirks) and malformed rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.datasets import NO_PASSAGE, conner_path, load_conner, read_conner
from citegraph.errors import ConfigError, DataError, DataNotFoundError


def test_nq_has_500_items_with_stable_ids(data_dir: Path) -> None:
    samples = load_conner("nq", data_dir)
    assert len(samples) == 500
    assert [s.id for s in samples[:2]] == ["nq:0", "nq:1"]
    assert samples[499].id == "nq:499"
    first = samples[0]
    assert first.task == "nq"
    assert first.topic == "Adobe Flash Player"
    assert first.query == "what is the most current adobe flash player version"
    assert first.gold_answer == "28.0. 0.137"
    assert first.gold_knowledge.startswith("Availability on desktop operating systems Platform")
    assert first.history == ()
    glory = samples[9]  # line 10 of the file
    assert glory.query == "who wrote the song the glory of love"
    assert glory.gold_answer == "Billy Hill"


def test_nq_quirks_are_kept(data_dir: Path) -> None:
    samples = load_conner("nq", data_dir)
    # counted on the raw file: no question mark anywhere, 5 passages appear twice, the longest
    # passage is a table of 25,925 whitespace-separated words
    assert sum(s.query.endswith("?") for s in samples) == 0
    assert len(samples) - len({s.gold_knowledge for s in samples}) == 5
    assert max(len(s.gold_knowledge.split()) for s in samples) == 25925


def test_wow_seen_first_item_splits_the_history(data_dir: Path) -> None:
    samples = load_conner("wow", data_dir)  # split defaults to "seen"
    assert len(samples) == 500
    beard = samples[0]
    assert beard.id == "wow-seen:0"
    assert beard.topic == "Beard"
    assert len(beard.history) == 7
    assert beard.history[0] == "i like beards."
    assert beard.query == "thats cool, seems like middle easteners grow a lot."
    assert beard.history[-1] == beard.query
    assert beard.gold_answer == "Indian, Middle Eastern, and European areas are known for beards!"
    assert beard.gold_knowledge.startswith("The evolutionary loss of hair is pronounced")


def test_wow_unseen_and_quirks(data_dir: Path) -> None:
    seen = load_conner("wow", data_dir, split="seen")
    unseen = load_conner("wow", data_dir, split="unseen")
    assert len(unseen) == 500
    assert unseen[0].id == "wow-unseen:0"
    assert unseen[0].topic == "Accounting"
    assert unseen[0].history == ("Hello i was curious do you know anything about accounting?",)
    # counted with awk: turns without knowledge, one-turn histories, at most 9 turns
    assert sum(s.gold_knowledge == NO_PASSAGE for s in seen) == 30
    assert sum(s.gold_knowledge == NO_PASSAGE for s in unseen) == 34
    assert sum(len(s.history) == 1 for s in seen) == 51
    assert sum(len(s.history) == 1 for s in unseen) == 71
    assert max(len(s.history) for s in seen + unseen) == 9
    # 4 seen and 5 unseen responses start with a space in the file; 7 + 7 turns are padded;
    # unseen line 446's history starts with a space: all stripped
    for s in seen + unseen:
        assert s.gold_answer == s.gold_answer.strip()
        assert all(turn == turn.strip() for turn in s.history)
    assert unseen[445].history[0] == "I love the Walking Dead."
    assert seen[13].gold_answer.startswith("Nursing school students are g")


def test_limit_and_path(data_dir: Path) -> None:
    assert [s.id for s in load_conner("wow", data_dir, split="unseen", limit=3)] == [
        "wow-unseen:0",
        "wow-unseen:1",
        "wow-unseen:2",
    ]
    assert load_conner("nq", data_dir, limit=0) == []
    path = conner_path("nq", data_dir)
    assert path.name == "nq_test_random_testset.txt"


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="NQ has no split"):
        load_conner("nq", split="seen")
    with pytest.raises(ConfigError, match="unknown WoW split"):
        load_conner("wow", split="test")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown CONNER task"):
        load_conner("hotpot")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="limit"):
        load_conner("nq", limit=-1)


def test_missing_data_dir(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError):
        load_conner("nq", tmp_path)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rows.txt"
    path.write_bytes(text.encode("utf-8"))
    return path


def test_synthetic_rows_crlf_and_trailing_blank_lines(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "Paris\t hi [SEP] Paris is the capital. [SEP]tell me more \tParis is big.\tIt is!\r\n"
        "Rome\tciao\tRome is old.\tYes.\r\n\n  \n",
    )
    samples = read_conner(path, "wow", id_prefix="mine")
    assert [s.id for s in samples] == ["mine:0", "mine:1"]
    assert samples[0].history == ("hi", "Paris is the capital.", "tell me more")
    assert samples[0].query == "tell me more"
    assert samples[0].gold_answer == "It is!"
    assert samples[1].history == ("ciao",)
    nq = read_conner(path, "nq")
    assert nq[0].id == "nq:0"
    assert nq[0].query == "hi [SEP] Paris is the capital. [SEP]tell me more"


def test_wrong_number_of_fields_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "a\tb\tc\td\na\tb\tc\n")
    with pytest.raises(DataError) as err:
        read_conner(path, "nq")
    assert err.value.line == 2
    assert err.value.path == str(path)
    assert "found 3" in str(err.value)


def test_blank_line_inside_the_file_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "a\tb\tc\td\n\na\tb\tc\td\n")
    with pytest.raises(DataError) as err:
        read_conner(path, "nq")
    assert err.value.line == 2


def test_empty_field_and_empty_turn(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        read_conner(_write(tmp_path, "a\tb\t  \td\n"), "nq")
    assert (err.value.line, err.value.field) == (1, "gold_knowledge")
    with pytest.raises(DataError) as err:
        read_conner(_write(tmp_path, "a\thi [SEP]  [SEP] there\tk\tr\n"), "wow")
    assert err.value.field == "history"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\xe9\tq\tk\ta\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        read_conner(path, "nq")


def test_the_records_live_in_datasets_and_conner_re_exports_them() -> None:
    import citegraph.conner as conner
    from citegraph.datasets import CONNER_TASKS, ConnerSample

    assert conner.ConnerSample is ConnerSample and CONNER_TASKS == ("nq", "wow")
    assert conner.CONNER_TASKS is CONNER_TASKS
    # one name per concept: no ``Task`` / ``TASKS`` aliases beside the engine's ``runs.Task``
    assert not hasattr(conner, "Task") and not hasattr(conner, "TASKS")
    assert ConnerSample.__module__.startswith("citegraph.datasets")
