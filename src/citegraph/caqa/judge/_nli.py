"""NLI attribution judges (AutoIS): entailed -> supportive, otherwise not.

AutoIS is the TRUE T5 NLI model (Appendix C: it outputs "1" for support and "0" otherwise). Any
:class:`~citegraph.models.NLIModel` serves (``nli_model("t5/<path>")`` for TRUE, an MNLI
cross-encoder, the lexical matcher). Premise and hypothesis come from
:func:`~citegraph.caqa.judge._prompts.nli_texts`:

=============  ===============================  ==============================================
direction      premise / hypothesis             source
=============  ===============================  ==============================================
``paper``      claim / citation                 Table 11 and the authors' code (reversed from
                                                the usual AIS direction)
``evidence``   citation / claim                 the usual direction: does the evidence entail
                                                the claim?
=============  ===============================  ==============================================

The claim is ``question + " " + answer``. A not-entailed pair is ``unsupported`` (label set
``binary``), or ``irrelevant`` with ``not_entailed_as="irrelevant"`` (label set ``four``: the
ALCE comparison of Appendix C and the authors' code map "0" to Irrelevant). When the backend
gives an entailment probability ``p``, the judgement keeps ``{"supportive": p, <other>: 1 - p}``;
``raw`` is AutoIS's ``"1"`` (entailed) or ``"0"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from citegraph.caqa._types import CaqaSample
from citegraph.caqa.judge._evaluator import Judgement, LabelSet
from citegraph.caqa.judge._prompts import nli_texts, prompt_version
from citegraph.caqa.judge._rules import NotEntailedAs
from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.models import NLIModel, NLIPair
from citegraph.runs import error_fields

__all__ = ["NLIJudge"]


class NLIJudge:
    """An :class:`~citegraph.caqa.Evaluator` backed by an NLI model (module docstring).

    Args:
        nli: The NLI model.
        direction: ``"paper"`` (premise = claim) or ``"evidence"`` (premise = citation).
        label_set: ``"binary"`` (supportive / unsupported) or ``"four"`` (supportive /
            irrelevant, the other two categories never predicted).
        not_entailed_as: The label of a not-entailed pair; default ``unsupported`` for the
            binary set and ``irrelevant`` for the four-way set.

    A model failure (:class:`~citegraph.errors.ModelError`) fails the batch: every sample of it
    gets an error judgement. A missing dependency is raised.

    Raises:
        ConfigError: Unknown direction or label set, or a label that is not in the set.

    Example:
        >>> from citegraph.models import nli_model
        >>> NLIJudge(nli_model("lexical")).name
        'nli:lexical:caqa-table11-autois-v1'
    """

    def __init__(
        self,
        nli: NLIModel,
        *,
        direction: str = "paper",
        label_set: Literal["binary", "four"] = "binary",
        not_entailed_as: NotEntailedAs | None = None,
    ) -> None:
        if direction not in ("paper", "evidence"):
            raise ConfigError(f"unknown NLI direction {direction!r}; use 'paper' or 'evidence'")
        if label_set not in ("binary", "four"):
            raise ConfigError(f"NLIJudge label_set must be 'binary' or 'four', not {label_set!r}")
        default: NotEntailedAs = "unsupported" if label_set == "binary" else "irrelevant"
        other = not_entailed_as or default
        if (label_set, other) not in (("binary", "unsupported"), ("four", "irrelevant")):
            raise ConfigError(
                f"not_entailed_as={other!r} is not a label of the {label_set!r} set; use "
                "label_set='binary' with 'unsupported' or label_set='four' with 'irrelevant'"
            )
        self.nli = nli
        self.direction = direction
        self.not_entailed_as: NotEntailedAs = other
        self._label_set: LabelSet = label_set
        self.prompt_version = prompt_version("autois")

    @property
    def name(self) -> str:
        """``nli:<model>:<prompt version>``, plus ``:evidence`` for that direction and
        ``:not-entailed=irrelevant`` for the four-way mapping."""
        name = f"nli:{self.nli.name}:{self.prompt_version}"
        if self.direction != "paper":
            name += f":{self.direction}"
        if self.not_entailed_as != "unsupported":
            name += f":not-entailed={self.not_entailed_as}"
        return name

    @property
    def label_set(self) -> LabelSet:
        """``binary`` or ``four``."""
        return self._label_set

    def pair(self, sample: CaqaSample) -> NLIPair:
        """The premise / hypothesis pair of ``sample``."""
        premise, hypothesis = nli_texts(sample, direction=self.direction)
        return NLIPair(premise=premise, hypothesis=hypothesis)

    async def judge(self, samples: Sequence[CaqaSample]) -> list[Judgement]:
        """One judgement per sample, in order (one batched NLI call)."""
        if not samples:
            return []
        try:
            verdicts = await self.nli.entails([self.pair(s) for s in samples])
        except MissingDependency:
            raise
        except ModelError as exc:
            return [Judgement(label=None, **error_fields(exc)) for _ in samples]
        if len(verdicts) != len(samples):
            wrong = ModelError(f"{len(verdicts)} NLI verdicts for {len(samples)} samples")
            return [Judgement(label=None, **error_fields(wrong)) for _ in samples]
        other = self.not_entailed_as
        judgements = []
        for verdict in verdicts:
            scores = None
            if verdict.score is not None:
                scores = {"supportive": verdict.score, other: 1.0 - verdict.score}
            judgements.append(
                Judgement(
                    label="supportive" if verdict.entailed else other,
                    raw="1" if verdict.entailed else "0",
                    scores=scores,
                )
            )
        return judgements

    async def aclose(self) -> None:
        """Close the NLI model when it has an ``aclose`` or ``close`` method."""
        closer = getattr(self.nli, "aclose", None)
        if closer is not None:
            await closer()
            return
        closer = getattr(self.nli, "close", None)
        if closer is not None:
            closer()

    def __repr__(self) -> str:
        return f"NLIJudge({self.name!r})"
