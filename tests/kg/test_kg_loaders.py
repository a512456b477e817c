"""KG loaders: CoDEx-S from the real files, RDF files, and malformed inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat

from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.kg import OxigraphKG, Triple, load_codex_kg, load_rdf_kg
from citegraph.kg._sources import codex_source_files

SPLITS = ("train", "valid", "test")


@pytest.fixture(scope="module")
def codex(data_dir: Path) -> OxigraphKG:
    return load_codex_kg(data_dir, use_cache=False)


def _distinct_lines(data_dir: Path, splits: tuple[str, ...]) -> set[str]:
    lines: set[str] = set()
    for split in splits:
        text = (data_dir / "codex_s" / "triples" / f"{split}.txt").read_text(encoding="utf-8")
        lines.update(line for line in text.splitlines() if line)
    return lines


def test_codex_fact_count_equals_distinct_lines(codex: OxigraphKG, data_dir: Path) -> None:
    # 32,888 + 1,827 + 1,828 lines, no duplicates across splits: 36,543 (the README's figure).
    assert len(codex) == len(_distinct_lines(data_dir, SPLITS)) == 36543


def test_codex_single_split(data_dir: Path) -> None:
    test_only = load_codex_kg(data_dir, split=("test",), use_cache=False)
    assert len(test_only) == len(_distinct_lines(data_dir, ("test",))) == 1828
    assert test_only.source_hash != load_codex_kg(data_dir, use_cache=False).source_hash


def test_codex_hand_checked_facts(codex: OxigraphKG) -> None:
    # test.txt: "Q206832 P27 Q142"; entity2name: Q206832 Gaspard Monge, Q142 France;
    # relations_en.json: P27 "country of citizenship". train.txt: "Q206832 P20 Q90" (Paris,
    # place of death). test_negatives.txt: "Q206832 P27 Q155" (Brazil) is not a fact.
    [monge] = codex.find_entities_sync("Gaspard Monge")
    assert monge.id == "Q206832"
    assert monge.types == ("human",)  # entity2types_all_codex: Q206832 -> [Q5]; types_en Q5 human
    assert monge.description is not None and monge.description.startswith("Gaspard Monge, Comte")
    [fact] = codex.facts_sync("Q206832", "country of citizenship")
    assert fact.key == ("Q206832", "country of citizenship", "France")
    assert (fact.relation_id, fact.value_id, fact.subject_label) == ("P27", "Q142", "Gaspard Monge")
    assert codex.has_fact_sync(Triple(subject="Q206832", relation="place of death", value="Paris"))
    assert not codex.has_fact_sync(
        Triple(subject="Q206832", relation="country of citizenship", value="Brazil")
    )
    # grep -P "^Q206832\t" triples/{train,valid,test}.txt: 13 + 1 + 2 = 16 lines.
    assert len(codex.subgraph_sync("Q206832")) == 16


def test_codex_types_by_label_and_id(codex: OxigraphKG) -> None:
    # Q90 Paris has 8 types in entity2types_all_codex.json, among them Q515 "city".
    assert [e.id for e in codex.find_entities_sync("Paris", type="city")] == ["Q90"]
    assert [e.id for e in codex.find_entities_sync("Paris", type="Q515")] == ["Q90"]
    assert codex.find_entities_sync("Paris", type="Q5") == []
    assert [e.id for e in codex.find_entities_sync("gaspard monge", case_sensitive=False)] == [
        "Q206832"
    ]


def test_codex_missing_split_is_a_clear_error(data_dir: Path) -> None:
    with pytest.raises(DataNotFoundError, match=r"nosuch\.txt"):
        codex_source_files(data_dir, ("nosuch",))


WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
NT = f"""\
<{WD}Q1> <{WDT}P19> <{WD}Q2> .
<{WD}Q1> {LABEL} "Ada Lovelace"@en .
<{WD}Q2> {LABEL} "London"@en .
<{WD}P19> {LABEL} "place of birth"@en .
<{WD}Q1> <http://example.org/nickname> "Enchantress of Numbers" .
"""

TTL = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:bob rdfs:label "Bob" ; ex:knows ex:carol ; ex:age "42" .
ex:carol rdfs:label "Carol"@en .
ex:knows rdfs:label "knows"@en .
"""


def test_ntriples_and_turtle(tmp_path: Path) -> None:
    (tmp_path / "a.nt").write_text(NT, encoding="utf-8")
    (tmp_path / "b.ttl").write_text(TTL, encoding="utf-8")
    kg = load_rdf_kg([tmp_path / "a.nt", tmp_path / "b.ttl"], use_cache=False)
    assert len(kg) == 4  # labels are metadata, the four other triples are facts
    [ada] = kg.find_entities_sync("ada lovelace", case_sensitive=False)
    sub = kg.subgraph_sync(ada.id)
    assert ada.id == "Q1"
    # wdt:P19 has no label of its own: the label of the property entity wd:P19 is used.
    assert {(t.relation, t.value, t.relation_id, t.value_id) for t in sub} == {
        ("place of birth", "London", "P19", "Q2"),
        ("nickname", "Enchantress of Numbers", "http://example.org/nickname", None),
    }
    [bob] = kg.find_entities_sync("Bob")  # an untagged label counts as English
    assert bob.id == "http://example.org/bob"
    assert {t.key for t in kg.subgraph_sync(bob.id)} == {
        ("http://example.org/bob", "knows", "Carol"),
        ("http://example.org/bob", "age", "42"),
    }


def test_store_round_trips_through_nquads(tmp_path: Path) -> None:
    built = OxigraphKG.in_memory()
    built.add_triples(
        [
            Triple(subject="Q7", relation="employer", value="Acme", subject_label="Eve",
                   relation_id="P108", value_id="Q8"),
            Triple(subject="Q7", relation="motto", value='say "hi"\\n'),
        ]
    )  # fmt: skip
    dump = tmp_path / "kg.nq"
    built.store.dump(str(dump), RdfFormat.N_QUADS)
    loaded = load_rdf_kg([dump], cache_dir=tmp_path / "cache")
    assert len(loaded) == len(built) == 2
    assert loaded.subgraph_sync("Q7") == built.subgraph_sync("Q7")
    assert loaded.find_entities_sync("Eve") == built.find_entities_sync("Eve")


def test_bad_inputs_name_file_and_line(tmp_path: Path) -> None:
    bad_nt = tmp_path / "bad.nt"
    bad_nt.write_text('<http://a> <http://p> "x" .\n<http://a> <http://p> "y .\n')
    with pytest.raises(DataError) as err:
        load_rdf_kg([bad_nt], use_cache=False)
    assert (err.value.path, err.value.line) == (str(bad_nt), 2)

    with pytest.raises(DataError, match="unknown RDF format"):
        (tmp_path / "x.csv").write_text("a,b\n")
        load_rdf_kg([tmp_path / "x.csv"], use_cache=False)

    graph = tmp_path / "graph.json"
    graph.write_text(json.dumps([["q", [{"name": "no qid"}]]]))
    with pytest.raises(DataError) as err:
        OxigraphKG.from_source("biokalma", [graph], use_cache=False)
    assert err.value.field == "[0][1][0].qid"

    graph.write_text('[["q", [')
    with pytest.raises(DataError) as err:
        OxigraphKG.from_source("biokalma", [graph], use_cache=False)
    assert err.value.line == 1

    with pytest.raises(ConfigError):
        OxigraphKG.from_source("nosuch", [graph], use_cache=False)


def test_bad_codex_line(tmp_path: Path) -> None:
    (tmp_path / "entity2name.txt").write_text("Q1\tA\nQ2\tB\n")
    (tmp_path / "relations_en.json").write_text(json.dumps({"P1": {"label": "r"}}))
    (tmp_path / "train.txt").write_text("Q1\tP1\tQ2\nQ1\tP1\n")
    paths = [tmp_path / n for n in ("entity2name.txt", "relations_en.json", "train.txt")]
    with pytest.raises(DataError) as err:
        OxigraphKG.from_source("codex", paths, cache_dir=tmp_path / "cache")
    assert (err.value.path, err.value.line) == (str(tmp_path / "train.txt"), 2)
    # The failed import left no cache entry behind.
    assert list((tmp_path / "cache").iterdir()) == []
    (tmp_path / "train.txt").write_text("Q1\tP1\tQ2\nQ1\tP1\tQ2\n")
    kg = OxigraphKG.from_source("codex", paths, cache_dir=tmp_path / "cache")
    assert len(kg) == 1
    assert kg.facts_sync("Q1")[0].key == ("Q1", "r", "B")


def test_dataset_kgs_find_the_data_dir_from_any_working_directory(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load_biokalma_kg()`` finds the data the way ``load_biokalma()`` does, also when the
    working directory is not the checkout (before, it needed the path, and the README's
    ``"../shared/data"`` only worked from the repository root)."""
    from citegraph.kg import load_biokalma_kg, load_pathquestion_kg

    explicit = load_biokalma_kg(data_dir)
    monkeypatch.chdir(tmp_path)
    found = load_biokalma_kg()
    assert found.source_hash == explicit.source_hash
    assert len(found) == len(explicit)
    assert len(load_pathquestion_kg(kb="2h")) == len(load_pathquestion_kg(data_dir, kb="2h"))
    assert len(load_codex_kg(split=("test",))) == 1828  # as test_codex_single_split


def test_a_given_data_dir_that_does_not_exist_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citegraph.kg import load_biokalma_kg

    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataNotFoundError, match=r"\.\./shared/data is not a directory"):
        load_biokalma_kg("../shared/data")
