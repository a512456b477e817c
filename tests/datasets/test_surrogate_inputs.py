"""Every dataset reader holds a lone surrogate (issue 37, item 5).

JSON's ``\\ud800`` escape decodes to text no model, tokenizer, grammar engine or spaCy takes.
Answers, gold, your own questions and KaLMA dataset files read it as U+FFFD, and each file says
so once (a :class:`~citegraph.io.TextWarning` with the count, the first line or entry, and the
field), so nothing downstream ever receives one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citegraph.datasets import QuestionsFile, index_answers, read_answers, read_gold
from citegraph.datasets._biokalma import KalmaSplit, load_kalma_dataset
from citegraph.io import TextWarning


def _lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _no_surrogate(text: str) -> bool:
    text.encode("utf-8")  # raises on a lone surrogate
    return True


def test_answers_and_their_questions(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "answers.jsonl",
        '{"id": "q1", "answer": "ok [NA].", "question": "Who\\udfff?"}',
        '{"id": "q2", "answer": "A\\ud800 [NA].", "entities": ["ex:X\\ud800"]}',
    )
    with pytest.warns(TextWarning, match="2 lines held .* the first: line 1, field 'question'"):
        first, second = read_answers(path)
    assert first.question == "Who\ufffd?" and second.answer == "A\ufffd [NA]."
    assert second.entities == ("ex:X\ufffd",)
    with pytest.warns(TextWarning):
        index = index_answers(path)
    assert [r.question for r in index.read([0, 1])] == ["Who\ufffd?", None]


def test_gold(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "gold.jsonl",
        '{"id": "q1", "knowledge": [["Q1", "spouse", "Anne\\ud800"]], "absent": []}',
    )
    with pytest.warns(TextWarning, match="line 1, field 'knowledge\\[0\\]\\[2\\]'"):
        gold = read_gold(path)
    assert gold["q1"].knowledge[0].value == "Anne\ufffd"


def test_own_questions(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "questions.jsonl",
        '{"id": "w", "question": "Which river\\udfff flows through Warsaw?"}',
    )
    with pytest.warns(TextWarning, match="1 line held .* line 1, field 'question'"):
        questions = QuestionsFile(path)
    [question] = questions.samples(["w"])
    assert question.question == "Which river\ufffd flows through Warsaw?"


def test_a_kalma_dataset_directory(tmp_path: Path) -> None:
    """The issue's repro: a dataset graph value holding ``\\ud800`` (here also a question and
    a list value) is read as U+FFFD, by the streaming split and by the whole-file loader."""
    shakespeare = {"name": "William Shakespeare", "spouse": "Anne\ud800 Hathaway",
                   "child": ["Hamnet", "Susanna\udfff"], "qid": "Q692"}  # fmt: skip
    entries = [["Who was he married to?", [shakespeare]], ["Who\ud800?", []]]
    for name in ("simple_question_graph.json", "complex_question_graph.json"):
        (tmp_path / name).write_text(json.dumps(entries), encoding="utf-8")
    assert "\\ud800" in (tmp_path / "simple_question_graph.json").read_text(encoding="utf-8")
    with pytest.warns(TextWarning) as caught:
        split = KalmaSplit(tmp_path, "general")
    [warning] = caught
    assert str(warning.message).endswith(
        "2 entries held text UTF-8 cannot encode (a lone surrogate, such as JSON's \\ud800 "
        "escape), read with U+FFFD in its place; the first: entry 0, field "
        "'entities[0][\"spouse\"]'"
    )
    with pytest.warns(TextWarning, match="2 entries held"):
        loaded = load_kalma_dataset(tmp_path, "specific")
    for sample in [*split.samples(["general-0", "general-1"]), *loaded]:
        assert _no_surrogate(sample.question)
        for graph in sample.graphs:
            assert all(_no_surrogate(t.relation + t.value) for t in graph.triples)
    graph = split.samples(["general-0"])[0].graphs[0]
    assert graph.values("spouse") == ["Anne\ufffd Hathaway"]
    assert graph.values("child") == ["Hamnet", "Susanna\ufffd"]
    assert loaded[1].question == "Who\ufffd?"
