"""What ``runs compare`` shows of KaLMA runs comes from KaLMA's presenter."""

from __future__ import annotations

from citegraph.kalma.view import KalmaPresenter

JUDGED = {
    "precision": {"micro": 0.5, "macro": 0.25},
    "config": {"split": "general"},
    "setup": {"model": "gpt-4"},
    "experiment": {"remove_knowledge": 2, "retrieval_accuracy_requested": 60},
    "text_quality": {"fluency": {"mean": 4.5}},
}
PLAIN = {"precision": {"micro": None}, "config": {"split": "specific"}}


def test_compare_figures_give_percent_cells_and_the_judged_means() -> None:
    figures = KalmaPresenter.compare_figures([JUDGED, PLAIN], "macro")
    assert figures.values["precision"] == [0.25, None]
    assert figures.cells["precision"] == ["25.0", "-"]
    assert figures.values["fluency"] == [4.5, None]
    assert figures.cells["fluency"] == ["4.50", "-"]
    assert "coherence" not in figures.values  # no run was judged on it
    assert figures.title == "macro metrics (%); text quality 1-5"
    assert figures.extra == [{"setting": "general gpt-4 -2 facts ret 60%"}, {"setting": "specific"}]


def test_compare_figures_without_judge_leave_text_quality_out() -> None:
    figures = KalmaPresenter.compare_figures([PLAIN], "micro")
    assert figures.title == "micro metrics (%)"
    assert list(figures.values)[:2] == ["alignment", "correctness"]


def test_compare_settings_add_what_metrics_record_where_the_config_lacks_it() -> None:
    settings = KalmaPresenter.compare_settings({"split": "given", "model_name": "m"}, JUDGED)
    assert settings == {
        "split": "given",  # the config's own value wins
        "model_name": "m",  # and no second "model" beside it
        "remove_knowledge": 2,
        "retrieval_accuracy": 60,
    }
