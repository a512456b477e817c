"""Every micro and macro figure of a ``kalma score`` run's metrics.json, recomputed with pandas
from the ``runs export`` Parquet alone (the per-sample counts and ``unmeasured_<metric>``
columns), equals metrics.json; the counts are those of the hand calculation in
test_kalma_score.py (the bundled demo answers, paper mode):

    id          n_citations n_correct n_precise n_gold n_gold_hit n_aligned/pairs  [NA] P    R
    specific-0       9          9         3        5        3          9/9          0/1    0/1
    specific-1       6          5         3        4        3          6/6          1/1    1/1
    specific-3       0          0         0        2        0          0/0          -      -
    specific-6       7          6         2        3        2          6/7          -      -

specific-3 and specific-6 have no absent set, so their [NA] metrics are unmeasured.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.runs import export_run

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))

#: metric -> (numerator column, denominator column)
RATIOS = {
    "correctness": ("n_correct", "n_citations"),
    "precision": ("n_precise", "n_citations"),
    "recall": ("n_gold_hit", "n_gold"),
    "alignment": ("n_aligned", "n_alignment_pairs"),
    "na_precision": ("na_precision_num", "na_precision_den"),
    "na_recall": ("na_recall_num", "na_recall_den"),
}


def _ratio(samples: Any, metric: str) -> tuple[float | None, float | None]:
    """Micro (sum / sum) and macro (mean of per-sample ratios with a non-zero denominator) over
    the samples where ``metric`` is measured."""
    num, den = RATIOS[metric]
    measured = samples[samples[f"unmeasured_{metric}"].isna() & samples[den].notna()]
    total = measured[den].sum()
    micro = measured[num].sum() / total if total else None
    nonzero = measured[measured[den] > 0]
    macro = (nonzero[num] / nonzero[den]).mean() if len(nonzero) else None
    return micro, macro


def _f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return 2 * p * r / (p + r) if p + r else 0.0


def _recomputed(samples: Any) -> dict[str, dict[str, float | None]]:
    out = {m: dict(zip(("micro", "macro"), _ratio(samples, m), strict=True)) for m in RATIOS}
    out["f1"] = {
        kind: _f1(out["precision"][kind], out["recall"][kind]) for kind in ("micro", "macro")
    }
    return out


def _export(tmp_path: Path, data_dir: Path, config: KalmaScoreConfig, gold: bool = True) -> Any:
    run = tmp_path / "run"
    gold_path = DEMO / "gold.jsonl" if gold else None
    score_answers(DEMO / "answers.jsonl", run, config, gold_path=gold_path, data_dir=data_dir)
    files = export_run(run, tmp_path / "out", "parquet")
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    return pd.read_parquet(files["samples"]), metrics


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_every_figure_is_recomputed_from_the_export(
    tmp_path: Path, data_dir: Path, mode: str
) -> None:
    samples, metrics = _export(tmp_path, data_dir, KalmaScoreConfig(mode=mode))
    recomputed = _recomputed(samples)
    for metric, value in recomputed.items():
        for kind in ("micro", "macro"):
            expected = metrics[metric][kind]
            if expected is None:
                assert value[kind] is None, (metric, kind)
            else:
                assert value[kind] == pytest.approx(expected), (metric, kind)
    assert samples["n_citations"].sum() == metrics["n_citations"] == 22
    assert samples["n_na_markers"].sum() == metrics["n_na_markers"]


def test_the_counts_are_the_hand_computed_ones(tmp_path: Path, data_dir: Path) -> None:
    samples, _ = _export(tmp_path, data_dir, KalmaScoreConfig())
    rows = samples.set_index("id")
    assert list(rows.index) == ["specific-0", "specific-1", "specific-3", "specific-6"]
    assert list(rows["n_citations"]) == [9, 6, 0, 7]
    assert list(rows["n_correct"]) == [9, 5, 0, 6]
    assert list(rows["n_precise"]) == [3, 3, 0, 2]
    assert list(rows["n_gold"]) == [5, 4, 2, 3]
    assert list(rows["n_gold_hit"]) == [3, 3, 0, 2]
    assert list(rows["n_aligned"]) == [9, 6, 0, 6]
    assert list(rows["n_alignment_pairs"]) == [9, 6, 0, 7]
    assert list(rows.loc[["specific-0", "specific-1"], "na_precision_num"]) == [0, 1]
    assert list(rows.loc[["specific-0", "specific-1"], "na_recall_den"]) == [1, 1]
    assert rows.loc["specific-3", "unmeasured_na_recall"] is not None
    assert str(samples["n_citations"].dtype) == "int64"
    # run-level columns, from run.json
    assert set(samples["task"]) == {"kalma.score"}
    assert set(samples["mode"]) == {"paper"}
    assert set(samples["nli_model"]) == {"lexical"}
    assert set(samples["seed"]) == {0}
    # kalma score generates nothing: its generation columns are there, and null
    assert samples["latency_s"].isna().all() and samples["finish_reason"].isna().all()


def test_without_gold_precision_and_recall_stay_unmeasured(tmp_path: Path, data_dir: Path) -> None:
    samples, metrics = _export(tmp_path, data_dir, KalmaScoreConfig(), gold=False)
    assert set(samples["unmeasured_precision"]) == {"no gold minimum knowledge set"}
    recomputed = _recomputed(samples)
    assert recomputed["precision"] == {"micro": None, "macro": None} == metrics["precision"]
    assert recomputed["correctness"]["micro"] == pytest.approx(metrics["correctness"]["micro"])


DOCS = Path(__file__).resolve().parents[3] / "docs" / "export.md"


def test_the_docs_pandas_query_gives_the_precision_of_metrics_json(
    tmp_path: Path, data_dir: Path
) -> None:
    """docs/export.md's pandas block (the same query as its DuckDB one), run as written on an
    exported run: precision micro 8/22 and macro mean(3/9, 3/6, 2/7) (test_kalma_score.py)."""
    text = DOCS.read_text(encoding="utf-8")
    after = text.split("The same in pandas", 1)[1]
    block = after.split("```python\n", 1)[1].split("```", 1)[0]
    _, metrics = _export(tmp_path, data_dir, KalmaScoreConfig())
    code = block.replace(
        "runs/na1/export/samples.parquet", str(tmp_path / "out" / "samples.parquet")
    )
    scope: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), scope)
    assert scope["precision_micro"] == pytest.approx(8 / 22) == metrics["precision"]["micro"]
    macro = (3 / 9 + 3 / 6 + 2 / 7) / 3
    assert scope["precision_macro"] == pytest.approx(macro) == metrics["precision"]["macro"]


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_citation_validity_is_recomputed_from_the_export(
    tmp_path: Path, data_dir: Path, mode: str
) -> None:
    samples, metrics = _export(tmp_path, data_dir, KalmaScoreConfig(mode=mode))
    block = metrics["citation_validity"]
    rows = samples[samples["n_brackets"].notna()]
    assert rows["n_brackets"].sum() == block["brackets"]
    malformed = rows["n_malformed_brackets"].sum() / rows["n_brackets"].sum()
    assert malformed == pytest.approx(block["malformed_rate"])
    outside = rows["n_outside_retrieved"].sum() / rows["n_citations"].sum()
    assert outside == pytest.approx(block["outside_retrieved_rate"])
    checked = rows[rows["unmeasured_not_in_kg"].isna()]
    assert checked["n_not_in_kg"].sum() / checked["n_citations"].sum() == pytest.approx(
        block["not_in_kg_rate"]
    )
    cited = rows["n_citations"].sum() + rows["n_na_markers"].sum()
    assert cited / rows["n_sentences"].sum() == pytest.approx(block["citations_per_sentence"])
    cited_sentences = rows["n_sentences_cited"].sum() / rows["n_sentences"].sum()
    assert cited_sentences == pytest.approx(block["sentences_cited_rate"])
    if mode == "paper":  # the hand counts of test_citation_validity.py
        assert list(samples.set_index("id")["n_not_in_kg"]) == [0, 0, 0, 1]
        assert list(samples.set_index("id")["n_malformed_brackets"]) == [0, 0, 1, 0]
