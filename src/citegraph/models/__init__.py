"""Models behind small protocols: NLI (entailment) scorers for now."""

from citegraph.models._nli_protocol import NLIModel, NLIPair, NLIVerdict

__all__ = ["NLIModel", "NLIPair", "NLIVerdict"]
