"""Knowledge-graph layer: typed records, the :class:`KnowledgeGraph` protocol and its backends."""

from citegraph.kg._protocol import KnowledgeGraph
from citegraph.kg._types import Entity, Subgraph, Triple

__all__ = ["Entity", "KnowledgeGraph", "Subgraph", "Triple"]
