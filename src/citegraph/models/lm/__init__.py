"""Language-model scorers: token log-probabilities from Hugging Face models, the local model or
a server."""

from citegraph.models.lm._scorer import (
    CausalLMScorer,
    causal_lm_scorer,
)
from citegraph.models.lm._scores import (
    LMScorer,
    TokenScores,
)
from citegraph.models.lm._server import (
    ServerLMScorer,
)

__all__ = [
    "CausalLMScorer",
    "LMScorer",
    "ServerLMScorer",
    "TokenScores",
    "causal_lm_scorer",
]
