"""Models behind small protocols, one package per role, each named by a ``provider/model`` spec.

The face holds the core a user needs; everything else is reachable from the role packages
(``citegraph.models.chat``, ``.nli``, ``.lm``, ``.rerank``, ``.embed``, ``.grammar``) and the
shared ones (``.hf``: loading, placement, batch plans; ``.server``: the HTTP client, body caps,
presets, :class:`Endpoint`).

======================================================  =========================================
name                                                    what it is
======================================================  =========================================
``chat_model``, ``nli_model``, ``nli3_model``,          the factories: a spec of the role (and a
``reranker_model``, ``causal_lm_scorer``,               :class:`ModelOptions`) in, a model out
``embedding_model``
``ModelOptions``, ``Endpoint``, ``Deadlines``           where local models run and how servers
                                                        are reached (one object for every
                                                        factory)
``NLIOptions``, ``NLI3Options``, ``RerankerOptions``,   the typed keyword options of each
``LMScorerOptions``, ``ServerOptions``                  factory's backends
``parse_spec``, ``parse_model_spec``, ``ModelSpec``,    the spec grammar (``provider/model``,
``SpecSpellingWarning``, ``spec_identity``,             cascades, wrappers, old spellings)
``specs_identity``
``ROLES``, ``Role``, ``Provider``,                      the registry of roles and providers, and
``register_provider``, ``custom_builder``,              what ``citegraph models`` lists
``catalog``, ``CatalogRow``, ``devices_here``,
``SERVED_PROVIDERS``
``ChatModel``, ``ChatMessage``, ``ChatRequest``,        the chat protocol and its records
``GenerateConfig``, ``Generation``,
``GenerationProgress``, ``ProgressCallback``,
``MockChat``, ``Grammar``, ``GrammarMode``
``NLIModel``, ``NLIPair``, ``NLIVerdict``,              the scorer protocols and their records
``NLI3Model``, ``NLIProbs``, ``LMScorer``,
``TokenScores``, ``EmbeddingModel``
``UsageMeter``, ``metering``, ``current_meter``,        token counts and dry runs
``usage_summary``, ``dry_running``
``default_response_cache``                              the shared response cache file
``normalize_text``, ``strip_accents``                   the text normalisation of the lexical
                                                        matchers
======================================================  =========================================
"""

from citegraph.io import Deadlines
from citegraph.models._backend_options import (
    LMScorerOptions,
    NLI3Options,
    NLIOptions,
    RerankerOptions,
    ServerOptions,
)
from citegraph.models._catalog import CatalogRow, catalog, devices_here
from citegraph.models._nli_protocol import NLIModel, NLIPair, NLIVerdict
from citegraph.models._normalize import normalize_text, strip_accents
from citegraph.models._options import SERVED_PROVIDERS, ModelOptions
from citegraph.models._providers import (
    ROLES,
    custom_builder,
    parse_spec,
    register_provider,
    spec_identity,
    specs_identity,
)
from citegraph.models._spec import ModelSpec, Provider, Role, SpecSpellingWarning
from citegraph.models.chat import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    GenerateConfig,
    Generation,
    GenerationProgress,
    MockChat,
    ProgressCallback,
    UsageMeter,
    chat_model,
    current_meter,
    dry_running,
    metering,
    parse_model_spec,
    usage_summary,
)
from citegraph.models.embed import EmbeddingModel, embedding_model
from citegraph.models.grammar import Grammar, GrammarMode
from citegraph.models.lm import LMScorer, TokenScores, causal_lm_scorer
from citegraph.models.nli import NLI3Model, NLIProbs, nli3_model, nli_model
from citegraph.models.rerank import reranker_model
from citegraph.models.server import Endpoint, default_response_cache

__all__ = [
    "ROLES",
    "SERVED_PROVIDERS",
    "CatalogRow",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "Deadlines",
    "EmbeddingModel",
    "Endpoint",
    "GenerateConfig",
    "Generation",
    "GenerationProgress",
    "Grammar",
    "GrammarMode",
    "LMScorer",
    "LMScorerOptions",
    "MockChat",
    "ModelOptions",
    "ModelSpec",
    "NLI3Model",
    "NLI3Options",
    "NLIModel",
    "NLIOptions",
    "NLIPair",
    "NLIProbs",
    "NLIVerdict",
    "ProgressCallback",
    "Provider",
    "RerankerOptions",
    "Role",
    "ServerOptions",
    "SpecSpellingWarning",
    "TokenScores",
    "UsageMeter",
    "catalog",
    "causal_lm_scorer",
    "chat_model",
    "current_meter",
    "custom_builder",
    "default_response_cache",
    "devices_here",
    "dry_running",
    "embedding_model",
    "metering",
    "nli3_model",
    "nli_model",
    "normalize_text",
    "parse_model_spec",
    "parse_spec",
    "register_provider",
    "reranker_model",
    "spec_identity",
    "specs_identity",
    "strip_accents",
    "usage_summary",
]
