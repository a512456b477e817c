"""Models behind small protocols: chat generation (OpenAI-compatible servers, local transformers
models, the embedded SmolLM2 default, a scripted mock) and NLI (entailment) scorers."""

from citegraph.io import Deadlines, server_deadlines
from citegraph.models._backend_options import (
    LMScorerOptions,
    NLI3Options,
    NLIOptions,
    RerankerOptions,
    ServerOptions,
)
from citegraph.models._chat_cache import (
    CachedChatModel,
    chat_cache_key,
    default_response_cache,
    forget_cached,
)
from citegraph.models._chat_dry_run import DryRunChat
from citegraph.models._chat_factory import (
    PROVIDERS,
    chat_model,
    default_generate_config,
    parse_model_spec,
)
from citegraph.models._chat_hf import HFChat, load_causal_lm
from citegraph.models._chat_local import (
    LOCAL_CHAT_NAME,
    LOCAL_GENERATE_DEFAULTS,
    converted_model_dir,
    local_chat,
    local_generate_config,
    locate_smollm2_gguf,
)
from citegraph.models._chat_mock import DEFAULT_MOCK_OUTPUT, MockChat
from citegraph.models._chat_openai import OPENAI_URL, PRESETS, OpenAICompatibleChat, ProviderPreset
from citegraph.models._chat_types import (
    MAX_REPLY_CHARS,
    ChatMessage,
    ChatModel,
    ChatRequest,
    GenerateConfig,
    Generation,
    GenerationProgress,
    ProgressCallback,
    Usage,
    generate_config_for,
)
from citegraph.models._chat_usage import (
    DRY_RUN_TOKENS,
    UsageMeter,
    current_meter,
    dry_run_active,
    dry_running,
    estimate_tokens,
    metering,
    report_usage,
    usage_summary,
)
from citegraph.models._embeddings import (
    MINILM_NAME,
    EmbeddingModel,
    HFEmbeddingModel,
    embedding_model,
    locate_minilm,
)
from citegraph.models._grammar import (
    GRAMMAR_MODES,
    Grammar,
    GrammarMode,
    GrammarUpdate,
    Steering,
    grammar_mode_of,
)
from citegraph.models._grammar_choice import (
    JudgeReplies,
    ResolvedReplies,
    choice_grammar,
    choice_reply_text,
    resolve_judge_replies,
)
from citegraph.models._grammar_llg import grammar_accepts
from citegraph.models._hf_common import (
    LoadedModel,
    check_batching,
    effective_max_length,
    load_hf_model,
    load_pretrained,
    quiet_loading,
    require_transformers,
    resolve_model_path,
)
from citegraph.models._lm_scorer import CausalLMScorer, causal_lm_scorer
from citegraph.models._lm_scores import LMScorer, TokenScores
from citegraph.models._lm_server import ServerLMScorer
from citegraph.models._nli3 import (
    CONTRADICTION_LABELS,
    HFNLI3,
    NEUTRAL_LABELS,
    NLI3_LABELS,
    LexicalNLI3,
    NLI3Model,
    NLIProbs,
    find_three_way_indices,
    nli3_model,
)
from citegraph.models._nli_cascade import CascadeNLI
from citegraph.models._nli_factory import nli_model
from citegraph.models._nli_hf import ENTAILMENT_LABELS, HFClassifierNLI, find_entailment_index
from citegraph.models._nli_lexical import LexicalNLI, value_from_hypothesis, value_in_text
from citegraph.models._nli_protocol import NLIModel, NLIPair, NLIVerdict
from citegraph.models._nli_server import ServerNLI, ServerNLI3
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
from citegraph.models._placement import (
    DEVICE_HELP,
    DTYPE_HELP,
    Placement,
    free_memory,
    load_placed,
    resolve_device,
    resolve_dtype,
)
from citegraph.models._rerank_server import ServerReranker
from citegraph.models._reranker import CrossEncoderReranker, HFTextScorer, reranker_model
from citegraph.models._server_body import DEFAULT_MAX_RESPONSE_BYTES
from citegraph.models._server_items import SERVED_PREFIXES, served_options

__all__ = [
    "CONTRADICTION_LABELS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MOCK_OUTPUT",
    "DEVICE_HELP",
    "DRY_RUN_TOKENS",
    "DTYPE_HELP",
    "ENTAILMENT_LABELS",
    "GRAMMAR_MODES",
    "HFNLI3",
    "LOCAL_CHAT_NAME",
    "LOCAL_GENERATE_DEFAULTS",
    "MAX_REPLY_CHARS",
    "MINILM_NAME",
    "NEUTRAL_LABELS",
    "NLI3_LABELS",
    "OPENAI_URL",
    "PRESETS",
    "PROVIDERS",
    "SERVED_PREFIXES",
    "TRUE_TEMPLATE",
    "CachedChatModel",
    "CascadeNLI",
    "CausalLMScorer",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "CrossEncoderReranker",
    "DateMention",
    "Deadlines",
    "DryRunChat",
    "EmbeddingModel",
    "GenerateConfig",
    "Generation",
    "GenerationProgress",
    "Grammar",
    "GrammarMode",
    "GrammarUpdate",
    "HFChat",
    "HFClassifierNLI",
    "HFEmbeddingModel",
    "HFTextScorer",
    "JudgeReplies",
    "LMScorer",
    "LMScorerOptions",
    "LexicalNLI",
    "LexicalNLI3",
    "LoadedModel",
    "MockChat",
    "NLI3Model",
    "NLI3Options",
    "NLIModel",
    "NLIOptions",
    "NLIPair",
    "NLIProbs",
    "NLIVerdict",
    "OpenAICompatibleChat",
    "Placement",
    "ProgressCallback",
    "ProviderPreset",
    "RerankerOptions",
    "ResolvedReplies",
    "ServerLMScorer",
    "ServerNLI",
    "ServerNLI3",
    "ServerOptions",
    "ServerReranker",
    "Steering",
    "TokenScores",
    "TrueT5NLI",
    "Usage",
    "UsageMeter",
    "causal_lm_scorer",
    "chat_cache_key",
    "chat_model",
    "check_batching",
    "choice_grammar",
    "choice_reply_text",
    "contains_phrase",
    "converted_model_dir",
    "current_meter",
    "date_entails",
    "default_generate_config",
    "default_response_cache",
    "dry_run_active",
    "dry_running",
    "effective_max_length",
    "embedding_model",
    "estimate_tokens",
    "find_dates",
    "find_entailment_index",
    "find_three_way_indices",
    "forget_cached",
    "free_memory",
    "generate_config_for",
    "grammar_accepts",
    "grammar_mode_of",
    "load_causal_lm",
    "load_hf_model",
    "load_placed",
    "load_pretrained",
    "local_chat",
    "local_generate_config",
    "locate_minilm",
    "locate_smollm2_gguf",
    "metering",
    "nli3_model",
    "nli_model",
    "normalize_text",
    "parse_date",
    "parse_model_spec",
    "quiet_loading",
    "report_usage",
    "require_transformers",
    "reranker_model",
    "resolve_device",
    "resolve_dtype",
    "resolve_judge_replies",
    "resolve_model_path",
    "served_options",
    "server_deadlines",
    "strip_accents",
    "usage_summary",
    "value_from_hypothesis",
    "value_in_text",
]
