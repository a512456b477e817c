"""Why a KaLMA figure is missing, failed or decided by a stand-in: the reasons and warnings that
scoring writes into records and ``metrics.json`` and that the view reads back.

Both :mod:`citegraph.kalma.score` (which counts them) and :mod:`citegraph.kalma.view` (which
shows them per answer) use this module, so the two always give the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: How long a failure reason in ``unmeasured`` may be (failures are grouped by reason).
REASON_CHARS = 200
#: Why an answer recorded before citation-validity metrics has none.
NOT_RECORDED = "record written before citation-validity metrics (score the answers again)"
#: Why an answer's repeated citations are unmeasured.
REPEATS_NOT_RECORDED = "record written before repeated citations were counted (score again)"


def failed_reason(record: Mapping[str, Any]) -> str:
    """Why a failed record (``status: failed``) is not scored, as ``unmeasured`` counts it:
    ``item failed, not scored: <its error>`` (the model's failure reason, cut to
    :data:`REASON_CHARS`)."""
    why = record.get("error") or record.get("empty_reason") or "no reason recorded"
    text = " ".join(str(why).split())
    if len(text) > REASON_CHARS:
        text = text[: REASON_CHARS - 3] + "..."
    return f"item failed, not scored: {text}"


def answer_unmeasured(record: Mapping[str, Any]) -> dict[str, str]:
    """Per metric, why one answer's record has no value for it, as ``metrics.json``
    ``unmeasured`` counts the answer: the record's own ``unmeasured`` reasons, plus, for a
    ratio whose denominator is 0 (an answer citing no KG triple, an empty gold or absent set,
    no [NA] sentence), the reason of :data:`_ZERO_REASONS` (such an answer is left out of the
    macro average and adds 0 / 0 to the micro sums). Not the reference-mode alignment cap,
    which depends on the answer's place in the run (``kalma.score``'s report adds it)."""
    own = record.get("unmeasured")
    reasons = {str(k): str(v) for k, v in own.items()} if isinstance(own, Mapping) else {}
    for metric, reason in _ZERO_REASONS.items():
        if metric not in reasons and _zero_denominator(record, metric):
            reasons[metric] = reason
    return reasons


_ZERO_REASONS = {
    "correctness": "answer cites no KG triple (left out of the macro average)",
    "precision": "answer cites no KG triple (left out of the macro average)",
    "recall": "empty gold minimum knowledge set (left out of the macro average)",
    "alignment": "answer cites no KG triple (left out of the macro average)",
    "na_precision": "answer has no [NA] sentence (left out of the macro average)",
    "na_recall": "empty absent-knowledge set (left out of the macro average)",
}


def _zero_denominator(record: Mapping[str, Any], metric: str) -> bool:
    """Whether ``metric``'s denominator is 0 for this answer (False when the record lacks the
    part: a failed item, or no [NA] scoring)."""
    if metric in ("correctness", "precision", "recall"):
        part, key = record.get("citations"), "n_gold" if metric == "recall" else "n_citations"
    elif metric == "alignment":
        part, key = record.get("alignment"), "total"
    else:
        part = record.get("na")
        key = "precision_den" if metric == "na_precision" else "recall_den"
    return isinstance(part, Mapping) and part.get(key) == 0


def warning_lines(warnings: Mapping[str, Any] | None) -> list[str]:
    """One line per kind of ``metrics.json`` ``warnings``: how many, why, the first ids."""
    out = []
    for kind, found in (warnings or {}).items():
        ids = list(found.get("ids") or [])
        more = ", ..." if int(found.get("n") or 0) > len(ids) else ""
        out.append(f"{found.get('n')} x {kind}: {found.get('reason')} ({', '.join(ids)}{more})")
    return out


def nli_stand_in_warning(mode: str, nli_name: str) -> str | None:
    """One line when the lexical matcher (a stand-in for the paper's TRUE NLI model) decided
    alignment and [NA] in a ``mode``-mode run, naming the flag that passes a real model; else
    ``None``."""
    if nli_name.split("(")[0] != "lexical":
        return None
    return (
        f"{mode}-mode alignment and [NA] precision / recall decided by the lexical "
        "matcher, a stand-in for the paper's TRUE NLI model (pass --nli t5/<TRUE model>, "
        "--nli hf/<NLI model> or --nli lexical+hf/<NLI model>)"
    )
