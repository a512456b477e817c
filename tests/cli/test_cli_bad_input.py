"""Bad input files end in one clear error (issue 17, items 1 and 2): a binary or non-UTF-8 file
names the file, line and byte offset; a byte-order mark is accepted; an empty input is refused
instead of giving an empty run."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from citegraph.cli import main

CP1252_ANSWER = b'{"id": "specific-0", "answer": "He was born in \x91Newark\x92."}\n'
ANSWER = b'{"id": "specific-0", "answer": "He was born in Newark."}\n'


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _one_clear_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output, result.output
    for needle in needles:
        assert needle in result.output, result.output


def test_score_non_utf8_answers(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_bytes(CP1252_ANSWER)
    result = _invoke(
        "kalma", "score", str(answers), "--out", str(tmp_path / "o"), "--data-dir", str(data_dir)
    )
    _one_clear_error(result, "a.jsonl:1: not UTF-8", "0x91")


def test_score_non_utf8_gold(tmp_path: Path, data_dir: Path) -> None:
    answers, gold = tmp_path / "a.jsonl", tmp_path / "gold.jsonl"
    answers.write_bytes(ANSWER)
    gold.write_bytes(b'{"id": "specific-0", "knowledge": []}\n\x00\x91\xff\n')
    result = _invoke(
        "kalma", "score", str(answers), "--gold", str(gold), "--out", str(tmp_path / "o"),
        "--data-dir", str(data_dir),
    )  # fmt: skip
    _one_clear_error(result, "gold.jsonl:2: not UTF-8")


def test_score_accepts_a_bom(tmp_path: Path, data_dir: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_bytes(b"\xef\xbb\xbf" + ANSWER)
    result = _invoke(
        "kalma", "score", str(answers), "--out", str(tmp_path / "o"), "--data-dir", str(data_dir)
    )
    assert result.exit_code == 0, result.output
    assert "1 answers" in result.output


@pytest.mark.parametrize(
    "content", [b"", b"\n  \n\r\n", b"\xef\xbb\xbf"], ids=["empty", "blank", "bom"]
)
def test_score_refuses_an_empty_answers_file(
    tmp_path: Path, data_dir: Path, content: bytes
) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_bytes(content)
    out = tmp_path / "o"
    result = _invoke("kalma", "score", str(answers), "--out", str(out), "--data-dir", str(data_dir))
    _one_clear_error(result, "a.jsonl: no answers")
    assert not (out / "metrics.json").exists()


def test_caqa_judge_binary_samples(tmp_path: Path) -> None:
    samples = tmp_path / "test.jsonl"
    samples.write_bytes(bytes(range(128, 256)) + bytes(range(128)))
    result = _invoke(
        "caqa", "judge", str(samples), "--evaluator", "mock", "--out", str(tmp_path / "o")
    )
    _one_clear_error(result, "test.jsonl:1: not UTF-8")


def test_caqa_judge_refuses_empty_samples(tmp_path: Path) -> None:
    samples = tmp_path / "test.jsonl"
    samples.write_bytes(b"\n")
    out = tmp_path / "o"
    result = _invoke("caqa", "judge", str(samples), "--evaluator", "mock", "--out", str(out))
    _one_clear_error(result, "test.jsonl: no samples")
    assert not (out / "metrics.json").exists()


def test_conner_score_refuses_empty_knowledge(tmp_path: Path, data_dir: Path) -> None:
    know = tmp_path / "know.jsonl"
    know.write_bytes(b"")
    out = tmp_path / "o"
    result = _invoke(
        "conner", "score", str(know), "--metrics", "factuality", "--limit", "2",
        "--data-dir", str(data_dir), "--out", str(out),
    )  # fmt: skip
    _one_clear_error(result, "know.jsonl: no knowledge records")
    assert not (out / "metrics.json").exists()


def test_conner_score_non_utf8_knowledge(tmp_path: Path, data_dir: Path) -> None:
    know = tmp_path / "know.jsonl"
    know.write_bytes(b'{"id": "x", "text": "caf\xe9"}\n')
    result = _invoke(
        "conner", "score", str(know), "--metrics", "factuality", "--limit", "2",
        "--data-dir", str(data_dir), "--out", str(tmp_path / "o"),
    )  # fmt: skip
    _one_clear_error(result, "know.jsonl:1: not UTF-8", "0xe9")
