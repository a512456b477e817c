"""What ``kalma run`` reads before answering: the split, its gold, the KG context per question,
and the questions the text-quality judge sees. All of it is chosen over the whole split (never
over one shard's share), so that shards of one run answer exactly what the whole run would.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import (
    BioKaLMASample,
    GoldRecord,
    kalma_dataset_path,
    load_kalma_dataset,
    read_gold,
)
from citegraph.errors import ConfigError, DataError
from citegraph.kalma.run._ablations import corrupt_retrieval
from citegraph.kalma.run._approx_gold import APPROX_GOLD, question_match_gold
from citegraph.kalma.run._config import RunConfig, gold_source
from citegraph.kalma.score._text_quality import reference_subset
from citegraph.kg import Subgraph
from citegraph.runs import sha256_file


class RunInputs(BaseModel):
    """The inputs of one ``kalma run``, read once."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    samples: list[BioKaLMASample] = Field(description="The whole split, in dataset order.")
    gold: dict[str, GoldRecord] | None = Field(description="Gold knowledge by id (None: none).")
    data: dict[str, str] = Field(description="Input files and their SHA-256 (run identity).")
    graphs: dict[str, tuple[Subgraph, ...]] = Field(
        description="The KG context per question, with the retrieval ablation applied."
    )
    judged: set[str] | None = Field(description="Questions the judge sees (None: all).")


def read_inputs(config: RunConfig, data_dir: str | Path | None) -> RunInputs:
    """Load the split and decide everything that is chosen over the whole split.

    Raises:
        ConfigError: ``--remove-knowledge`` without gold.
        DataError: the gold file is malformed or names ids the split does not have.
    """
    samples = load_kalma_dataset(config.dataset, config.split, data_dir)
    gold, data = _gold(config, samples, data_dir)
    return RunInputs(
        samples=samples,
        gold=gold,
        data=data,
        graphs=_context_graphs(config, samples),
        judged=_judged_ids(config, samples),
    )


def _gold(
    config: RunConfig, samples: Sequence[BioKaLMASample], data_dir: str | Path | None
) -> tuple[dict[str, GoldRecord] | None, dict[str, str]]:
    data = {"dataset": sha256_file(kalma_dataset_path(config.dataset, config.split, data_dir))}
    source = gold_source(config)
    if source is None:
        if config.remove_knowledge:
            raise ConfigError(
                f"--remove-knowledge needs gold: {config.dataset} has no gold.jsonl; give --gold"
            )
        return None, data
    if source == APPROX_GOLD:
        gold = {
            s.id: GoldRecord(id=s.id, knowledge=tuple(question_match_gold(s.question, s.graphs)))
            for s in samples
        }
        return gold, data
    path = Path(source)
    # A gold file may cover both splits (kalma build writes one): keep this split's ids.
    other = "general-" if config.split == "specific" else "specific-"
    gold = {k: v for k, v in read_gold(path).items() if not k.startswith(other)}
    known = {s.id for s in samples}
    for gid in gold:
        if gid not in known:
            raise DataError(
                f"id {gid!r} is not in the {config.split} split of {config.dataset}",
                path=path,
                field="id",
            )
    data["gold"] = sha256_file(path)
    return gold, data


def _judged_ids(config: RunConfig, samples: Sequence[BioKaLMASample]) -> set[str] | None:
    """The questions the text-quality judge sees (None: all), chosen over the whole split."""
    n = config.text_quality_sample
    if not config.text_quality or n is None:
        return None
    if config.rules.judge_first_n:
        return set(reference_subset([s.id for s in samples], [s.has_graph for s in samples], n))
    with_graph = [s.id for s in samples if s.has_graph]
    return set(
        random.Random(f"{config.seed}:text-quality").sample(with_graph, min(n, len(with_graph)))
    )


def _context_graphs(
    config: RunConfig, samples: Sequence[BioKaLMASample]
) -> dict[str, tuple[Subgraph, ...]]:
    """The dataset graphs, with the retrieval ablation applied over the whole split."""
    graphs = {s.id: tuple(s.graphs) for s in samples}
    if config.retrieval_accuracy >= 100:
        return graphs
    corruption = corrupt_retrieval(graphs, config.retrieval_accuracy, seed=config.seed)
    return {k: tuple(v) for k, v in corruption.graphs_by_id.items()}
