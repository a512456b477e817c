"""The KG options in the kalma configs: part of a run's identity only when given (label
predicates, prefixes), never for the cache settings, and handed to ``open_kg`` whole."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma import KalmaRunConfig, KalmaScoreConfig
from citegraph.kg import KGOptions

GEO = "https://data.example.net/geo#"
NEW_FIELDS = {"label_predicates", "prefixes", "kg_cache", "kg_cache_max_age"}
#: KalmaScoreConfig's dump before the KG options existed (a run's identity then).
SCORE_DUMP = {
    "mode": "paper",
    "parser": None,
    "nli": "lexical",
    "nli_base_url": None,
    "hypothesis": "relation_value",
    "normalize": False,
    "bootstrap": 0,
    "kg": "kg.ttl",
    "batch_size": 32,
    "seed": 0,
}


def test_defaults_leave_existing_identities_unchanged() -> None:
    assert KalmaScoreConfig(kg="kg.ttl").model_dump(mode="json") == SCORE_DUMP
    assert KalmaScoreConfig(kg="kg.ttl", kg_cache="persist").model_dump(mode="json") == SCORE_DUMP
    assert not NEW_FIELDS & set(KalmaRunConfig().identity())
    assert not NEW_FIELDS & set(KalmaRunConfig(kg_cache="off").identity())


def test_given_reading_options_are_identity_and_cache_settings_never() -> None:
    config = KalmaScoreConfig(
        kg="kg.ttl",
        prefixes={"geo": GEO},
        label_predicates=("http://example.org/officialName",),
        kg_cache="persist",
        kg_cache_max_age=60,
    )
    assert config.model_dump(mode="json") == SCORE_DUMP | {
        "prefixes": {"geo": GEO},
        "label_predicates": ["http://example.org/officialName"],
    }
    run = KalmaRunConfig(retrieval="ner", kg="kg.ttl", prefixes={"geo": GEO}, kg_cache="persist")
    assert run.identity()["prefixes"] == {"geo": GEO}
    assert "kg_cache" not in run.identity()


def test_the_configs_hand_over_every_option() -> None:
    config = KalmaScoreConfig(kg="kg.ttl", prefixes={"geo": GEO}, kg_cache="persist")
    assert config.kg_options() == KGOptions(prefixes={"geo": GEO}, kg_cache="persist")
    # --no-cache turns the KG's cache off
    assert config.kg_options(cache=False) == KGOptions(prefixes={"geo": GEO}, kg_cache="off")


def test_reading_options_need_the_kg_they_read() -> None:
    with pytest.raises(ConfigError, match="give it with --kg"):
        KalmaScoreConfig(prefixes={"geo": GEO})
    with pytest.raises(ConfigError, match="give --retrieval ner"):
        KalmaRunConfig(label_predicates=("http://example.org/name",))
