"""The viewer and the report in a real headless browser: Debian's Chromium driven by Selenium
(``make test`` installs ``chromium`` and ``chromium-driver`` when it runs as root with apt-get;
elsewhere these tests skip and say so).

Screenshots of the KaLMA sample page, the CAQA run page and the report are written to
``test-artifacts/`` (or ``$CITEGRAPH_TEST_ARTIFACTS``) for a person to look at.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.viewer.conftest import INJECTED

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="no chromium/chromedriver (Debian packages chromium, chromium-driver; `make test` "
    "installs them when run as root with apt-get)",
)
ARTIFACTS = Path(os.environ.get("CITEGRAPH_TEST_ARTIFACTS", "test-artifacts"))
# The stylesheet's colours (viewer.css :root): background of a citation found in the KG, of
# one not in the KG, and of an [NA] marker.
GREEN, RED, YELLOW = "rgba(218, 251, 225, 1)", "rgba(255, 235, 233, 1)", "rgba(255, 248, 197, 1)"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1300,1600",
                 "--allow-file-access-from-files"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _by_css(driver, selector: str):  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def _shot(driver, name: str) -> Path:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    driver.set_window_size(1300, max(900, driver.execute_script(
        "return document.body.scrollHeight") + 40))  # fmt: skip
    driver.save_screenshot(str(path))
    return path


def test_citations_are_coloured_by_verdict_with_their_triple(browser, viewer_url: str) -> None:
    browser.get(viewer_url + "/sample?run=0/scored&id=specific-0")
    correct = _by_css(browser, ".seg.mark-correct[data-tip]")
    assert correct, "no citation marked as found in the KG"
    assert correct[0].value_of_css_property("background-color") == GREEN
    na = _by_css(browser, ".seg.mark-na")
    assert na and na[0].value_of_css_property("background-color") == YELLOW
    tip = _by_css(browser, "#tip")[0]
    assert not tip.is_displayed()
    correct[0].click()
    assert tip.is_displayed()
    assert tip.text == correct[0].get_attribute("data-tip")
    assert "place of birth" in tip.text  # the first citation: [Q206534, place of birth: Newark,
    _shot(browser, "kalma-sample.png")


def test_wrong_citations_are_red(browser, viewer_url: str) -> None:
    browser.get(viewer_url + "/run?run=0/scored&tag=verdict:wrong")
    links = _by_css(browser, "a.sample-link")
    assert links, "the demo answers hold 2 citations not in the KG"
    links[0].click()
    wrong = _by_css(browser, ".seg.mark-wrong")
    assert wrong and wrong[0].value_of_css_property("background-color") == RED


def test_injected_script_does_not_run(browser, viewer_url: str) -> None:
    browser.get(viewer_url + "/sample?run=0/scored&id=specific-1")
    assert "pwned" not in browser.title
    assert browser.execute_script("return window.__pwned === undefined")
    assert INJECTED in _by_css(browser, "body")[0].text


def test_the_tag_filter_narrows_the_list(browser, viewer_url: str) -> None:
    from selenium.webdriver.support.ui import Select

    browser.get(viewer_url + "/run?run=0/scored")
    assert _by_css(browser, "#count")[0].text.startswith("4 of 4 samples")
    Select(_by_css(browser, "#tag-filter")[0]).select_by_value("unmeasured")  # submits
    count = _by_css(browser, "#count")[0]
    shown = len(_by_css(browser, "a.sample-link"))
    assert re.match(rf"{shown} of 4 samples", count.text) and 0 < shown < 4
    assert "tag=unmeasured" in browser.current_url


def test_confusion_matrix_cells_filter_the_samples(browser, viewer_url: str) -> None:
    browser.get(viewer_url + "/run?run=0/judged")
    cells = [c for c in _by_css(browser, "a.cell-link") if c.text.strip() not in ("", "0")]
    assert cells, "the CAQA run page has no clickable confusion-matrix cell"
    expected = int(cells[0].text)
    _shot(browser, "caqa-run.png")
    cells[0].click()
    assert "tag=cell" in browser.current_url
    assert len(_by_css(browser, "a.sample-link")) == expected


def test_traversal_is_a_404_page(browser, viewer_url: str) -> None:
    browser.get(viewer_url + "/run?run=0/../..")
    assert "no such run" in _by_css(browser, "body")[0].text


def test_the_report_opens_from_disk(browser, runs_root: Path) -> None:
    from citegraph.viewer import write_report

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = write_report([runs_root / "scored", runs_root / "judged"],
                          ARTIFACTS / "report.html")  # fmt: skip
    browser.get(report.resolve().as_uri())
    assert "citegraph report" in browser.title
    assert browser.execute_script("return window.__pwned === undefined")
    assert _by_css(browser, "figure.chart svg"), "the report has no figure"
    correct = _by_css(browser, ".seg.mark-correct")
    assert correct and correct[0].value_of_css_property("background-color") == GREEN
    _shot(browser, "report.png")


def test_the_run_table_fits_a_900px_window(browser, viewer_url: str) -> None:
    """Issue 26: at 900 px the run table made the whole page scroll sideways; now the table
    scrolls inside its own box and the page keeps the window's width."""
    browser.set_window_size(900, 900)
    try:
        browser.get(viewer_url + "/")
        page = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert page[0] <= page[1], f"the page is {page[0]} px wide in a {page[1]} px window"
        box = _by_css(browser, "div.scroll")[0]
        assert _by_css(box, "table.runs"), "the run table is not in its scroll box"
    finally:
        browser.set_window_size(1300, 1600)


def test_compare_charts_show_under_the_content_security_policy(browser, viewer_url: str) -> None:
    """Issue 27: the viewer sends a CSP that allows no inline style, so its charts (matplotlib
    styles an SVG inline) are ``data:`` images; they load, and the stylesheet still applies."""
    browser.get(viewer_url + "/compare?run=0/judged")
    charts = _by_css(browser, "figure.chart img")
    assert charts, "the compare page has no chart"
    assert browser.execute_script(
        "return Array.from(document.querySelectorAll('figure.chart img'))"
        ".every(i => i.complete && i.naturalWidth > 0)"
    ), "a chart image did not load"
    link = _by_css(browser, "header.top a.brand")[0]
    assert link.value_of_css_property("font-weight") in ("700", "bold", "600")
    _shot(browser, "compare.png")
