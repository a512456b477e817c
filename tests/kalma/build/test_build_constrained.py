"""``kalma build --citations constrained``: annotation and extension replies cite only facts of
the item's knowledge pool, through the same grammar as ``kalma run``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_kalma_build import LABELLED, NO_CACHE, QUESTION, fake_perplexity, kg_dir, pairs_csv

from citegraph.kalma.build._task import KalmaBuildConfig, build_benchmark
from citegraph.kalma.parse import parse_answer
from citegraph.kg import Subgraph, load_biokalma_kg
from citegraph.models import ChatRequest, MockChat

__all__ = ["kg_dir", "pairs_csv"]  # fixtures, imported for pytest

# Round 1 labels "Rome" with a value the pool does not hold; every extension cites a made-up
# fact of an entity outside the pool beside the injected one.
WRONG_LABEL = LABELLED.replace("place of birth: Rome", "place of birth: Naples")


def noisy_script(request: ChatRequest) -> str:
    system, user = request.messages[0].content, request.messages[-1].content
    if system.startswith("Your objective is to select relevant knowledge"):
        return "Generated Answer: " + WRONG_LABEL
    if system.startswith("Your objective is to extend"):
        paragraph = user.split("\n")[0].removeprefix("answer: ")
        m = re.search(r"knowledge: \{qid: (Q\d+), name: ([^,]+), ([^:]+): (.*)\}$", user)
        assert m, user
        qid, name, relation, value = m.groups()
        return (
            f"{paragraph} {name} had {relation} {value} [qid: {qid}, {relation}: {value}] "
            f"[Q99, spouse: Nobody]."
        )
    return QUESTION


def _pool(kg_dir: Path) -> list[Subgraph]:
    data = json.loads((kg_dir / "biokalma" / "complex_question_graph.json").read_text())
    return [Subgraph.from_entity_dict(e) for e in data[0][1]]


def _build(out: Path, kg_dir: Path, pairs: Path, tmp_path: Path, citations: str) -> dict:
    kg = load_biokalma_kg(kg_dir, cache_dir=tmp_path / "kgcache")
    config = KalmaBuildConfig(pairs=str(pairs), rounds=3, alpha=0.5, citations=citations)
    build_benchmark(
        out,
        config,
        kg=kg,
        model=MockChat(noisy_script),
        perplexity=fake_perplexity,
        runtime=NO_CACHE,
    )
    [item] = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    return item


@pytest.mark.needs("llguidance")
def test_constrained_build_cites_only_pool_facts(kg_dir, pairs_csv, tmp_path) -> None:
    pool = _pool(kg_dir)
    held = {t.key for g in pool for t in g.triples}

    def cited(paragraph: str) -> list[tuple[str, str, str]]:
        parsed = parse_answer(paragraph, pool)
        assert not parsed.issues, parsed.issues
        return [c.triple.key for c in parsed.kg_citations if c.triple is not None]

    free = _build(tmp_path / "free", kg_dir, pairs_csv, tmp_path, "free")
    outside = [k for r in free["rounds"] for k in cited(r["paragraph"]) if k not in held]
    assert ("Q99", "spouse", "Nobody") in outside  # the script does cite outside the pool
    assert free["round1_knowledge"] == []  # "Naples" is no pool fact: round 1 labelled nothing

    item = _build(tmp_path / "constrained", kg_dir, pairs_csv, tmp_path, "constrained")
    for r in item["rounds"]:
        keys = cited(r["paragraph"])
        assert keys and all(k in held for k in keys), (r["paragraph"], keys)
    # the grammar kept the label's prefix "place of birth: " and closed it on the pool's value
    assert item["round1_knowledge"] == [["Q212657", "place of birth", "Rome"]]
    run = json.loads((tmp_path / "constrained" / "run.json").read_text())
    assert run["config"]["citations"] == "constrained"
    assert "citations" not in json.loads((tmp_path / "free" / "run.json").read_text())["config"]
