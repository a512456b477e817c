"""KaLMA ablations: knowledge removal (§4.4, §5.2) and retrieval corruption (§5.3).

**Conscious incompetence** (:func:`remove_knowledge`). Round ``k`` removes ``k`` facts of the
question's minimum knowledge set (gold) from its KG; the removed facts are the "absent knowledge
ground truth" the ``[NA]`` metrics score against. Rounds are nested, as in the paper ("each
[round] remove[s] one additional knowledge"): the gold facts are put in one order per sample and
round ``k`` removes the first ``k`` of them that occur in the KG, so what round 1 removes is also
removed in rounds 2 and 3. ``strategy="random"`` orders them by a permutation seeded with
``f"{seed}:{sample_id}"`` (stdlib :class:`random.Random`, stable across processes);
``strategy="first"`` keeps the gold order, as the authors' ``NA_answer_questions.py`` (which
``eval_NA.py`` evaluates) does. Facts are identified by :class:`Triple` equality
``(subject, relation, value)``; duplicate gold facts count once. A gold fact found in no graph
cannot be removed: it is skipped (listed in ``not_in_graph``) and the next one is taken. The
authors' script instead spends its ``k`` on the first ``k`` gold positions and silently skips a
fact it cannot pop, so it may remove fewer; it also pops the whole relation key of the entity
dict (BioKaLMA dicts hold one value per relation, so that is the same fact).

**Retrieval accuracy** (:func:`corrupt_retrieval`). Retrieval accuracy ``a`` keeps ``a``% of all
question graphs (counted over the whole dataset) and replaces the others with graphs of other
questions. The number replaced is ``round_half_up(n_graphs * (100 - a) / 100)``. Levels are
nested for one seed: all ``(question id, graph index)`` slots, in sorted-id order, are shuffled
once (``random.Random(f"{seed}:slots")``) and level ``a`` replaces the first ``m`` replaceable
slots, so the graphs replaced at 80 are replaced at 60 too. Each slot's replacement is fixed for
the seed: per question, ``random.Random(f"{seed}:replace:{question id}")`` draws distinct centres
from all other questions' graphs, excluding every centre among that question's own graphs, and
slot ``i`` gets the ``i``-th draw. So no question ever holds a graph of its own centre twice or
two replacements with the same centre. Questions without graphs are untouched. The authors'
``retrieve_answer_questions.py`` instead replaces each of the two gold graphs independently with
probability ``1 - a/100`` (unseeded, so levels are not nested and the share varies) by one fixed
graph (Lionel Messi, Q615), merging the two when both are replaced.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError
from citegraph.kg import Subgraph, Triple

RemovalStrategy = Literal["random", "first"]


class Removal(BaseModel):
    """A question's KG with ``requested`` gold facts removed (one §4.4 round)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sample_id: str = Field(description="The sample the removal was drawn for.")
    strategy: RemovalStrategy = Field(description="'random' (seeded) or 'first' (gold order).")
    seed: int = Field(description="Seed of the 'random' order (recorded for 'first' too).")
    requested: int = Field(description="How many gold facts were to be removed (k).")
    graphs: list[Subgraph] = Field(description="The KG given to the model, facts removed.")
    removed: list[Triple] = Field(
        description="The absent-knowledge ground truth, in removal order (round j removes the "
        "first j)."
    )
    not_in_graph: list[Triple] = Field(
        description="Distinct gold facts found in no graph: they cannot be removed (skipped)."
    )
    n_gold: int = Field(description="Distinct gold facts.")
    reason: str | None = Field(
        default=None, description="Why fewer than ``requested`` facts were removed."
    )


def remove_knowledge(
    graphs: Sequence[Subgraph],
    gold: Sequence[Triple],
    k: int,
    *,
    strategy: RemovalStrategy = "random",
    seed: int = 0,
    sample_id: str,
) -> Removal:
    """Remove ``k`` gold facts from a question's KG (nested over ``k``; module docstring).

    Args:
        graphs: The question's ground-truth subgraphs.
        gold: Its minimum knowledge set.
        k: How many facts to remove (0 gives the gold round, nothing removed).
        strategy: ``"random"`` (seeded per sample) or ``"first"`` (gold order).
        seed: Seed of the random order.
        sample_id: The sample's id; part of the seed, so samples get independent orders.

    Returns:
        The reduced graphs (subgraph order and centres kept, each removed fact dropped wherever
        it occurs) and what was removed. When fewer than ``k`` gold facts occur in the graphs,
        all of them are removed and ``reason`` says so.

    Raises:
        ConfigError: If ``k`` < 0 or the strategy is unknown.

    Example:
        >>> g = Subgraph.from_entity_dict({"qid": "Q1", "name": "A", "occupation": "poet"})
        >>> fact = Triple(subject="Q1", relation="occupation", value="poet")
        >>> remove_knowledge([g], [fact], 1, sample_id="s").removed == [fact]
        True
    """
    if k < 0:
        raise ConfigError(f"k must be >= 0, got {k}")
    if strategy not in ("random", "first"):
        raise ConfigError(f"strategy must be 'random' or 'first', got {strategy!r}")
    ordered = list(dict.fromkeys(gold))
    present = {t for g in graphs for t in g.triples}
    not_in_graph = [t for t in ordered if t not in present]
    if strategy == "random":
        random.Random(f"{seed}:{sample_id}").shuffle(ordered)
    removable = [t for t in ordered if t in present]
    removed = removable[:k]
    reason = None
    if len(removed) < k:
        reason = (
            f"only {len(removed)} of the {k} requested gold facts could be removed: "
            f"{len(ordered)} distinct gold facts, {len(not_in_graph)} of them in no graph"
        )
    gone = set(removed)
    kept = [
        Subgraph(center=g.center, triples=tuple(t for t in g.triples if t not in gone))
        if any(t in gone for t in g.triples)
        else g
        for g in graphs
    ]
    return Removal(
        sample_id=sample_id,
        strategy=strategy,
        seed=seed,
        requested=k,
        graphs=kept,
        removed=removed,
        not_in_graph=not_in_graph,
        n_gold=len(ordered),
        reason=reason,
    )


class ReplacedSlot(BaseModel):
    """One question graph swapped for another question's graph."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str = Field(description="The question whose graph was replaced.")
    index: int = Field(description="Position of the graph in that question's list.")
    original_center: str = Field(description="Centre id of the graph taken out.")
    replacement_center: str = Field(description="Centre id of the graph put in.")
    source_question_id: str = Field(description="The question the replacement graph comes from.")


class Corruption(BaseModel):
    """The dataset's graphs at one simulated retrieval accuracy (§5.3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accuracy: int = Field(description="Requested retrieval accuracy, percent of graphs kept.")
    seed: int = Field(description="Seed of the slot permutation and the replacement draws.")
    graphs_by_id: dict[str, list[Subgraph]] = Field(description="Question id -> graphs given.")
    replaced: list[ReplacedSlot] = Field(description="Replaced slots, in permutation order.")
    n_graphs: int = Field(description="Question graphs in the dataset (all slots).")
    n_requested: int = Field(description="round_half_up(n_graphs * (100 - accuracy) / 100).")
    achieved_accuracy: float | None = Field(
        description="Kept / n_graphs, in [0, 1]; None when the dataset has no graph."
    )
    n_unreplaceable: int = Field(
        default=0,
        description="Slots skipped because no other question offers a graph with a new centre.",
    )


def corrupt_retrieval(
    graphs_by_id: Mapping[str, Sequence[Subgraph]], accuracy: int, *, seed: int = 0
) -> Corruption:
    """Replace ``100 - accuracy`` percent of all question graphs by other questions' graphs.

    Args:
        graphs_by_id: Question id -> its ground-truth graphs.
        accuracy: Retrieval accuracy to simulate, an integer percent in [0, 100].
        seed: One seed for every level; levels are nested (module docstring).

    Returns:
        The new graphs (same keys and order, same number of graphs per question), the replaced
        slots and the achieved accuracy. Slots with no possible replacement (tiny datasets) are
        skipped and the next slot of the permutation is taken, keeping levels nested.

    Raises:
        ConfigError: If ``accuracy`` is not an integer in [0, 100].
    """
    if isinstance(accuracy, bool) or not isinstance(accuracy, int) or not 0 <= accuracy <= 100:
        raise ConfigError(f"accuracy must be an integer percent in [0, 100], got {accuracy!r}")
    ids = sorted(graphs_by_id)
    slots = [(q, i) for q in ids for i in range(len(graphs_by_id[q]))]
    n_graphs = len(slots)
    n_requested = (n_graphs * (100 - accuracy) + 50) // 100
    random.Random(f"{seed}:slots").shuffle(slots)
    pool: dict[str, tuple[Subgraph, str]] = {}
    for q in ids:
        for g in graphs_by_id[q]:
            pool.setdefault(g.center.id, (g, q))
    centres = sorted(pool)
    draws: dict[str, list[str]] = {}
    out = {q: list(gs) for q, gs in graphs_by_id.items()}
    replaced: list[ReplacedSlot] = []
    n_unreplaceable = 0
    for q, i in slots:
        if len(replaced) == n_requested:
            break
        if q not in draws:
            draws[q] = _draw_centres(graphs_by_id[q], centres, f"{seed}:replace:{q}")
        if i >= len(draws[q]):
            n_unreplaceable += 1
            continue
        graph, source = pool[draws[q][i]]
        out[q][i] = graph
        replaced.append(
            ReplacedSlot(
                question_id=q,
                index=i,
                original_center=graphs_by_id[q][i].center.id,
                replacement_center=graph.center.id,
                source_question_id=source,
            )
        )
    return Corruption(
        accuracy=accuracy,
        seed=seed,
        graphs_by_id=out,
        replaced=replaced,
        n_graphs=n_graphs,
        n_requested=n_requested,
        achieved_accuracy=(n_graphs - len(replaced)) / n_graphs if n_graphs else None,
        n_unreplaceable=n_unreplaceable,
    )


def _draw_centres(own: Sequence[Subgraph], centres: Sequence[str], seed: str) -> list[str]:
    """Distinct centres, none of ``own``'s, one per slot of ``own`` (fewer if the pool is short).

    A uniform sample of ``len(own) + len(own centres)`` from all centres, own ones dropped, keeps
    the first ``len(own)``: the same as the first non-own centres of a full random permutation.
    """
    exclude = {g.center.id for g in own}
    size = min(len(centres), len(own) + len(exclude))
    drawn = random.Random(seed).sample(centres, size)
    return [c for c in drawn if c not in exclude][: len(own)]
