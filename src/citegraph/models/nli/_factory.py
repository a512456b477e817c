"""Build an NLI backend from a short spec string (CLI flags and run configs use these).

========================  ===============================================================
spec                      backend
========================  ===============================================================
``lexical``               :class:`LexicalNLI` (no model)
``hf/<path-or-hub-id>``   :class:`HFClassifierNLI` (sequence-classification cross-encoder)
``t5/<path-or-hub-id>``   :class:`TrueT5NLI` (TRUE-style seq2seq, answers "1")
``lexical+hf/<...>``      :class:`CascadeNLI`: lexical first, the HF model for the rest
``lexical+t5/<...>``      :class:`CascadeNLI`: lexical first, the T5 model for the rest
``vllm/<model>``          :class:`ServerNLI`: a served NLI cross-encoder (vLLM ``/classify``)
``lexical+vllm/<model>``  :class:`CascadeNLI`: lexical first, the served model for the rest
========================  ===============================================================

The spellings of earlier releases (``hf:<path>``, ``t5:<path>``, ``lexical+hf:<path>``) still
work, with a :class:`~citegraph.models.SpecSpellingWarning` naming the new one.
"""

from __future__ import annotations

from typing import Any, Unpack, cast

from citegraph.models._backend_options import NLIOptions, build_checked, build_served
from citegraph.models._nli_protocol import NLIModel
from citegraph.models._options import ModelOptions, backend_options
from citegraph.models._providers import custom_builder, parse_spec
from citegraph.models._spec import ModelSpec
from citegraph.models.hf import HFBackend
from citegraph.models.nli._cascade import CascadeNLI
from citegraph.models.nli._hf import HFClassifierNLI
from citegraph.models.nli._lexical import LexicalNLI
from citegraph.models.nli._t5 import TrueT5NLI

_MODEL_KINDS: dict[str, type[HFBackend]] = {
    "hf": HFClassifierNLI,
    "t5": TrueT5NLI,
}
_LEXICAL_OPTIONS = frozenset({"year_only_dates"})


def _model(spec: ModelSpec, options: dict[str, Any]) -> NLIModel:
    if spec.provider == "vllm":
        from citegraph.models.nli._server import ServerNLI

        return build_served(spec.text, ServerNLI, options, spec.model, what="NLI")
    if spec.provider == "lexical":
        return build_checked(spec.text, LexicalNLI, options)
    return build_checked(spec.text, _MODEL_KINDS[spec.provider], options, spec.model)


def nli_model(
    spec: str, options: ModelOptions | None = None, **backend: Unpack[NLIOptions]
) -> NLIModel:
    """Build the NLI backend that ``spec`` names (see the module table).

    Args:
        spec: ``"lexical"``, ``"hf/<path-or-hub-id>"``, ``"t5/<path-or-hub-id>"``,
            ``"vllm/<model>"``, or a cascade ``"lexical+<one of those>"``.
        options: Where a local model runs and how a server is reached (a served model gets
            the endpoint, a local one the device and dtype).
        **backend: Keyword options of the backend (e.g. ``batch_size=32``, ``device="cuda"``,
            ``threshold=0.5``). In a cascade, ``year_only_dates`` goes to the lexical stage and
            the rest to the model.

    Returns:
        An object satisfying :class:`~citegraph.models.NLIModel`.

    Raises:
        ConfigError: On an unknown spec or option.
        ModelError: If the model cannot be loaded (see the backends).
        MissingDependency: If a neural backend's packages are not installed.

    Example:
        >>> nli_model("lexical").name
        'lexical'
    """
    parsed = parse_spec("nli", spec)
    given = backend_options(options, parsed, cast(dict[str, Any], backend))
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        return cast(NLIModel, build(parsed, given))
    if parsed.first is None:
        return _model(parsed, given)
    lexical_options = {k: v for k, v in given.items() if k in _LEXICAL_OPTIONS}
    model_options = {k: v for k, v in given.items() if k not in _LEXICAL_OPTIONS}
    return CascadeNLI(_model(parsed, model_options), first=LexicalNLI(**lexical_options))
