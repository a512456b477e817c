"""KaLMA: attributed answers that cite KG triples, and their evaluation."""

from citegraph.kalma._types import Citation, ParsedAnswer, ParseIssue, Sentence

__all__ = ["Citation", "ParseIssue", "ParsedAnswer", "Sentence"]
