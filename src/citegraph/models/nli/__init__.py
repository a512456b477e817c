"""NLI models: the lexical matcher, Hugging Face classifiers, TRUE-style T5, servers, cascades and
three-way probabilities."""

from citegraph.models.nli._cascade import (
    CascadeNLI,
)
from citegraph.models.nli._factory import (
    nli_model,
)
from citegraph.models.nli._hf import (
    ENTAILMENT_LABELS,
    HFClassifierNLI,
    find_entailment_index,
)
from citegraph.models.nli._lexical import (
    LexicalNLI,
    value_from_hypothesis,
    value_in_text,
)
from citegraph.models.nli._nli3 import (
    CONTRADICTION_LABELS,
    HFNLI3,
    NEUTRAL_LABELS,
    NLI3_LABELS,
    LexicalNLI3,
    NLI3Model,
    NLIProbs,
    find_three_way_indices,
    nli3_model,
)
from citegraph.models.nli._server import (
    ServerNLI,
    ServerNLI3,
)
from citegraph.models.nli._t5 import (
    TRUE_TEMPLATE,
    TrueT5NLI,
)

__all__ = [
    "CONTRADICTION_LABELS",
    "ENTAILMENT_LABELS",
    "HFNLI3",
    "NEUTRAL_LABELS",
    "NLI3_LABELS",
    "TRUE_TEMPLATE",
    "CascadeNLI",
    "HFClassifierNLI",
    "LexicalNLI",
    "LexicalNLI3",
    "NLI3Model",
    "NLIProbs",
    "ServerNLI",
    "ServerNLI3",
    "TrueT5NLI",
    "find_entailment_index",
    "find_three_way_indices",
    "nli3_model",
    "nli_model",
    "value_from_hypothesis",
    "value_in_text",
]
