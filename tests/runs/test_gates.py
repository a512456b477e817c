"""CI gates on real ``metrics.json`` files: the KaLMA score of the packaged demo answers (scored
here), and the CONNER score of the regression fixture; names, headlines, unmeasured metrics."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma import ScoreConfig, score_answers
from citegraph.runs import (
    available_metrics,
    check_gates,
    failure_kind,
    parse_thresholds,
    resolve_metric,
)

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))
FIXTURES = Path(__file__).resolve().parents[1] / "regression" / "fixtures"


@pytest.fixture(scope="module")
def kalma(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Any]:
    """The demo's 4 answers, 22 citations: 20 in the KG (correctness 20/22), 8 in the gold
    minimum knowledge sets (precision 8/22; recall 8/14 gold facts), 21 entailed (alignment
    21/22)."""
    out = tmp_path_factory.mktemp("score")
    result = score_answers(
        DEMO / "answers.jsonl", out, ScoreConfig(), gold_path=DEMO / "gold.jsonl", data_dir=data_dir
    )
    return result.metrics


@pytest.fixture(scope="module")
def conner() -> dict[str, Any]:
    case = json.loads((FIXTURES / "conner_score_gold_reference.json").read_text())
    (metrics,) = [
        s["output"]["content"]["metrics.json"]
        for s in case["steps"]
        if "metrics.json" in s["output"].get("content", {})
    ][:1]
    return metrics


def test_parse_thresholds() -> None:
    assert parse_thresholds("precision=0.6, alignment=80%") == {
        "precision": 0.6,
        "alignment": 0.8,
    }
    assert parse_thresholds(["a=1", "b.c=0.5"]) == {"a": 1.0, "b.c": 0.5}
    for bad in ("precision", "=0.5", "precision=high", "a=1,a=2", "a=nan"):
        with pytest.raises(ConfigError):
            parse_thresholds(bad)


def test_short_names_take_the_headline_and_dotted_paths_the_figure(kalma: dict[str, Any]) -> None:
    assert resolve_metric(kalma, "precision") == ("precision.micro", 8 / 22, False)
    assert resolve_metric(kalma, "alignment.macro")[0] == "alignment.macro"
    assert resolve_metric(kalma, "n_citations") == ("n_citations", 22.0, False)
    # the full path into details reaches the counts too
    assert resolve_metric(kalma, "details.recall.denominator")[1] == 14.0


def test_gates_pass_and_fall_short(kalma: dict[str, Any]) -> None:
    checks = check_gates(kalma, {"precision": 0.6, "alignment": 0.8, "recall": 8 / 14})
    assert [(c.path, c.passed) for c in checks] == [
        ("precision.micro", False),  # 8/22 = 0.364 < 0.6
        ("alignment.micro", True),  # 21/22 = 0.955 >= 0.8
        ("recall.micro", True),  # 8/14 >= 8/14: at the threshold passes
    ]
    assert checks[0].describe() == "precision (precision.micro) = 0.3636 < 0.6"


def test_an_unknown_metric_lists_the_available_ones(kalma: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as error:
        check_gates(kalma, {"precission": 0.5})
    assert "no metric 'precission'" in str(error.value)
    assert "available: correctness, precision, recall, f1, alignment" in str(error.value)
    assert "config" not in available_metrics(kalma)


def test_conner_names_and_unmeasured_metrics(conner: dict[str, Any]) -> None:
    # factuality: mean 1.0 over 2 samples; validity: no answer model, both samples unmeasured
    assert resolve_metric(conner, "factuality") == ("metrics.factuality.mean", 1.0, False)
    assert resolve_metric(conner, "validity") == ("metrics.validity.mean", None, True)
    failed, allowed = (
        check_gates(conner, {"validity": 0.5}, allow_unmeasured=allow)[0] for allow in (False, True)
    )
    assert (failed.passed, allowed.passed) == (False, True)
    assert "validity (metrics.validity.mean) is unmeasured" in failed.describe()
    with pytest.raises(ConfigError, match="ambiguous"):  # under factuality and validity
        resolve_metric(conner, "factual_consistent")
    with pytest.raises(ConfigError, match="group of figures"):
        resolve_metric(conner, "factuality.labels")


def test_every_sample_unmeasured_counts_as_unmeasured() -> None:
    metrics = {"score": {"mean": 0.0, "n": 3, "n_unmeasured": 3}, "nan": float("nan")}
    assert resolve_metric(metrics, "score")[2] is True
    assert resolve_metric(metrics, "nan") == ("nan", None, True)


def test_list_entries_are_named_by_their_label() -> None:
    metrics = {"per_label": [{"label": "supportive", "f1": 0.75}, {"label": "irrelevant"}]}
    assert resolve_metric(metrics, "supportive.f1") == ("per_label.supportive.f1", 0.75, False)


def test_failure_kind_reads_the_error_type_in_the_record() -> None:
    assert failure_kind("EndpointUnavailable: http://x unreachable") == "model"
    assert failure_kind("answer model: ClientError: 400") == "model"
    assert failure_kind("DataError: answers.jsonl:3, field 'answer': not a string") == "input"
    assert failure_kind("no candidate: ConfigError: bad spec") == "input"
    assert failure_kind(None) == "model"
