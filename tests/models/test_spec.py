"""One spec grammar for every role (``provider/model``), the registry, and the old spellings."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import ConfigError
from citegraph.models import (
    ROLES,
    ModelSpec,
    Provider,
    SpecSpellingWarning,
    catalog,
    nli_model,
    parse_spec,
    register_provider,
    spec_identity,
)

#: (role, spec as written) -> (provider, model, today's spelling, the first release's spelling),
#: written out by hand from the module docstrings of the factories.
SPELLINGS = [
    (
        "chat",
        "vllm/meta-llama/Llama-3.1-8B-Instruct",
        "vllm",
        "meta-llama/Llama-3.1-8B-Instruct",
        "vllm/meta-llama/Llama-3.1-8B-Instruct",
        "vllm/meta-llama/Llama-3.1-8B-Instruct",
    ),
    (
        "chat",
        "ollama/llama3.1:8b",
        "ollama",
        "llama3.1:8b",
        "ollama/llama3.1:8b",
        "ollama/llama3.1:8b",
    ),
    ("chat", "local", "local", "", "local", "local"),
    (
        "nli",
        "hf/roberta-large-mnli",
        "hf",
        "roberta-large-mnli",
        "hf/roberta-large-mnli",
        "hf:roberta-large-mnli",
    ),
    (
        "nli",
        "hf:roberta-large-mnli",
        "hf",
        "roberta-large-mnli",
        "hf/roberta-large-mnli",
        "hf:roberta-large-mnli",
    ),
    ("nli", "t5:/models/true", "t5", "/models/true", "t5//models/true", "t5:/models/true"),
    ("nli", "lexical+hf/x/y", "hf", "x/y", "lexical+hf/x/y", "lexical+hf:x/y"),
    ("nli", "lexical+vllm/m", "vllm", "m", "lexical+vllm/m", "lexical+vllm/m"),
    ("nli3", "hf:m", "hf", "m", "hf/m", "hf:m"),
    ("lm", "hf/gpt2", "hf", "gpt2", "hf/gpt2", "hf:gpt2"),
    (
        "reranker",
        "tei/BAAI/bge-reranker-base",
        "tei",
        "BAAI/bge-reranker-base",
        "tei/BAAI/bge-reranker-base",
        "tei/BAAI/bge-reranker-base",
    ),
    ("embedding", "minilm", "minilm", "", "minilm", "minilm"),
    (
        "relevance",
        "embedding/minilm",
        "embedding",
        "minilm",
        "embedding/minilm",
        "embedding:minilm",
    ),
    (
        "relevance",
        "hf:cross-encoder/ms-marco",
        "hf",
        "cross-encoder/ms-marco",
        "hf/cross-encoder/ms-marco",
        "hf:cross-encoder/ms-marco",
    ),
    ("coherence", "hf/m", "hf", "m", "hf/m", "hf:m"),
    (
        "evaluator",
        "nli/t5:google/t5_xxl",
        "nli",
        "t5:google/t5_xxl",
        "nli/t5/google/t5_xxl",
        "nli/t5:google/t5_xxl",
    ),
    (
        "evaluator",
        "attrscore/hf/osunlp/x",
        "attrscore",
        "hf/osunlp/x",
        "attrscore/hf/osunlp/x",
        "attrscore/hf/osunlp/x",
    ),
    ("evaluator", "openai/gpt-4o", "openai", "gpt-4o", "openai/gpt-4o", "openai/gpt-4o"),
    (
        "evaluator",
        "nli/lexical+hf:m",
        "nli",
        "lexical+hf:m",
        "nli/lexical+hf/m",
        "nli/lexical+hf:m",
    ),
]


@pytest.mark.parametrize(("role", "text", "provider", "model", "today", "first"), SPELLINGS)
def test_every_role_parses_provider_slash_model(
    role: str, text: str, provider: str, model: str, today: str, first: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpecSpellingWarning)
        parsed = parse_spec(role, text)
    assert (parsed.provider, parsed.model) == (provider, model)
    assert parsed.canonical == today
    assert parsed.first_spelling == first
    assert spec_identity(role, today) == spec_identity(role, text) == first


def test_a_cascade_and_a_wrapper_keep_their_parts() -> None:
    cascade = parse_spec("nli", "lexical+t5/google/t5_xxl_true_nli_mixture")
    assert cascade.first == ModelSpec("nli", "lexical", "", "lexical")
    assert (cascade.provider, cascade.model) == ("t5", "google/t5_xxl_true_nli_mixture")
    wrapper = parse_spec("evaluator", "nli/lexical+hf/roberta-large-mnli")
    assert wrapper.inner is not None and wrapper.inner.role == "nli"
    assert wrapper.inner.first is not None and wrapper.inner.first.provider == "lexical"
    taken = parse_spec("evaluator", "mock")  # a chat spec as it is
    assert taken.inner is not None and (taken.inner.role, taken.provider) == ("chat", "mock")


def test_old_spellings_warn_once_naming_the_new_one_and_new_ones_do_not() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_spec("nli", "lexical+hf:roberta-large-mnli")
        parse_spec("nli", "lexical+hf/roberta-large-mnli")
        parse_spec("evaluator", "nli/t5:google/x")
    messages = [str(w.message) for w in caught if w.category is SpecSpellingWarning]
    assert messages == [
        "nli spec 'lexical+hf:roberta-large-mnli' uses the old spelling: write "
        "'lexical+hf/roberta-large-mnli'",
        "evaluator spec 'nli/t5:google/x' uses the old spelling: write 'nli/t5/google/x'",
    ]


@pytest.mark.parametrize("role", list(ROLES))
def test_one_error_lists_every_valid_form_of_the_role(role: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_spec(role, "nosuch/model")
    message = str(caught.value)
    assert "unknown model provider 'nosuch'" in message
    for provider in ROLES[role].providers:
        assert provider.form in message


@pytest.mark.parametrize(
    ("role", "text", "match"),
    [
        ("nli", "hf", "has no model name after 'hf/'"),
        ("nli", "hf:", "has no model name after 'hf/'"),
        ("chat", "local/x", "'local' takes no model name"),
        ("nli", "lexical+lexical", "a cascade has one first stage and one model"),
        ("chat", "", "empty"),
        ("nli", "lexical+", "unknown NLI spec 'lexical\\+' \\(no model after '\\+'\\)"),
        ("nli3", "t5/x", "unknown three-way NLI spec"),
        ("evaluator", "nli/", "has no model name after 'nli/'"),
        ("evaluator", "nli/bert", "unknown NLI spec 'bert'"),
        ("nosuchrole", "x", "unknown model role"),
    ],
)
def test_bad_specs_say_what_is_wrong(role: str, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_spec(role, text)


def test_both_spellings_build_the_same_backend(tiny_nli_classifier_dir: Path) -> None:
    pytest.importorskip("transformers")
    new = nli_model(f"lexical+hf/{tiny_nli_classifier_dir}", device="cpu")
    with pytest.warns(SpecSpellingWarning, match="write 'lexical\\+hf/"):
        old = nli_model(f"lexical+hf:{tiny_nli_classifier_dir}", device="cpu")
    assert new.name == old.name  # the backend's name is what caches and records key on
    assert "hf:" in new.name  # unchanged from before the new spelling


def test_a_registered_provider_parses_builds_and_is_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ROLES, "nli", ROLES["nli"])  # restored after the test
    built: list[tuple[str, dict[str, Any]]] = []

    def build(spec: ModelSpec, options: dict[str, Any]) -> Any:
        built.append((spec.model, options))
        return nli_model("lexical")

    register_provider("nli", Provider("mine", "required", "mine/<name>", "my NLI", "mine/x"), build)
    assert nli_model("mine/x", batch_size=4).name == "lexical"
    assert built == [("x", {"batch_size": 4})]
    assert "mine" in [row.provider for row in catalog("nli")]
    with pytest.raises(ConfigError, match="already has a provider 'mine'"):
        register_provider("nli", Provider("mine", "none", "mine", "", "mine"), build)


def test_the_conner_default_keeps_the_run_id_of_the_old_spelling() -> None:
    from citegraph.conner.score import ConnerScoreConfig

    default = ConnerScoreConfig.model_fields["reranker"].default
    assert default == "embedding/minilm"
    assert spec_identity("relevance", default) == "embedding:minilm"  # what runs recorded


def test_citegraph_models_lists_every_role_and_what_is_usable() -> None:
    result = CliRunner().invoke(main, ["models", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert set(payload["roles"]) == set(ROLES)
    assert "cpu" in payload["devices"]
    rows = {(r["role"], r["provider"]): r for r in payload["providers"]}
    assert rows[("nli", "lexical")]["usable"] is True and rows[("nli", "lexical")]["missing"] == []
    assert rows[("nli", "hf")]["extra"] == "citegraph[nli]"
    assert rows[("nli", "hf")]["old_spelling"] == "hf:<hub id or path>"
    table = CliRunner().invoke(main, ["models", "--role", "reranker"], env={"COLUMNS": "200"})
    assert table.exit_code == 0
    assert "tei/<model>" in table.output and "nli/<nli spec>" not in table.output
