"""``metrics.json`` of a ``kalma run``, aggregated from ``samples.jsonl`` alone.

It holds everything ``kalma score`` reports (citation quality, alignment, [NA], each micro and
macro with the unmeasured counts and reasons) plus: generation (failed, empty, cached answers,
tokens, latency), retrieval accuracy (``--retrieval ner``), the experiments' bookkeeping (facts
removed, graphs replaced), text quality (judge), and the setup that produced the numbers (model,
prompt version, temperature, seed, mode, NLI model, gold source). Because it needs no model, a
merged or copied run directory can be re-aggregated anywhere.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from citegraph.kalma.retrieve import retrieval_accuracy
from citegraph.kalma.run._approx_gold import APPROX_GOLD, APPROX_GOLD_NOTE
from citegraph.kalma.run._config import KalmaRunConfig, gold_source
from citegraph.kalma.score import (
    HUMAN_FIELD,
    METRICS,
    build_metrics,
    text_quality_agreement,
    text_quality_block,
)
from citegraph.metrics import f1_score, summarise_runs
from citegraph.runs import FAILED, recorded_config


def run_config_of(info: dict[str, Any]) -> KalmaRunConfig:
    """The :class:`KalmaRunConfig` recorded in a run's ``run.json``."""
    return recorded_config(KalmaRunConfig, info)


#: The record fields the run's own sections read (generation, retrieval, experiment, text
#: quality); the large ones (the KG given, the parsed answer, the verdicts) are not among them.
RUN_FIELDS = (
    "status",
    "empty_reason",
    "generation",
    "retrieval",
    "removed",
    "graph_qids",
    "replaced_graphs",
    "text_quality",
    HUMAN_FIELD,
    "constraint",
)


def build_run_metrics(records: Sequence[dict[str, Any]], info: dict[str, Any]) -> dict[str, Any]:
    """Aggregate a run's records (in dataset order) into the ``metrics.json`` dict.

    The records are read once: :func:`build_metrics` (which reads its records once) streams
    them, and of each record only its :data:`RUN_FIELDS` are kept for the run's own sections
    (stored records are parsed again on every pass: ~15 ms per 400 records).
    """
    config = run_config_of(info)
    recorded = info["config"]
    gold = gold_source(config)
    slim: list[dict[str, Any]] = []

    def keeping_run_fields() -> Iterator[dict[str, Any]]:
        for record in records:
            slim.append({k: record[k] for k in RUN_FIELDS if k in record})
            yield record

    metrics = build_metrics(
        keeping_run_fields(),
        config.score_config(),
        recorded["nli_name"],
        gold_given=gold is not None,
    )
    metrics["generation"] = _generation(slim)
    metrics["retrieval"] = _retrieval(slim, config)
    metrics["experiment"] = _experiment(slim, config)
    metrics["text_quality"] = text_quality_block(slim)
    if config.text_quality_human is not None:  # only then: other runs keep their metrics.json
        metrics["text_quality_agreement"] = text_quality_agreement(
            slim, bootstrap=config.bootstrap, seed=config.seed
        )
    metrics["setup"] = {
        "task": recorded.get("task"),
        "model": recorded.get("model_name"),
        "prompt": config.prompt,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "seed": config.seed,
        "judge": recorded.get("judge_name"),
        "gold": gold,
        "gold_note": APPROX_GOLD_NOTE if config.gold == APPROX_GOLD else None,
        "run_id": info.get("run_id"),
    }
    if config.citations != "free":  # only then: free runs keep their metrics.json as it was
        metrics["setup"]["citations"] = config.citations
        metrics["constraint"] = _constraint(slim)
    return metrics


def _constraint(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How the constrained citations were made: the grammar and its mode, the citable facts,
    answers whose unfinished citation was cut at max_tokens, how each fact was kept to one
    citation per answer and the repeated citations removed after the reply (servers), and
    (local models) the grammar's share of generation time."""
    rows = [r["constraint"] for r in records if r.get("constraint")]
    timed = [
        (r["constraint"]["grammar_s"], r["generation"]["latency_s"])
        for r in records
        if "grammar_s" in (r.get("constraint") or {})
        and (r.get("generation") or {}).get("latency_s")
    ]
    grammar_s = sum(t for t, _ in timed)
    latency_s = sum(t for _, t in timed)
    return {
        "grammars": sorted({row["grammar"] for row in rows}),
        "modes": sorted({str(row.get("mode")) for row in rows}),
        "n_answers": len(rows),
        "mean_citable_facts": statistics.fmean(r["citable_facts"] for r in rows) if rows else None,
        "n_facts_left_out": sum(r.get("facts_left_out", 0) for r in rows),
        "n_cut_open_citation": sum(1 for r in rows if r.get("cut_open_citation")),
        "each_fact_once": sorted({str(r["each_fact_once"]) for r in rows if "each_fact_once" in r}),
        "n_repeats_removed": sum(r.get("repeats_removed", 0) for r in rows),
        "grammar_s": round(grammar_s, 6) if timed else None,
        "generation_s": round(latency_s, 6) if timed else None,
        "grammar_share": grammar_s / latency_s if timed and latency_s else None,
        "grammar_share_note": None if timed else "not timed: the grammar ran on the server",
    }


def _generation(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    gens = [r["generation"] for r in records if r.get("generation")]
    # an item whose model call failed got no answer: it is failed, not empty
    reasons = Counter(
        r["empty_reason"] for r in records if r.get("empty_reason") and r.get("status") != FAILED
    )
    failures = Counter(
        str(r.get("error") or r.get("empty_reason")) for r in records if r.get("status") == FAILED
    )
    latencies = [g["latency_s"] for g in gens if g.get("latency_s") is not None]
    return {
        "n_questions": len(records),
        "n_failed": sum(failures.values()),
        "n_empty": sum(reasons.values()),
        "empty_reasons": dict(reasons),
        **({"failure_reasons": dict(failures)} if failures else {}),  # only when one failed
        "n_cached": sum(1 for g in gens if g.get("cached")),
        "n_retried": sum(1 for g in gens if g.get("attempts", 1) > 1),
        "finish_reasons": dict(Counter(str(g.get("finish_reason")) for g in gens)),
        "prompt_tokens": sum((g.get("usage") or {}).get("prompt_tokens") or 0 for g in gens),
        "completion_tokens": sum(
            (g.get("usage") or {}).get("completion_tokens") or 0 for g in gens
        ),
        "mean_latency_s": statistics.fmean(latencies) if latencies else None,
    }


def _retrieval(records: Sequence[dict[str, Any]], config: KalmaRunConfig) -> dict[str, Any] | None:
    """Retrieval accuracy of the run's questions, in the run's mode."""
    rows = [r["retrieval"] for r in records if r.get("retrieval")]
    if not rows:
        return None
    if config.questions is not None:
        return _own_retrieval(rows)
    report = retrieval_accuracy(
        [r["qids"] for r in rows], [r["gold_qids"] for r in rows], mode=config.rules
    )
    return report.model_dump(mode="json", exclude={"per_question"})


#: Why your own questions' retrieval has no accuracy.
NO_OWN_GOLD_ENTITIES = (
    "your own questions name no gold entities to compare retrieval with (BioKaLMA's graphs do)"
)


def _own_retrieval(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How your own questions' KG context was found: by source, and how many found nothing."""
    sources: dict[str, int] = {}
    for row in rows:
        sources[row.get("source", "ner")] = sources.get(row.get("source", "ner"), 0) + 1
    return {
        "mode": "own questions",
        "sources": sources,
        "n_found_none": sum(1 for row in rows if row.get("found_none")),
        "n_measured": 0,
        "n_unmeasured": len(rows),
        "unmeasured_reason": NO_OWN_GOLD_ENTITIES,
    }


def _experiment(records: Sequence[dict[str, Any]], config: KalmaRunConfig) -> dict[str, Any]:
    out: dict[str, Any] = {
        "remove_knowledge": config.remove_knowledge,
        "remove_strategy": config.remove_strategy if config.remove_knowledge else None,
        "retrieval_accuracy_requested": config.retrieval_accuracy,
    }
    if config.remove_knowledge:
        removed = [len(r.get("removed", [])) for r in records]
        out |= {
            "n_facts_removed": sum(removed),
            "n_questions_with_fewer_than_k": sum(1 for n in removed if n < config.remove_knowledge),
        }
    if config.retrieval_accuracy < 100:
        total = sum(len(r.get("graph_qids", [])) for r in records)
        replaced = sum(len(r.get("replaced_graphs", [])) for r in records)
        out |= {
            "n_graphs": total,
            "n_graphs_replaced": replaced,
            "retrieval_accuracy_achieved": (total - replaced) / total if total else None,
        }
    return out


def summarise_seeds(metrics: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean and sample std over runs that differ only in seed (Table 3's mean (std)).

    F1 is recomputed from the mean precision and recall, as the paper's Table 3 does ("F1 of the
    means", no std); the per-run F1 values are kept too. Each citation-validity rate (named by
    the runs' ``citation_validity.denominators``) is summarised the same way, a run without a
    validity block counting as unmeasured.
    """
    out: dict[str, Any] = {"n_runs": len(metrics), "seeds": [m["setup"]["seed"] for m in metrics]}
    for name in METRICS:
        out[name] = {
            kind: summarise_runs([m[name][kind] for m in metrics]).model_dump(mode="json")
            for kind in ("micro", "macro")
        }
    for kind in ("micro", "macro"):
        p, r = out["precision"][kind]["mean"], out["recall"][kind]["mean"]
        out["f1"][kind]["f1_of_means"] = f1_score(p, r)
    validity = [m.get("citation_validity") or {} for m in metrics]
    rates = sorted({rate for v in validity for rate in v.get("denominators", {})})
    if rates:
        out["citation_validity"] = {
            rate: summarise_runs([v.get(rate) for v in validity]).model_dump(mode="json")
            for rate in rates
        }
    out["setup"] = {k: v for k, v in metrics[0]["setup"].items() if k not in ("seed", "run_id")}
    return out
