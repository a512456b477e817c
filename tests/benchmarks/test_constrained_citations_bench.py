"""``benchmarks/constrained_citations.py``: the mock's noisy script and a 2-question mock run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from citegraph.datasets import load_biokalma
from citegraph.kalma import parse_answer

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "constrained_citations.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("constrained_citations_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_noisy_script_has_the_advertised_mix(bench: ModuleType, data_dir: Path) -> None:
    sample = list(load_biokalma("specific", data_dir))[9]  # Scott Robinson and Jason Donovan
    answer = bench.noisy_answer(sample, seed=0)
    assert answer.kinds == (
        "unknown-qid",
        "bare-qid",
        "na",
        "uncited",
        "real",
        "real",
        "wrong-value",
        "unclosed",
    )
    assert answer.text.startswith("Its occupation is singer [Q803848542, occupation: singer]. ")
    assert "[Q100917380]." in answer.text  # the bare QID
    assert answer.text.endswith("[Q100917380, alma mater:")  # unclosed, last
    parsed = parse_answer(answer.text, sample.graphs)
    cited = [(t.subject, t.relation, t.value) for c in parsed.kg_citations if (t := c.triple)]
    assert cited == [
        ("Q803848542", "occupation", "singer"),  # no such entity
        ("Q287817", "sex or gender", "male"),
        ("Q100917380", "sex or gender", "male"),
        ("Q100917380", "member of sports team", "Category:Jason Donovan"),  # wrong value
    ]
    in_graph = {(t.subject, t.relation, t.value) for g in sample.graphs for t in g.triples}
    assert [c in in_graph for c in cited] == [False, True, True, False]
    assert len(parsed.issues) == 2  # the bare QID and the unclosed bracket
    assert sum(s.has_na for s in parsed.sentences) == 1
    assert bench.noisy_answer(sample, seed=0) == answer  # seeded
    assert bench.noisy_answer(sample, seed=1) != answer


@pytest.mark.needs("llguidance")
def test_mock_only_run_prints_the_table(
    bench: ModuleType,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["constrained_citations.py", "--data-dir", str(data_dir), "--questions", "2"]
    monkeypatch.setattr(sys, "argv", [*argv, "--batch", "1", "--no-local"])
    bench.main()
    rows = {
        line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| mock")
    }
    # specific-0: 4 real + 1 unknown QID cited, [1] and an unclosed bracket, one [NA];
    # specific-1: 2 real, one [NA]. 7 citations, 6 in the KG, 2 malformed.
    n, cited, per_answer, correct, _, _, _, na, malformed, speed = rows["mock free"][:10]
    assert (n, cited, per_answer, correct, na, malformed, speed) == (
        "2",
        "2",
        "3.50",
        "85.7",
        "2",
        "2",
        "-",
    )
    constrained = rows["mock constrained"]
    assert constrained[3] == "100.0"  # every citation names a retrieved triple
    assert constrained[8] == "0"  # no malformed bracket
