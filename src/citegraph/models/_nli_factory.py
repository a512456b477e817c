"""Build an NLI backend from a short spec string (CLI flags and run configs use these).

========================  ===============================================================
spec                      backend
========================  ===============================================================
``lexical``               :class:`LexicalNLI` (no model)
``hf:<path-or-hub-id>``   :class:`HFClassifierNLI` (sequence-classification cross-encoder)
``t5:<path-or-hub-id>``   :class:`TrueT5NLI` (TRUE-style seq2seq, answers "1")
``lexical+hf:<...>``      :class:`CascadeNLI`: lexical first, the HF model for the rest
``lexical+t5:<...>``      :class:`CascadeNLI`: lexical first, the T5 model for the rest
``vllm/<model>``          :class:`ServerNLI`: a served NLI cross-encoder (vLLM ``/classify``)
``lexical+vllm/<model>``  :class:`CascadeNLI`: lexical first, the served model for the rest
========================  ===============================================================
"""

from __future__ import annotations

from typing import Any, Unpack, cast

from citegraph.errors import ConfigError
from citegraph.models._backend_options import NLIOptions, build_checked
from citegraph.models._hf_common import HFBackend
from citegraph.models._nli_cascade import CascadeNLI
from citegraph.models._nli_hf import HFClassifierNLI
from citegraph.models._nli_lexical import LexicalNLI
from citegraph.models._nli_protocol import NLIModel
from citegraph.models._nli_t5 import TrueT5NLI

_MODEL_KINDS: dict[str, type[HFBackend]] = {
    "hf": HFClassifierNLI,
    "t5": TrueT5NLI,
}
_LEXICAL_OPTIONS = frozenset({"year_only_dates"})
_FORMS = (
    "'lexical', 'hf:<path>', 't5:<path>', 'vllm/<model>', 'lexical+hf:<path>', "
    "'lexical+t5:<path>', 'lexical+vllm/<model>'"
)


def _model(spec: str, full_spec: str, options: dict[str, Any]) -> NLIModel:
    provider, slash, name = spec.partition("/")
    if slash and provider == "vllm":
        from citegraph.models._nli_server import ServerNLI

        if not name.strip():
            raise ConfigError(f"NLI spec {full_spec!r} has no model name after 'vllm/'")
        return build_checked(full_spec, ServerNLI, options, name.strip())
    kind, sep, path = spec.partition(":")
    cls = _MODEL_KINDS.get(kind) if sep else None
    if cls is None:
        raise ConfigError(f"unknown NLI spec {full_spec!r}; expected one of {_FORMS}")
    if not path.strip():
        raise ConfigError(f"NLI spec {full_spec!r} has no model path or hub id after '{kind}:'")
    return build_checked(full_spec, cls, options, path.strip())


def nli_model(spec: str, **options: Unpack[NLIOptions]) -> NLIModel:
    """Build the NLI backend that ``spec`` names (see the module table).

    Args:
        spec: ``"lexical"``, ``"hf:<path-or-hub-id>"``, ``"t5:<path-or-hub-id>"``,
            ``"lexical+hf:<...>"`` or ``"lexical+t5:<...>"``.
        **options: Keyword options of the backend (e.g. ``batch_size=32``, ``device="cuda"``,
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
    spec = spec.strip()
    given = cast(dict[str, Any], options)
    if spec == "lexical":
        return build_checked(spec, LexicalNLI, given)
    if spec.startswith("lexical+"):
        lexical_options = {k: v for k, v in given.items() if k in _LEXICAL_OPTIONS}
        model_options = {k: v for k, v in given.items() if k not in _LEXICAL_OPTIONS}
        model = _model(spec.removeprefix("lexical+"), spec, model_options)
        return CascadeNLI(model, first=LexicalNLI(**lexical_options))
    return _model(spec, spec, given)
