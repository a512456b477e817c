"""What text-citation alignment and [NA] scoring share: facts as NLI hypotheses, one checked
NLI call, and the setup (mode, hypothesis style, NLI model) every per-answer result records and
every aggregate requires to be one."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, ModelError
from citegraph.kalma._rules import HypothesisStyle, Mode
from citegraph.kg import Triple
from citegraph.models import NLIModel, NLIPair, NLIVerdict


def render_fact(triple: Triple, style: HypothesisStyle = "relation_value") -> str:
    """The hypothesis text for an absent fact.

    Args:
        triple: The fact.
        style: ``"relation_value"`` -> ``"place of birth: Madrid"`` (the reference code);
            ``"natural"`` -> ``"Giovanni Simeone place of birth Madrid"`` (subject label, or id
            when the label is unknown); or a callable.

    Raises:
        ConfigError: On an unknown style name.
    """
    if callable(style):
        return style(triple)
    if style == "relation_value":
        return triple.as_text()
    if style == "natural":
        return f"{triple.subject_label or triple.subject} {triple.relation} {triple.value}"
    raise ConfigError(
        f"hypothesis style must be 'relation_value', 'natural' or a callable: {style!r}"
    )


class NLISetup(BaseModel):
    """The setup behind an NLI-based score: mode, hypothesis style and model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode
    hypothesis_style: str
    nli: str = Field(description="The NLI model's name.")


def common_setup(
    results: Sequence[NLISetup], mode: Mode | None, what: str
) -> tuple[Mode, str, str]:
    """``(mode, hypothesis style, NLI name)`` shared by ``results`` (and ``mode``, if given).

    Raises:
        ConfigError: the results mix modes, hypothesis styles or NLI models.
    """
    modes = {r.mode for r in results} | ({mode} if mode else set())
    setups = {(r.hypothesis_style, r.nli) for r in results}
    if len(modes) > 1 or len(setups) > 1:
        raise ConfigError(f"cannot aggregate mixed {what}: modes {modes}, setups {setups}")
    the_mode: Mode = next(iter(modes)) if modes else "paper"
    style, nli = next(iter(setups)) if setups else ("", "")
    return the_mode, style, nli


async def entail(nli: NLIModel, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
    """``nli``'s verdicts on ``pairs`` (no call for none).

    Raises:
        ModelError: the model gave another number of verdicts than pairs.
    """
    verdicts = await nli.entails(pairs) if pairs else []
    if len(verdicts) != len(pairs):
        raise ModelError(
            f"NLI model {nli.name} gave {len(verdicts)} verdicts for {len(pairs)} pairs"
        )
    return verdicts
