"""How attributed answers are scored: the options ``kalma score`` and ``kalma run`` share.

Written verbatim into ``run.json`` (part of a run's identity) and ``metrics.json``, except the
KG's cache settings (:class:`~citegraph.kg.KGOptions`), which only say how fresh a remote KG's
answers are.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from citegraph.errors import ConfigError
from citegraph.io import ServerURL
from citegraph.kalma._reasons import nli_stand_in_warning
from citegraph.kalma._rules import KalmaRules, Mode
from citegraph.kg import KGOptions
from citegraph.models.chat import JudgeReplies, ResolvedReplies, resolve_judge_replies


class ScoringOptions(BaseModel):
    """How attributed answers are scored; shared by ``kalma score`` and ``kalma run``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = Field(
        default="paper",
        description="'paper': the paper's definitions. 'reference': what the authors' scripts "
        "compute (docs/modes.md lists every difference).",
    )
    parser: Mode | None = Field(
        default=None,
        description="Citation parser: 'paper' (robust) or 'reference' (the authors' regex). "
        "Default: the same as mode.",
    )
    nli: str = Field(
        default="lexical",
        description="Entailment model for alignment and [NA]: 'lexical', 'hf/<model>', "
        "'t5/<model>', 'lexical+hf/<model>', or 'vllm/<model>' (a classifier behind vLLM).",
    )
    nli_base_url: ServerURL | None = Field(
        default=None,
        description="Server URL of a 'vllm/<model>' --nli (default: the provider's, "
        "http://localhost:8000/v1).",
    )
    hypothesis: Literal["relation_value", "natural"] = Field(
        default="relation_value",
        description="How a cited fact becomes the NLI hypothesis: 'place of birth: Newark' "
        "(the authors' code) or 'Stephen Crane place of birth Newark'.",
    )
    normalize: bool = Field(
        default=False,
        description="Compare citations after case, accent and whitespace folding (the paper "
        "compares exactly).",
    )
    bootstrap: int = Field(
        default=0, ge=0, description="Bootstrap resamples for confidence intervals (0: none)."
    )
    judge_replies: JudgeReplies = Field(
        default="auto",
        description="Text-quality judge replies: 'free' (the paper's setting), 'constrained' "
        "(one digit 1-5, by grammar) or 'auto' (constrained for local and hf/ judges). In the "
        "run's identity only when constrained.",
    )

    def resolved_judge_replies(self, judge: str | None) -> ResolvedReplies:
        """``free`` or ``constrained`` for the text-quality judge ``judge`` (free: none)."""
        return "free" if judge is None else resolve_judge_replies(self.judge_replies, judge)

    @property
    def effective_parser(self) -> Mode:
        """The parser actually used."""
        return self.parser or self.mode

    def stand_in_warning(self, nli_name: str) -> str | None:
        """One line when the lexical matcher (a stand-in for the paper's TRUE NLI model)
        decided alignment and [NA], naming the flag that passes a real model; else ``None``."""
        return nli_stand_in_warning(self.mode, nli_name)

    @property
    def rules(self) -> KalmaRules:
        """The paper or reference rules of :attr:`mode` and the parser, chosen once here."""
        return KalmaRules.for_mode(self.mode, self.effective_parser)


def replies_identity(out: dict[str, Any], resolved: ResolvedReplies) -> dict[str, Any]:
    """A config dump with ``judge_replies`` as resolved when constrained, else without it (so
    runs made before the field existed keep their identity)."""
    out.pop("judge_replies", None)
    if resolved == "constrained":
        out["judge_replies"] = resolved
    return out


#: Fields left out of a run's identity while unset (the text-quality judge and human scores).
_UNSET_NOT_IDENTITY = (
    "text_quality",
    "text_quality_sample",
    "judge_base_url",
    "text_quality_human",
)


class TextQualityOptions(BaseModel):
    """The G-Eval text-quality judge and its human check; ``kalma run`` and ``kalma score``
    take the same options."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text_quality: str | None = Field(
        default=None,
        description="Judge model for G-Eval text quality (coherence, consistency, fluency, "
        "relevance), e.g. openai/gpt-4o-mini.",
    )
    text_quality_sample: int | None = Field(
        default=None,
        ge=1,
        description="Judge only this many answers with a KG: a seeded random sample over the "
        "whole run (paper: '100 randomly sampled outputs') or, in reference mode, the first N "
        "(GPT_EVAL.py).",
    )
    judge_base_url: ServerURL | None = Field(
        default=None, description="Server URL of the text-quality judge (OpenAI-compatible)."
    )
    text_quality_human: str | None = Field(
        default=None,
        description="JSONL of human text-quality scores ({id, coherence, consistency, fluency, "
        "relevance}, any subset, 1-5): the judge's agreement with them (Spearman, Kendall's "
        "tau-b, Somers' D, bootstrap intervals).",
    )


class KalmaScoreConfig(KGOptions, TextQualityOptions, ScoringOptions):
    """How a file of answers is scored. Written verbatim into ``run.json`` and ``metrics.json``.

    Answers are scored either against a benchmark's entries (``dataset`` and ``split``: their ids
    are the dataset's) or over your own KG (``kg``: your own ids; each answer's graphs come from
    the KG, opened with the :class:`~citegraph.kg.KGOptions` fields). The dump holds the fields
    of the one in use: ``kg`` only when it is set, ``dataset`` and ``split`` only when it is not
    (so runs made before ``kg`` existed keep their identity); ``label_predicates`` and
    ``prefixes`` only when given; the KG's cache settings never (they are not identity).
    """

    dataset: str = Field(
        default="biokalma",
        description="The benchmark the answers were generated for: 'biokalma', or a dataset "
        "directory written by kalma build.",
    )
    kg: str | None = Field(
        default=None,
        description="Score answers over your own KG instead of a dataset: RDF files "
        "(kg.ttl,more.nt), sparql+<url>, or an embedded store (biokalma, codex-s...). Each "
        "answer's graphs are retrieved from it for its question, or are those of its 'entities'.",
    )
    split: Literal["general", "specific"] = Field(
        default="specific", description="BioKaLMA split: 'general' or 'specific' questions."
    )
    batch_size: int = Field(default=32, ge=1, description="Answers scored per batch.")
    seed: int = Field(default=0, description="Seed of the bootstrap.")

    @model_validator(mode="after")
    def _kg_options_need_a_kg(self) -> KalmaScoreConfig:
        if self.kg is None and self.reads_differently:
            raise ConfigError("--label-predicate and --prefix read your own KG: give it with --kg")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = self.identity_dump(handler(self))
        replies_identity(out, self.resolved_judge_replies(getattr(self, "text_quality", None)))
        for name in _UNSET_NOT_IDENTITY:  # runs made before these fields keep their identity
            if out.get(name) is None:
                out.pop(name, None)
        if self.kg is None:
            out.pop("kg", None)
        else:
            out.pop("dataset", None)
            out.pop("split", None)
        return out
