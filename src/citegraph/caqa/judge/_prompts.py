"""The evaluator prompts of Table 11, versioned, and how a sample fills them.

Prompts live in ``caqa/judge/prompts/judge.json``; each has a ``version`` recorded with every
number.

=========================  ======  ==========  =================================================
name                       style   labels      what
=========================  ======  ==========  =================================================
``zero-shot``              chat    four        Table 11 "GPT-3.5 and GPT-4" (the paper's default)
``few-shot``               chat    four        the same with four demonstrations
``alpaca``                 alpaca  four        Table 11 "Other Evaluators"; also the fine-tuning
                                               prompt (§5.2, Appendix C)
``attrscore``              alpaca  attrscore   AttrScore's 3-way prompt
``autois``                 nli     binary      premise / hypothesis for an NLI model (AutoIS)
``reference-4way``         alpaca  four        the authors' ``inference.py`` prompt
``reference-4way-examples`` alpaca four        ... with its four in-prompt examples
``reference-2way``         alpaca  binary      the authors' 2-class prompt
=========================  ======  ==========  =================================================

The *claim* of the Alpaca-style prompts is ``question + " " + answer`` (the authors'
``input_has_query=True``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, cast

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.judge._evaluator import LabelSet
from citegraph.errors import ConfigError
from citegraph.models import ChatMessage


@cache
def _prompts() -> dict[str, Any]:
    text = (resources.files("citegraph.caqa.judge") / "prompts" / "judge.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def judge_prompt_names() -> tuple[str, ...]:
    """The prompt names (``zero-shot``, ``few-shot``, ``alpaca``...)."""
    return tuple(_prompts()["prompts"])


def judge_prompt(name: str) -> dict[str, Any]:
    """The prompt entry ``name`` (``version``, ``style``, ``label_set``, texts, ``note``).

    Raises:
        ConfigError: unknown prompt name.
    """
    prompts = _prompts()["prompts"]
    if name not in prompts:
        raise ConfigError(f"unknown judge prompt {name!r}; choose from {', '.join(prompts)}")
    return cast(dict[str, Any], prompts[name])


def prompt_version(name: str) -> str:
    """The version string of prompt ``name``."""
    return str(judge_prompt(name)["version"])


def prompt_label_set(name: str) -> LabelSet:
    """The labels prompt ``name`` asks for."""
    return cast(LabelSet, judge_prompt(name)["label_set"])


def claim_of(sample: CaqaSample) -> str:
    """``question + " " + answer``: the claim of the Alpaca-style and NLI prompts."""
    return f"{sample.question} {sample.answer}".strip()


def alpaca_text(name: str, sample: CaqaSample) -> str:
    """The full Alpaca-style prompt text for an ``alpaca``-style prompt (ends "### Response:")."""
    entry = judge_prompt(name)
    if entry["style"] != "alpaca":
        raise ConfigError(f"judge prompt {name!r} is not an Alpaca-style prompt")
    filled = entry["input"].format(claim=claim_of(sample), citation=sample.citation)
    return str(_prompts()["alpaca_template"]).format(instruction=entry["instruction"], input=filled)


def chat_messages(name: str, sample: CaqaSample) -> list[ChatMessage]:
    """The chat messages of prompt ``name`` for ``sample``.

    ``chat`` prompts give the instruction (plus demonstrations for ``few-shot``) and the filled
    example in one user message, as the authors sent it; ``alpaca`` prompts send the whole
    Alpaca text as one user message.

    Raises:
        ConfigError: an ``nli`` prompt (use :func:`nli_texts`) or an unknown name.
    """
    entry = judge_prompt(name)
    if entry["style"] == "alpaca":
        return [ChatMessage(role="user", content=alpaca_text(name, sample))]
    if entry["style"] != "chat":
        raise ConfigError(f"judge prompt {name!r} is for NLI models, not chat models")
    parts = [entry["instruction"]]
    for demo in entry.get("examples", []):
        parts.append(entry["example"].format(**demo))
    parts.append(
        entry["input"].format(
            question=sample.question, answer=sample.answer, citation=sample.citation
        )
    )
    return [ChatMessage(role="user", content="\n\n".join(parts))]


def nli_texts(sample: CaqaSample, *, direction: str = "paper") -> tuple[str, str]:
    """``(premise, hypothesis)`` for an NLI evaluator (AutoIS).

    Args:
        direction: ``"paper"``: premise = claim, hypothesis = citation (Table 11 and the authors'
            code); ``"evidence"``: premise = citation, hypothesis = claim (the usual AutoAIS
            direction: does the evidence entail the claim?).
    """
    if direction == "paper":
        return claim_of(sample), sample.citation
    if direction == "evidence":
        return sample.citation, claim_of(sample)
    raise ConfigError(f"unknown NLI direction {direction!r}; use 'paper' or 'evidence'")
