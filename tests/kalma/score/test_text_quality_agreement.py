"""The text-quality judge against human scores: the human file and the agreement block.

Hand example (coherence; five answers with both scores, ranked by hand):

    human  1  2  2  4  5        ranks 1  2.5 2.5 4  5     (the two 2s share ranks 2 and 3)
    judge  2  1  3  3  3        ranks 2  1   4   4  4     (the three 3s share ranks 3, 4, 5)

Pairs (i < j): (0,1) discordant; (0,2) (0,3) (0,4) (1,3) (1,4) concordant; (1,2) tied on the
human score; (2,3) (2,4) (3,4) tied on the judge's. C = 5, D = 1, n1 = 1, n2 = 3, n0 = 10.

- Spearman: rank deviations (-2, -.5, -.5, 1, 2) and (-1, -2, 1, 1, 1): Sxy = 5.5, Sxx = 9.5,
  Syy = 8, rho = 5.5 / sqrt(76).
- Kendall tau-b = (5 - 1) / sqrt((10 - 1)(10 - 3)) = 4 / sqrt(63).
- Somers' D(judge | human) = (5 - 1) / (10 - 1) = 4 / 9 (the pair tied on the human score is
  left out; the pairs tied on the judge's count).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import DataError, DataNotFoundError
from citegraph.kalma.score._text_quality_agreement import (
    HUMAN_FIELD,
    NO_HUMAN,
    NOT_JUDGED,
    read_human_scores,
    text_quality_agreement,
)

HUMAN = [1, 2, 2, 4, 5]
JUDGE = [2, 1, 3, 3, 3]


def _record(i: str, human: dict[str, float] | None, judge: dict[str, int | None] | None) -> dict:
    record: dict[str, Any] = {"id": i}
    if human is not None:
        record[HUMAN_FIELD] = human
    if judge is not None:
        record["text_quality"] = {
            "mode": "paper",
            "prompt_version": "kalma-geval-v1",
            "judge": "mock/judge",
            "scores": {
                c: {
                    "criterion": c,
                    "score": s,
                    "reply": str(s),
                    "reason": None if s else "empty reply",
                }
                for c, s in judge.items()
            },
        }
    return record


def _records() -> list[dict]:
    records = [
        _record(f"q{i}", {"coherence": h}, {"coherence": j})
        for i, (h, j) in enumerate(zip(HUMAN, JUDGE, strict=True))
    ]
    records.append(_record("judged-only", None, {"coherence": 4}))
    records.append(_record("human-only", {"coherence": 3}, None))
    records.append(_record("unmeasured", {"coherence": 3}, {"coherence": None}))
    records.append({"id": "failed", "status": "failed"})
    return records


def test_coefficients_by_hand() -> None:
    block = text_quality_agreement(_records(), bootstrap=200, seed=1)
    assert block is not None and list(block) == ["coherence"]
    coherence = block["coherence"]
    assert coherence["n"] == 5
    assert coherence["spearman"]["value"] == pytest.approx(5.5 / math.sqrt(76))
    assert coherence["kendall_tau_b"]["value"] == pytest.approx(4 / math.sqrt(63))
    assert coherence["somers_d"]["value"] == pytest.approx(4 / 9)
    assert "D(judge | human)" in coherence["somers_d"]["direction"]
    assert coherence["unmeasured_reasons"] == {
        NOT_JUDGED: 1,
        NO_HUMAN: 1,
        "judge score unmeasured: empty reply": 1,
    }
    assert coherence["n_unmeasured"] == 3
    ci = coherence["spearman"]["ci"]
    assert ci["n_resamples"] == 200 and ci["seed"] == 1 and ci["unit"] == "answer"
    assert ci["low"] <= ci["high"]


def test_perfect_agreement_has_a_point_interval() -> None:
    # Every resample with two distinct scores orders judge and human alike: 1.0; resamples of
    # one repeated answer are undefined and left out (n_valid < n_resamples).
    records = [_record(f"q{i}", {"fluency": i}, {"fluency": i}) for i in (1, 2, 3, 4)]
    block = text_quality_agreement(records)
    assert block is not None
    for name in ("spearman", "kendall_tau_b", "somers_d"):
        c = block["fluency"][name]
        assert c["value"] == pytest.approx(1.0)
        assert (c["ci"]["low"], c["ci"]["high"]) == (pytest.approx(1.0), pytest.approx(1.0))
        assert c["ci"]["n_resamples"] == 1000  # the default when the run's bootstrap is 0
        assert c["ci"]["n_valid"] < 1000


def test_no_human_scores_no_block() -> None:
    assert text_quality_agreement([_record("q", None, {"coherence": 3})]) is None


def test_undefined_coefficient_says_why() -> None:
    records = [_record(f"q{i}", {"relevance": 3}, {"relevance": i}) for i in (1, 2, 3)]
    block = text_quality_agreement(records)
    assert block is not None
    rho = block["relevance"]["spearman"]
    assert rho["value"] is None and "constant" in rho["reason"] and rho["ci"] is None


def test_read_human_scores(tmp_path: Path) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text(
        '{"id": "specific-0", "coherence": 4, "consistency": 5, "fluency": 3, "relevance": 4}\n'
        "\n"
        '{"id": "specific-1", "fluency": 3.5, "relevance": null}\n'
    )
    assert read_human_scores(path) == {
        "specific-0": {"coherence": 4.0, "consistency": 5.0, "fluency": 3.0, "relevance": 4.0},
        "specific-1": {"fluency": 3.5},
    }


@pytest.mark.parametrize(
    ("line", "field", "needle"),
    [
        ('{"coherence": 4}', "id", "missing answer id"),
        ('{"id": "", "coherence": 4}', "id", "missing answer id"),
        ('{"id": "a", "coherance": 4}', "coherance", "unknown field"),
        ('{"id": "a", "coherence": 6}', "coherence", "not a number from 1 to 5"),
        ('{"id": "a", "coherence": 0}', "coherence", "not a number from 1 to 5"),
        ('{"id": "a", "fluency": "4"}', "fluency", "not a number from 1 to 5"),
        ('{"id": "a", "fluency": true}', "fluency", "not a number from 1 to 5"),
        ('{"id": "a", "fluency": null}', None, "no score"),
        ('{"id": "a"}', None, "no score"),
        ('{"id": "x", "coherence": 4}', "id", "scored twice"),
        ("[1, 2]", None, "object"),
        ('{"id": "a", "coherence": 4', None, ""),
    ],
)
def test_bad_human_file_names_file_line_field(
    tmp_path: Path, line: str, field: str | None, needle: str
) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text('{"id": "x", "coherence": 2}\n' + line + "\n")
    with pytest.raises(DataError) as info:
        read_human_scores(path)
    error = info.value
    assert error.path == str(path) and error.line == 2
    assert error.field == field
    assert needle in str(error)


def test_missing_human_file(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError):
        read_human_scores(tmp_path / "nope.jsonl")
