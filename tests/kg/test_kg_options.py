"""``open_kg`` with :class:`KGOptions`: prefixes for your own KG over SPARQL and over the file,
the checks on each option, and the SPARQL answer cache (the run's only, by default).

The KG served: ``geo:Warsaw`` (``rdfs:label "Warsaw"``) lies on ``geo:Vistula``
(``skos:prefLabel "Vistula"``); the file declares ``@prefix geo:``, the endpoint declares
nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from _sparql_server import SparqlServer, serving
from citegraph.errors import ConfigError
from citegraph.kg import KGOptions, OxigraphKG, SparqlRdfKG, kg_cache_note, open_kg

GEO = "https://data.example.net/geo#"
TURTLE = f"""\
@prefix geo: <{GEO}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
geo:river rdfs:label "located on river" .
geo:Warsaw rdfs:label "Warsaw" ; geo:river geo:Vistula .
geo:Vistula skos:prefLabel "Vistula" .
"""
RIVER = ox.NamedNode(GEO + "river")
WARSAW = ox.NamedNode(GEO + "Warsaw")


@pytest.fixture
def kg_file(tmp_path: Path) -> Path:
    path = tmp_path / "geo.ttl"
    path.write_text(TURTLE, encoding="utf-8")
    return path


@pytest.fixture
def endpoint(kg_file: Path) -> Iterator[SparqlServer]:
    with serving(kg_file) as server:
        yield server


@pytest.fixture(autouse=True)
def _cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))


def _river_to(server: SparqlServer, river: str) -> None:
    """Change the served KG: Warsaw now lies on ``river``."""
    store = server.store
    for quad in list(store.quads_for_pattern(WARSAW, RIVER, None)):
        store.remove(quad)
    store.add(ox.Quad(WARSAW, RIVER, ox.NamedNode(GEO + river)))


def _rivers(kg: Any) -> list[str]:
    """Warsaw's rivers, read twice (the second read may come from the cache)."""

    async def read() -> list[str]:
        await kg.facts(GEO + "Warsaw")
        return [t.value_id.removeprefix(GEO) for t in await kg.facts(GEO + "Warsaw")]

    return asyncio.run(read())


def test_prefixes_give_curies_over_sparql_as_over_the_file(
    endpoint: SparqlServer, kg_file: Path, tmp_path: Path
) -> None:
    geo = KGOptions(prefixes={"geo": GEO})
    remote = open_kg("sparql+" + endpoint.url, options=geo).kg
    local = open_kg(str(kg_file), cache_dir=tmp_path / "kg").kg
    assert isinstance(remote, SparqlRdfKG) and isinstance(local, OxigraphKG)
    both: list[SparqlRdfKG | OxigraphKG] = [remote, local]
    for kg in both:
        assert kg.resolve_id("geo:Warsaw") == GEO + "Warsaw"
        assert kg.short_id_of(GEO + "Warsaw") == "geo:Warsaw"
        [found] = asyncio.run(kg.find_entities("warsaw", case_sensitive=False))
        assert (found.id, found.short_id) == (GEO + "Warsaw", "geo:Warsaw")
    # Without --prefix the endpoint knows no geo: (it declares no prefixes).
    bare = open_kg("sparql+" + endpoint.url).kg
    assert isinstance(bare, SparqlRdfKG)
    assert bare.resolve_id("geo:Warsaw") is None
    assert bare.short_id_of(GEO + "Warsaw") == GEO + "Warsaw"


def test_a_prefix_adds_to_the_files_own(kg_file: Path, tmp_path: Path) -> None:
    places = KGOptions(prefixes={"places": GEO, "wiki": "https://en.wikipedia.org/wiki/"})
    kg = open_kg(str(kg_file), cache_dir=tmp_path / "kg", options=places).kg
    assert isinstance(kg, OxigraphKG)
    assert kg.prefixes["geo"] == GEO and kg.prefixes["wiki"] == "https://en.wikipedia.org/wiki/"
    assert kg.resolve_id("places:Warsaw") == kg.resolve_id("geo:Warsaw") == GEO + "Warsaw"
    clash = KGOptions(prefixes={"geo": "https://elsewhere.example/geo#"})
    with pytest.raises(ConfigError, match="the KG's files declare geo: as"):
        open_kg(str(kg_file), cache_dir=tmp_path / "kg", options=clash)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"prefixes": {"1geo": GEO}}, "'1geo' is not a prefix name"),
        ({"prefixes": {"geo": "data.example.net/geo#"}}, "is not an IRI"),
        ({"prefixes": {"geo": "https://x/a b#"}}, "is not an IRI"),
        ({"label_predicates": ("skos:prefLabel",)}, "--label-predicate 'skos:prefLabel' is not"),
        ({"kg_cache_max_age": 60}, "--kg-cache-max-age needs --kg-cache persist"),
    ],
)
def test_bad_options_are_refused_naming_the_option(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KGOptions(**fields)


@pytest.mark.parametrize("spec", ["biokalma", "codex-s", "wikidata+sparql+http://localhost:1/s"])
def test_reading_options_are_for_your_own_kg_only(spec: str) -> None:
    with pytest.raises(ConfigError, match="read your own KG"):
        open_kg(spec, options=KGOptions(prefixes={"geo": GEO}))


def test_answers_are_cached_for_the_run_only_by_default(endpoint: SparqlServer) -> None:
    spec = "sparql+" + endpoint.url
    first = open_kg(spec).kg
    assert _rivers(first) == ["Vistula"]
    note = kg_cache_note(first)
    assert note is not None
    assert (note["mode"], note["hits"], note["requests"]) == ("run", 1, 1)
    _river_to(endpoint, "Oder")
    # The next run (a KG opened again) reads the KG as it is now.
    assert _rivers(open_kg(spec).kg) == ["Oder"]
    off = open_kg(spec, options=KGOptions(kg_cache="off")).kg
    assert _rivers(off) == ["Oder"]
    assert kg_cache_note(off) == note | {"mode": "off", "hits": 0, "requests": 2}


def test_persisting_answers_is_explicit_and_expires(endpoint: SparqlServer, tmp_path: Path) -> None:
    spec = "sparql+" + endpoint.url
    persist = KGOptions(kg_cache="persist", kg_cache_max_age=3600)
    assert _rivers(open_kg(spec, options=persist).kg) == ["Vistula"]
    _river_to(endpoint, "Oder")
    kept = open_kg(spec, options=persist).kg
    assert _rivers(kept) == ["Vistula"]  # answers of the earlier run, younger than an hour
    note = kg_cache_note(kept)
    assert note is not None
    assert note["mode"] == "persist" and (note["hits"], note["requests"]) == (2, 0)
    assert (note["max_age_s"], note["path"]) == (3600, str(tmp_path / "cache" / "sparql.sqlite"))
    # answers older than the max age are asked again
    time.sleep(0.05)
    brief = KGOptions(kg_cache="persist", kg_cache_max_age=0.01)
    assert _rivers(open_kg(spec, options=brief).kg) == ["Oder"]
    _river_to(endpoint, "Vistula")
    # --no-cache (kg_options(cache=False)) bypasses the persisted answers too
    assert _rivers(open_kg(spec, options=persist.kg_options(cache=False)).kg) == ["Vistula"]
    # and without the option nothing persisted is read
    assert _rivers(open_kg(spec).kg) == ["Vistula"]
    assert kg_cache_note(open_kg(str(tmp_path / "geo.ttl")).kg) is None  # embedded: no answers
