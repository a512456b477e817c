"""Models behind small protocols: NLI (entailment) scorers for now."""

from citegraph.models._nli_cascade import CascadeNLI
from citegraph.models._nli_factory import nli_model
from citegraph.models._nli_hf import ENTAILMENT_LABELS, HFClassifierNLI, find_entailment_index
from citegraph.models._nli_lexical import LexicalNLI, value_from_hypothesis, value_in_text
from citegraph.models._nli_protocol import NLIModel, NLIPair, NLIVerdict
from citegraph.models._nli_t5 import TRUE_TEMPLATE, TrueT5NLI
from citegraph.models._normalize import (
    DateMention,
    contains_phrase,
    date_entails,
    find_dates,
    normalize_text,
    parse_date,
    strip_accents,
)

__all__ = [
    "ENTAILMENT_LABELS",
    "TRUE_TEMPLATE",
    "CascadeNLI",
    "DateMention",
    "HFClassifierNLI",
    "LexicalNLI",
    "NLIModel",
    "NLIPair",
    "NLIVerdict",
    "TrueT5NLI",
    "contains_phrase",
    "date_entails",
    "find_dates",
    "find_entailment_index",
    "nli_model",
    "normalize_text",
    "parse_date",
    "strip_accents",
    "value_from_hypothesis",
    "value_in_text",
]
