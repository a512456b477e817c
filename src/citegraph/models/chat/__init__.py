"""Chat models: the protocol and its records, the providers (OpenAI-compatible servers,
Hugging Face, the local GGUF model, mock), the response cache, token usage and dry runs."""

from citegraph.models.chat._cache import (
    CachedChatModel,
    chat_cache_key,
    forget_cached,
)
from citegraph.models.chat._dry_run import (
    DryRunChat,
)
from citegraph.models.chat._factory import (
    PROVIDERS,
    chat_model,
    default_generate_config,
    parse_model_spec,
)
from citegraph.models.chat._grammar_choice import (
    JudgeReplies,
    ResolvedReplies,
    choice_grammar,
    choice_reply_text,
    resolve_judge_replies,
)
from citegraph.models.chat._hf import (
    HFChat,
    load_causal_lm,
)
from citegraph.models.chat._local import (
    LOCAL_CHAT_NAME,
    LOCAL_GENERATE_DEFAULTS,
    converted_model_dir,
    local_chat,
    local_generate_config,
    locate_smollm2_gguf,
)
from citegraph.models.chat._mock import (
    DEFAULT_MOCK_OUTPUT,
    MockChat,
)
from citegraph.models.chat._openai import (
    OpenAICompatibleChat,
)
from citegraph.models.chat._record import (
    generation_record,
)
from citegraph.models.chat._types import (
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
from citegraph.models.chat._usage import (
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

__all__ = [
    "DEFAULT_MOCK_OUTPUT",
    "DRY_RUN_TOKENS",
    "LOCAL_CHAT_NAME",
    "LOCAL_GENERATE_DEFAULTS",
    "PROVIDERS",
    "CachedChatModel",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "DryRunChat",
    "GenerateConfig",
    "Generation",
    "GenerationProgress",
    "HFChat",
    "JudgeReplies",
    "MockChat",
    "OpenAICompatibleChat",
    "ProgressCallback",
    "ResolvedReplies",
    "Usage",
    "UsageMeter",
    "chat_cache_key",
    "chat_model",
    "choice_grammar",
    "choice_reply_text",
    "converted_model_dir",
    "current_meter",
    "default_generate_config",
    "dry_run_active",
    "dry_running",
    "estimate_tokens",
    "forget_cached",
    "generate_config_for",
    "generation_record",
    "load_causal_lm",
    "local_chat",
    "local_generate_config",
    "locate_smollm2_gguf",
    "metering",
    "parse_model_spec",
    "report_usage",
    "resolve_judge_replies",
    "usage_summary",
]
