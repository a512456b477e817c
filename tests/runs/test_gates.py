"""CI gates on real ``metrics.json`` files: the KaLMA score of the packaged demo answers (scored
here), and the CONNER score of the regression fixture; names, headlines, unmeasured metrics."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma import KalmaScoreConfig, score_answers
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
        DEMO / "answers.jsonl",
        out,
        KalmaScoreConfig(),
        gold_path=DEMO / "gold.jsonl",
        data_dir=data_dir,
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


# Thresholds checked before any work: given the task, a name without a dot must be one of the
# short names its metrics.json can hold, and a fraction's threshold is at most 1 (100%).


def test_a_fraction_above_one_is_refused_unless_written_as_a_percentage() -> None:
    with pytest.raises(ConfigError) as error:
        parse_thresholds("precision=60", task="kalma.score")
    assert str(error.value) == (
        "--fail-under precision=60: precision is a fraction from 0 to 1, so 60 can never be "
        "reached; for 60 percent write precision=60%"
    )
    assert parse_thresholds("precision=60%", task="kalma.score") == {"precision": 0.6}
    assert parse_thresholds("precision=1,alignment=100%", task="kalma.score") == {
        "precision": 1.0,
        "alignment": 1.0,
    }
    for fraction, task in [
        ("precision.macro=60", "kalma.score"),  # a headline's other figure
        ("retrieval.f1=80", "kalma.run"),
        ("micro_f1=1.01", "caqa.judge"),
        ("supportive.f1=70", "caqa.judge"),  # a per-label figure, by its dotted path
        ("metrics.factuality.mean=5", "conner.score"),
        ("precision=150%", "kalma.score"),  # a percentage above 100% can never be reached
    ]:
        with pytest.raises(ConfigError, match="is a fraction"):
            parse_thresholds(fraction, task=task)
    # counts and figures that may exceed 1 take any non-negative number
    assert parse_thresholds("n_answers=100", task="kalma.score") == {"n_answers": 100.0}
    assert parse_thresholds("mean_words=40", task="conner.generate") == {"mean_words": 40.0}
    assert parse_thresholds("coherence_para=3", task="conner.score") == {"coherence_para": 3.0}
    assert parse_thresholds("per_label.supportive.support=4", task="caqa.judge")


def test_negative_and_non_numeric_thresholds_are_refused() -> None:
    for bad, says in [
        ("precision=-0.1", "--fail-under precision=-0.1: a threshold cannot be negative"),
        ("n_answers=-1", "--fail-under n_answers=-1: a threshold cannot be negative"),
        ("precision=inf", "--fail-under precision=inf: 'inf' is not a number"),
        ("precision=high", "--fail-under precision=high: 'high' is not a number"),
        ("precision=%", "--fail-under precision=%: '%' is not a number"),
    ]:
        for task in ("kalma.score", None):
            with pytest.raises(ConfigError) as error:
                parse_thresholds(bad, task=task)
            assert str(error.value).startswith(says)


def test_a_name_the_task_cannot_produce_is_refused_with_the_nearest_one() -> None:
    with pytest.raises(ConfigError) as error:
        parse_thresholds("alignment=0.8,precison=0.5", task="kalma.score")
    message = str(error.value)
    assert message.startswith(
        "--fail-under precison=0.5: a kalma.score run has no metric 'precison'; did you mean "
        "precision? (its metrics: correctness, precision, recall, f1, alignment, na_precision, "
        "na_recall, n_answers, "
    )
    with pytest.raises(ConfigError, match=r"did you mean factuality\?"):
        parse_thresholds("factualty=0.5", task="conner.score")
    with pytest.raises(ConfigError, match=r"did you mean micro_f1\?"):
        parse_thresholds("micro_f=0.5", task="caqa.judge")
    # another task's metric is not this one's
    with pytest.raises(ConfigError, match=r"a conner\.generate run has no metric 'factuality'"):
        parse_thresholds("factuality=0.5", task="conner.generate")
    with pytest.raises(ConfigError) as far:
        parse_thresholds("bogus=0.5", task="kalma.score")
    assert "did you mean" not in str(far.value)
    # malformed dotted names are refused for any task
    for bad in ("precision..macro=0.5", ".precision=0.5", "precision.=0.5"):
        with pytest.raises(ConfigError, match="is not a metric name"):
            parse_thresholds(bad, task=None)


def test_dotted_paths_wait_for_the_metrics_which_suggest_the_nearest_path(
    kalma: dict[str, Any],
) -> None:
    # a dotted path may name any figure of metrics.json: it is resolved once there are metrics
    assert parse_thresholds("precison.macro=0.5", task="kalma.score") == {"precison.macro": 0.5}
    with pytest.raises(ConfigError) as error:
        check_gates(kalma, {"precison.macro": 0.5})
    assert str(error.value).startswith("no metric 'precison.macro' in metrics.json; available:")
    assert str(error.value).endswith("; did you mean precision.macro?")
    # without a task nothing but the form is known before the run
    assert parse_thresholds("precison=60", task=None) == {"precison": 60.0}
    assert parse_thresholds("precison=60", task="some.task") == {"precison": 60.0}


def _declared() -> dict[str, Any]:
    """The gate names each of the papers' tasks declares (tests register tasks of their own)."""
    from citegraph.runs import registered_tasks, task_type

    papers = [t for t in registered_tasks() if t.split(".")[0] in ("kalma", "caqa", "conner")]
    return {t: task_type(t).gate_metrics for t in papers}


def test_every_task_has_its_short_names() -> None:
    from citegraph.conner import METRICS as CONNER_METRICS
    from citegraph.kalma.score import METRICS as KALMA_METRICS

    declared = _declared()
    assert None not in declared.values(), declared
    for task in ("kalma.score", "kalma.run"):
        assert declared[task].fractions == KALMA_METRICS
    conner = declared["conner.score"]
    assert set(conner.fractions) | {"coherence_para"} == set(CONNER_METRICS)


def test_the_short_names_cover_the_metrics_of_real_runs(kalma: dict[str, Any]) -> None:
    """Every short name the runs of the regression cases (and the demo's score) offer is one
    their task's gates accept before the run: none is refused that would have passed."""
    declared = _declared()
    runs = [("kalma.score", kalma)]
    for path in sorted(FIXTURES.glob("*.json")):
        for step in json.loads(path.read_text())["steps"]:
            metrics = step["output"].get("content", {}).get("metrics.json")
            task = ".".join(step.get("argv", [])[:2])
            if isinstance(metrics, dict) and task in declared:
                runs.append((task, metrics))
    assert {task for task, _ in runs} == set(declared)
    for task, metrics in runs:
        # conner score's split is the WoW split it read (null for NQ), not a measure
        offered = set(available_metrics(metrics)) - {"split"}
        assert offered <= set(declared[task].names), task
