"""Building a KaLMA benchmark with gold from a KG (paper §2.2, Appendix A): person pairs,
name disambiguation, evolutionary question generation, and the ``kalma.build`` task."""

from citegraph.kalma.build._config import KalmaBuildConfig
from citegraph.kalma.build._disambiguate import (
    Resolution,
    disambiguate,
    disambiguate_async,
    disambiguate_many,
    disambiguate_many_async,
    resolution_counts,
)
from citegraph.kalma.build._evolve import Evolution, EvolveConfig, Round, evolve, evolve_async
from citegraph.kalma.build._pairs import (
    PERSON_RELATIONS,
    PersonPair,
    filter_complete,
    is_complete_name,
    read_pairs_csv,
    sample_pairs,
)
from citegraph.kalma.build._select import (
    PerplexityFn,
    RelationCounts,
    ScoredCandidate,
    Selection,
    candidate_facts,
    relation_counts,
    select_fact,
    select_fact_async,
    specificity,
)
from citegraph.kalma.build._task import (
    KalmaBuildResult,
    KalmaBuildTask,
    build_benchmark,
    build_benchmark_async,
)
from citegraph.kalma.build._templates import fact_sentence, relation_class

__all__ = [
    "PERSON_RELATIONS",
    "Evolution",
    "EvolveConfig",
    "KalmaBuildConfig",
    "KalmaBuildResult",
    "KalmaBuildTask",
    "PerplexityFn",
    "PersonPair",
    "RelationCounts",
    "Resolution",
    "Round",
    "ScoredCandidate",
    "Selection",
    "build_benchmark",
    "build_benchmark_async",
    "candidate_facts",
    "disambiguate",
    "disambiguate_async",
    "disambiguate_many",
    "disambiguate_many_async",
    "evolve",
    "evolve_async",
    "fact_sentence",
    "filter_complete",
    "is_complete_name",
    "read_pairs_csv",
    "relation_class",
    "relation_counts",
    "resolution_counts",
    "sample_pairs",
    "select_fact",
    "select_fact_async",
    "specificity",
]
