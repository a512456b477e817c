"""``open_kg``: the ``--kg`` specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.errors import ConfigError
from citegraph.kg import OxigraphKG, SparqlEndpointKG, SparqlRdfKG, open_kg


def test_embedded_biokalma(data_dir: Path, tmp_path: Path) -> None:
    opened = open_kg("biokalma", data_dir=data_dir, cache_dir=tmp_path)
    assert isinstance(opened.kg, OxigraphKG)
    assert len(opened.identity) == 64  # SHA-256 of the source files


def test_wikidata_needs_a_contact(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CITEGRAPH_CONTACT", raising=False)
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path))
    with pytest.raises(ConfigError, match="--contact"):
        open_kg("wikidata")
    opened = open_kg("sparql+https://query.wikidata.org/sparql", contact="me@example.org")
    assert isinstance(opened.kg, SparqlEndpointKG)
    assert opened.kg.client.config.max_concurrency == 1
    assert "me@example.org" in opened.kg.client.config.user_agent
    assert opened.identity == "https://query.wikidata.org/sparql"


def test_other_endpoint_and_bad_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path))
    opened = open_kg("sparql+http://localhost:8890/sparql")
    # Any endpoint but Wikidata's and QLever's holds your own KG, read as an RDF file is.
    assert isinstance(opened.kg, SparqlRdfKG)
    assert opened.kg.client.config.endpoint == "http://localhost:8890/sparql"
    assert opened.identity == "http://localhost:8890/sparql"
    # A Virtuoso hosting a Wikidata dump keeps the Wikidata-shaped reader.
    shaped = open_kg("wikidata+sparql+http://localhost:8890/sparql")
    assert isinstance(shaped.kg, SparqlEndpointKG)
    assert shaped.kg.client.config.endpoint == "http://localhost:8890/sparql"
    assert shaped.kg.relation_names == {}
    with pytest.raises(ConfigError, match="unknown KG"):
        open_kg("freebase")
