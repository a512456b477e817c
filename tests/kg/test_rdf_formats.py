"""One small KG written by hand in every RDF format ``--kg`` reads, giving the same answers.

The KG: Warsaw (``rdfs:label``) lies on the Vistula (``skos:prefLabel``) and has a population:
2 facts, ``located on river`` (the predicate's ``rdfs:label``) and ``population`` (its IRI's
last segment). The N-Quads and TriG files put the facts in a named graph (merged).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.kg import KGOptions, OxigraphKG, load_rdf_kg, open_kg

GEO = "https://data.example.net/geo#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"

TURTLE = f"""\
@prefix geo: <{GEO}> .
@prefix rdfs: <{RDFS}> .
@prefix skos: <{SKOS}> .
geo:Warsaw rdfs:label "Warsaw" ; geo:river geo:Vistula ; geo:population "1860000" .
geo:Vistula skos:prefLabel "Vistula" .
geo:river rdfs:label "located on river" .
"""

NTRIPLES = f"""\
<{GEO}Warsaw> <{RDFS}label> "Warsaw" .
<{GEO}Warsaw> <{GEO}river> <{GEO}Vistula> .
<{GEO}Warsaw> <{GEO}population> "1860000" .
<{GEO}Vistula> <{SKOS}prefLabel> "Vistula" .
<{GEO}river> <{RDFS}label> "located on river" .
"""

NQUADS = f"""\
<{GEO}Warsaw> <{RDFS}label> "Warsaw" <{GEO}labels> .
<{GEO}Warsaw> <{GEO}river> <{GEO}Vistula> <{GEO}facts> .
<{GEO}Warsaw> <{GEO}population> "1860000" <{GEO}facts> .
<{GEO}Vistula> <{SKOS}prefLabel> "Vistula" .
<{GEO}river> <{RDFS}label> "located on river" <{GEO}labels> .
"""

TRIG = f"""\
@prefix geo: <{GEO}> .
@prefix rdfs: <{RDFS}> .
@prefix skos: <{SKOS}> .
geo:facts {{ geo:Warsaw geo:river geo:Vistula ; geo:population "1860000" . }}
geo:Warsaw rdfs:label "Warsaw" .
geo:Vistula skos:prefLabel "Vistula" .
geo:river rdfs:label "located on river" .
"""

RDF_XML = f"""\
<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:rdfs="{RDFS}" xmlns:skos="{SKOS}" xmlns:geo="{GEO}">
  <rdf:Description rdf:about="{GEO}Warsaw">
    <rdfs:label>Warsaw</rdfs:label>
    <geo:river rdf:resource="{GEO}Vistula"/>
    <geo:population>1860000</geo:population>
  </rdf:Description>
  <rdf:Description rdf:about="{GEO}Vistula">
    <skos:prefLabel>Vistula</skos:prefLabel>
  </rdf:Description>
  <rdf:Description rdf:about="{GEO}river">
    <rdfs:label>located on river</rdfs:label>
  </rdf:Description>
</rdf:RDF>
"""

JSON_LD = f"""\
{{
  "@context": {{"geo": "{GEO}", "rdfs": "{RDFS}", "skos": "{SKOS}"}},
  "@graph": [
    {{"@id": "geo:Warsaw", "rdfs:label": "Warsaw", "geo:river": {{"@id": "geo:Vistula"}},
      "geo:population": "1860000"}},
    {{"@id": "geo:Vistula", "skos:prefLabel": "Vistula"}},
    {{"@id": "geo:river", "rdfs:label": "located on river"}}
  ]
}}
"""

#: file name -> (text, whether the geo: prefix is read from it: pyoxigraph reports Turtle's,
#: TriG's and JSON-LD's, not RDF/XML's xmlns)
FILES = {
    "kg.ttl": (TURTLE, True),
    "kg.nt": (NTRIPLES, False),
    "kg.nq": (NQUADS, False),
    "kg.trig": (TRIG, True),
    "kg.rdf": (RDF_XML, False),
    "kg.xml": (RDF_XML, False),
    "kg.owl": (RDF_XML, False),
    "KG.JSONLD": (JSON_LD, True),  # extensions in any case
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_format_reads_the_same_kg(name: str, tmp_path: Path) -> None:
    text, declares = FILES[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    opened = open_kg(str(path), cache_dir=tmp_path / "cache")
    kg = opened.kg
    assert isinstance(kg, OxigraphKG)
    assert len(kg) == 2
    facts = asyncio.run(kg.facts(GEO + "Warsaw"))
    assert [(t.relation, t.value, t.value_id) for t in facts] == [
        ("located on river", "Vistula", GEO + "Vistula"),
        ("population", "1860000", None),
    ]
    found = asyncio.run(kg.find_entities("VISTULA", case_sensitive=False))
    assert [(e.id, e.name) for e in found] == [(GEO + "Vistula", "Vistula")]
    assert kg.resolve_id("geo:Warsaw") == (GEO + "Warsaw" if declares else None)
    # --prefix gives the formats that declare none the same CURIEs
    geo = KGOptions(prefixes={"geo": GEO})
    with_prefix = open_kg(str(path), cache_dir=tmp_path / "cache", options=geo)
    assert isinstance(with_prefix.kg, OxigraphKG)
    assert with_prefix.kg.resolve_id("geo:Warsaw") == GEO + "Warsaw"
    assert with_prefix.kg.short_id_of(GEO + "Warsaw") == "geo:Warsaw"


def test_unknown_extensions_are_refused_listing_the_accepted_ones(tmp_path: Path) -> None:
    path = tmp_path / "kg.json"
    path.write_text(JSON_LD, encoding="utf-8")
    accepted = ".nt, .ttl, .nq, .trig, .rdf, .xml, .owl, .jsonld"
    with pytest.raises(ConfigError, match=f"paths to RDF files \\({accepted}\\)"):
        open_kg(str(path))
    with pytest.raises(DataError, match=f"unknown RDF format \\(use {accepted}\\)"):
        load_rdf_kg([path], use_cache=False)


def test_a_missing_kg_file_is_named_as_missing(tmp_path: Path) -> None:
    missing = tmp_path / "kgg.ttl"
    with pytest.raises(DataNotFoundError) as caught:
        open_kg(str(missing), cache_dir=tmp_path / "cache")
    assert (
        str(caught.value) == f"{missing}: the KG file does not exist (check the path given to --kg)"
    )
    assert "data directory" not in str(caught.value)
