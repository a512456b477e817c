"""A citation is judged on the entity it names (issue 36, defect 1), over a KG of our own with a
``#`` namespace (``@prefix geo: <https://data.example.net/geo#>``).

Every answer is about Warsaw (its graph is given by ``entities``, so NER plays no part) and
writes the same fact, ``located on river: Vistula``, which the KG holds for Warsaw only. What the
bracket names as its subject decides the verdict, by hand (paper mode):

w-curie    [geo:Warsaw, ...]                       Warsaw's fact, in its graph      -> correct
b-curie    [geo:Berlin, ...]                       Berlin, which has no such fact   -> wrong
u-curie    [geo:Warszawa, ...]  (no such entity)   an id not in the KG              -> wrong
u-name     [Warszawa, ...]      (no such name)     an entity outside the graphs     -> wrong
b-label    [Berlin, ...]        (Berlin's label)   Berlin, found over the whole KG  -> wrong
b-iri      [https://data.example.net/geo#Berlin, ...]                               -> wrong
w-label    [Warsaw, ...]        (the centre's label)                                -> correct
facts      [located on river: Vistula]  (no subject written: the graph that holds it) -> correct

Before the fix, b-curie and u-curie were each read as two citations of Warsaw (a phantom
``(Warsaw, geo, Berlin)`` and the river fact, credited), and u-name and b-label were moved to
Warsaw and credited: correctness 7/10 instead of 3/8.

Gold is Warsaw's river fact for every answer, so correctness = precision = recall = 3/8 micro
(3 correct citations of 8, 3 gold facts hit of 8) and macro (3 answers of 8 score 1, the rest 0).
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

from click.testing import CliRunner
from test_score_own_kg import _cache, _write  # noqa: F401 (_cache: autouse fixture)

from _kg_helpers import GEO
from _kg_helpers import GEO_KG as KG
from citegraph.cli import main

FACT = "located on river: Vistula"
#: id -> (the bracket's subject as written, the subject it is judged on, correct)
CASES = {
    "w-curie": ("geo:Warsaw, ", f"{GEO}Warsaw", True),
    "b-curie": ("geo:Berlin, ", f"{GEO}Berlin", False),
    "u-curie": ("geo:Warszawa, ", f"{GEO}Warszawa", False),
    "u-name": ("Warszawa, ", "Warszawa", False),
    "b-label": ("Berlin, ", f"{GEO}Berlin", False),
    "b-iri": (f"{GEO}Berlin, ", f"{GEO}Berlin", False),
    "w-label": ("Warsaw, ", f"{GEO}Warsaw", True),
    "facts": ("", f"{GEO}Warsaw", True),
}


def _score(tmp_path: Path, mode: str = "paper") -> Path:
    kg = tmp_path / "geo.ttl"
    kg.write_text(KG, encoding="utf-8")
    answers = _write(
        tmp_path / "answers.jsonl",
        [
            {
                "id": key,
                "question": "Which river flows through Warsaw?",
                "entities": ["geo:Warsaw"],
                "answer": f"Warsaw lies on the Vistula [{subject}{FACT}].",
            }
            for key, (subject, _, _) in CASES.items()
        ],
    )
    gold = _write(
        tmp_path / "gold.jsonl",
        [
            {"id": key, "knowledge": [["geo:Warsaw", "located on river", "Vistula"]]}
            for key in CASES
        ],
    )
    out = tmp_path / f"run-{mode}"
    result = CliRunner().invoke(
        main,
        [
            *("kalma", "score", str(answers), "--kg", str(kg), "--gold", str(gold)),
            *("--mode", mode, "--out", str(out)),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_each_citation_is_judged_on_the_entity_its_bracket_names(tmp_path: Path) -> None:
    out = _score(tmp_path)
    records = {
        r["id"]: r
        for r in map(json.loads, (out / "samples.jsonl").read_text(encoding="utf-8").splitlines())
    }
    for key, (_, subject, correct) in CASES.items():
        verdicts = records[key]["citations"]["verdicts"]
        assert len(verdicts) == 1, (key, verdicts)  # no phantom "(Warsaw, geo, Berlin)"
        triple = verdicts[0]["triple"]
        assert (triple["subject"], triple["relation"], triple["value"]) == (
            subject,
            "located on river",
            "Vistula",
        ), key
        assert verdicts[0]["correct"] is correct, key
        assert verdicts[0]["precise"] is correct, key  # gold is Warsaw's fact


def test_scores_match_the_hand_computation(tmp_path: Path) -> None:
    metrics = json.loads((_score(tmp_path) / "metrics.json").read_text(encoding="utf-8"))
    for name in ("correctness", "precision", "recall"):
        value = metrics[name]
        assert F(value["micro"]).limit_denominator(100) == F(3, 8), name
        assert F(value["macro"]).limit_denominator(100) == F(3, 8), name
    validity = metrics["citation_validity"]
    # 8 KG citations: 5 outside Warsaw's graph (the retrieved set is the answers' "entities");
    # geo:Warszawa and "Warszawa" are no entity of the KG (the label "Berlin" names geo:Berlin)
    assert validity["kg_citations"] == 8 and validity["not_in_kg_checked"] == 8
    assert validity["outside_retrieved"] == 5
    assert validity["not_in_kg"] == 2
