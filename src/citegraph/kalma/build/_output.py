"""What ``kalma build`` writes: a dataset directory citegraph reads like BioKaLMA, with gold.

Files (next to the build's ``run.json`` / ``samples.jsonl``):

- ``simple_question_graph.json`` / ``complex_question_graph.json``: BioKaLMA's format,
  ``[question, [entity, entity]]`` per item, general and specific questions; an entity dict holds
  every fact of the person (a relation with several values as a JSON list).
- ``gold.jsonl``: per question id (``general-<i>``, ``specific-<i>``) the minimum knowledge set
  ``knowledge`` (round-1 labels + injected facts, the authors' ``with_round1`` gold), plus
  ``knowledge_injected`` (their ``no_round1`` gold) and ``knowledge_round1``.
- ``stats.json``: the Table 2 style statistics that can be computed automatically and the quality
  checks (every gold fact in the KG, every question mentioning its people).
- ``human_check.csv``: a seeded sample for the human checks of Appendix C.1 (authenticity,
  relevance per knowledge, naturalness, significance), with empty columns to fill in.
"""

from __future__ import annotations

import csv
import math
import random
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citegraph.io import atomic_write, json_text

GENERAL_FILE = "simple_question_graph.json"
SPECIFIC_FILE = "complex_question_graph.json"
GOLD_FILE = "gold.jsonl"
STATS_FILE = "stats.json"
HUMAN_FILE = "human_check.csv"


def mentions(question: str, name: str) -> bool:
    """The question names the person: the full name, or the family name (last word), as a word."""
    folded = question.casefold()
    words = name.split()
    for candidate in (name, words[-1] if len(words) > 1 else name):
        pattern = r"(?<!\w)" + re.escape(candidate.casefold()) + r"(?!\w)"
        if re.search(pattern, folded):
            return True
    return False


def write_dataset(
    out: Path,
    records: Sequence[dict[str, Any]],
    stats: dict[str, Any],
    *,
    sample: int = 50,
    seed: int = 0,
) -> None:
    """Write the dataset files from the finished item records (in item order) and their
    statistics (:func:`dataset_stats`)."""
    general, specific, gold_lines = [], [], []
    for i, record in enumerate(records):
        entities = record["entities"]
        general.append([record["general_question"], entities])
        specific.append([record["specific_question"], entities])
        for split in ("general", "specific"):
            gold_lines.append(
                {
                    "id": f"{split}-{i}",
                    "item": record["id"],
                    "knowledge": record["knowledge"],
                    "knowledge_injected": record["injected"],
                    "knowledge_round1": record["round1_knowledge"],
                }
            )
    _write_json(out / GENERAL_FILE, general)
    _write_json(out / SPECIFIC_FILE, specific)
    atomic_write(out / GOLD_FILE, "".join(json_text(g) + "\n" for g in gold_lines))
    _write_json(out / STATS_FILE, stats)
    write_human_sheet(out / HUMAN_FILE, records, sample=sample, seed=seed)


def _write_json(path: Path, data: Any) -> None:
    atomic_write(path, json_text(data, indent=1) + "\n")


def dataset_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Statistics and the automatic quality checks of the built items (each item's record says
    which of its gold facts the KG lacks; items built before that check was recorded are
    counted in ``checks.n_items_not_checked_against_kg``)."""
    sizes = [len(r["knowledge"]) for r in records]
    injected = [len(r["injected"]) for r in records]
    relations = Counter(t[1] for r in records for t in r["knowledge"])
    occupations = {v for r in records for e in r["entities"] for v in _values(e.get("occupation"))}
    people = {e["qid"] for r in records for e in r["entities"]}
    missing = [
        {"item": r["id"], "fact": fact}
        for r in records
        for fact in r.get("gold_facts_not_in_kg", ())
    ]
    unchecked = sum(1 for r in records if "gold_facts_not_in_kg" not in r)
    not_mentioned = []
    for r in records:
        names = [e["name"] for e in r["entities"]]
        for kind in ("general_question", "specific_question"):
            absent = [n for n in names if not mentions(r[kind], n)]
            if absent:
                not_mentioned.append({"item": r["id"], "question": kind, "missing": absent})
    rounds = [rd for r in records for rd in r["rounds"]]
    stats: dict[str, Any] = {
        "n_items": len(records),
        "n_questions": 2 * len(records),
        "n_people": len(people),
        "facts_per_question": _summary(sizes),
        "injected_per_question": _summary(injected),
        "n_relations": len(relations),
        "relation_entropy_bits": _entropy(relations),
        "top_relations": relations.most_common(15),
        "n_occupations": len(occupations),
        "checks": {
            "gold_facts_not_in_kg": missing,
            "questions_not_mentioning_their_people": not_mentioned,
            "n_rounds": len(rounds),
            "n_fallbacks": dict(
                Counter(rd["fallback"].split(":")[0] for rd in rounds if rd["fallback"])
            ),
            "n_injected_not_cited": sum(1 for rd in rounds if rd.get("fact_cited") is False),
            "n_not_a_question": sum(
                1
                for r in records
                for k in ("general_question", "specific_question")
                if r[k] and not r[k].rstrip().endswith("?")
            ),
            "n_empty_questions": sum(
                1 for r in records for k in ("general_question", "specific_question") if not r[k]
            ),
        },
    }
    if unchecked:
        stats["checks"]["n_items_not_checked_against_kg"] = unchecked
    return stats


def _values(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if v]
    return [str(value)] if value else []


def _summary(values: Sequence[int]) -> dict[str, float | int | None]:
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def _entropy(counts: Counter[str]) -> float | None:
    total = sum(counts.values())
    if not total:
        return None
    return -sum(c / total * math.log2(c / total) for c in counts.values())


HUMAN_COLUMNS = (
    "item",
    "split",
    "row",
    "question",
    "people",
    "paragraph",
    "knowledge",
    "authenticity (0/1)",
    "relevance (0/1)",
    "naturalness (1-5)",
    "significance (1-5)",
)


def write_human_sheet(
    path: Path, records: Sequence[dict[str, Any]], *, sample: int = 50, seed: int = 0
) -> None:
    """Appendix C.1's human check: per sampled item and split, one question row (authenticity,
    naturalness, significance to fill in) and one row per minimum-knowledge fact (relevance)."""
    chosen = sorted(random.Random(seed).sample(range(len(records)), min(sample, len(records))))
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HUMAN_COLUMNS)
        for i in chosen:
            r = records[i]
            people = "; ".join(f"{e['name']} ({e['qid']})" for e in r["entities"])
            for split in ("general", "specific"):
                question = r[f"{split}_question"]
                writer.writerow(
                    [
                        r["id"],
                        split,
                        "question",
                        question,
                        people,
                        r["paragraph"],
                        "",
                        "",
                        "",
                        "",
                        "",
                    ]
                )
                for fact in r["knowledge"]:
                    writer.writerow(
                        [
                            r["id"],
                            split,
                            "knowledge",
                            question,
                            "",
                            "",
                            " | ".join(fact),
                            "",
                            "",
                            "",
                            "",
                        ]
                    )
