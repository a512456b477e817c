"""Prompts and generation of attributed answers (the paper's Table 13 and the authors' prompt)."""

from citegraph.kalma.generate._generate import (
    AttributedAnswer,
    generate_answer,
    generate_answer_async,
)
from citegraph.kalma.generate._prompt import (
    DEFAULT_PROMPT,
    PROMPT_VERSIONS,
    PromptVersion,
    build_messages,
    flatten_kg,
)

__all__ = [
    "DEFAULT_PROMPT",
    "PROMPT_VERSIONS",
    "AttributedAnswer",
    "PromptVersion",
    "build_messages",
    "flatten_kg",
    "generate_answer",
    "generate_answer_async",
]
