"""Constrained decoding: grammars in the providers' forms and the token-level matcher."""

from citegraph.models.grammar._grammar import (
    GRAMMAR_MODES,
    Grammar,
    GrammarMode,
    GrammarUpdate,
    Steering,
    grammar_mode_of,
)
from citegraph.models.grammar._llg import (
    GrammarLogits,
    compile_grammar,
    decode_under,
    grammar_accepts,
    hf_tokenizer,
    steer_tokens,
)

__all__ = [
    "GRAMMAR_MODES",
    "Grammar",
    "GrammarLogits",
    "GrammarMode",
    "GrammarUpdate",
    "Steering",
    "compile_grammar",
    "decode_under",
    "grammar_accepts",
    "grammar_mode_of",
    "hf_tokenizer",
    "steer_tokens",
]
