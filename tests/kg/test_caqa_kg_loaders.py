"""The PathQuestion and GrailQA KB loaders: real files, hand-made files, malformed lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import DefaultGraph, Literal, NamedNode

from citegraph.caqa import CaqaKG, Fact
from citegraph.errors import ConfigError, DataError
from citegraph.kg import OxigraphKG, load_grailqa_kg, load_pathquestion_kg, open_kg
from citegraph.kg._load_grailqa import read_grailqa_kb
from citegraph.kg._load_pathquestion import read_pathquestion_kb


@pytest.fixture(scope="module")
def grail(data_dir: Path) -> CaqaKG:
    return CaqaKG(load_grailqa_kg(data_dir, use_cache=False), name="grailqa-mini")


def test_pathquestion_2h_real(data_dir: Path) -> None:
    kg = CaqaKG(load_pathquestion_kg(data_dir, "2h", use_cache=False), name="pathquestion-2h")
    assert len(kg.kg) == 1211  # 1,211 lines, all distinct (sort -u | wc -l)
    # line 1: "ludwig_ii_of_bavaria<TAB>parents<TAB>maximilian_ii_of_bavaria"
    assert kg.has(Fact.of("ludwig_ii_of_bavaria", "parents", "maximilian_ii_of_bavaria"))
    assert kg.label("ludwig_ii_of_bavaria") == "ludwig ii of bavaria"
    assert kg.label("place_of_birth") == "place of birth"
    assert kg.types("ludwig_ii_of_bavaria") == ()
    assert CaqaKG.relation_iri("parents") == "https://citegraph.dev/rel/parents"
    assert kg.ids.relation_ends("parents", objects=True)


def test_pathquestion_pql2_readable_relation_labels(data_dir: Path) -> None:
    kg = CaqaKG(load_pathquestion_kg(data_dir, "pql2", use_cache=False), name="pql2")
    # PQL-2H line 1 path: Kenneth_Peach#__film__cinematographer__film#Dirty_Work#...
    assert kg.has(Fact.of("Kenneth_Peach", "__film__cinematographer__film", "Dirty_Work"))
    assert kg.label("__film__cinematographer__film") == "film cinematographer film"
    assert kg.label("Kenneth_Peach") == "Kenneth Peach"


def test_pathquestion_kb_double_tabs_and_bad_lines(tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text("a_b\t\tr_x\tc\n\nc\tr_x\ta_b\n", encoding="utf-8")
    kg = CaqaKG(OxigraphKG.in_memory(read_pathquestion_kb([kb])), name="t")
    assert len(kg.kg) == 2
    assert kg.out_facts("a_b") == [Fact.of("a_b", "r_x", "c")]
    assert kg.label("a_b") == "a b" and kg.label("r_x") == "r x"
    kb.write_text("a\tr\tb\nonly\ttwo\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"kb\.txt:2") as info:
        list(read_pathquestion_kb([kb]))
    assert info.value.line == 2


def test_pathquestion_unknown_kb(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="9h"):
        load_pathquestion_kg(data_dir, "9h")


def test_grailqa_mini_real(grail: CaqaKG) -> None:
    # 7,074 triple rows in the JSONL, 6,997 distinct (subject, relation, object) among them.
    assert len(grail.kg) == 6997
    # row 1: m.0yrltsn "The Illusion" --theater.play.productions--> m.0yrlqjm; class theater.play
    assert grail.has(Fact.of("m.0yrltsn", "theater.play.productions", "m.0yrlqjm"))
    assert grail.label("theater.play.productions") == "Productions"
    assert grail.types("m.0yrltsn") == ("theater.play",)
    assert grail.label("theater.play") == "Play"  # the class node's friendly_name
    # the topic entity's graph-query node has class theater.theater_production (no friendly name)
    assert grail.types("m.0yrlqjm") == ("theater.theater_production",)
    assert grail.label("theater.theater_production") == "theater production"


def test_grailqa_mini_labels_and_reversed_rows(grail: CaqaKG) -> None:
    # topic_entity name beats the question's mention "east carolina college"
    assert grail.label("m.0m9_5") == "East Carolina University"
    # Freebase's name as an answer ("PlayStation 3") beats the mention "ps 3"
    assert grail.label("m.067gh") == "PlayStation 3"
    # (AND cvg.cvg_platform (JOIN (R ...platforms_supported) m.03wc248)): the answer is the
    # object, iOS (m.03wbl14), not the store "ios app store"
    assert "cvg.cvg_platform" in grail.types("m.03wbl14")
    assert "cvg.cvg_platform" not in grail.types("m.03wc248")


def test_grailqa_mini_literal_objects(grail: CaqaKG) -> None:
    # line 646: m.03gc609 --stream_bitrate--> 39^^xsd:integer: a literal fact, not an entity fact
    node = NamedNode(CaqaKG.entity_iri("m.03gc609"))
    pred = NamedNode(CaqaKG.relation_iri("broadcast.internet_stream.stream_bitrate"))
    [quad] = list(grail.kg.store.quads_for_pattern(node, pred, None, DefaultGraph()))
    assert quad.object == Literal(
        "39", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")
    )
    assert grail.out_facts("m.03gc609") == []


def _row(qid: int, triples: list[dict[str, str]], sexpr: str, cls: str) -> str:
    return json.dumps(
        {"qid": qid, "s_expression": sexpr, "answer_class": [cls], "triples": triples}
    )


def test_grailqa_kb_without_questions_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    t1 = {"subject_id": "m.a", "subject": "A", "relation": "x.y.z", "relation_label": "Zed",
          "object_id": "m.b", "object": "b mention"}  # fmt: skip
    t2 = {"subject_id": "m.b", "subject": "b mention", "relation": "x.y.w", "relation_label": "W",
          "object_id": "m.c", "object": "C"}  # fmt: skip
    lines = [
        _row(1, [t1], "(AND x.thing (JOIN x.y.z m.b))", "x.thing"),
        _row(2, [t2], "(AND x.other_kind (JOIN (R x.y.w) m.b))", "x.other_kind"),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kg = CaqaKG(OxigraphKG.in_memory(read_grailqa_kb([path])), name="t")
    assert len(kg.kg) == 2
    assert kg.types("m.a") == ("x.thing",)
    assert kg.types("m.c") == ("x.other_kind",)  # reversed: the object is the answer
    assert kg.types("m.b") == ()
    assert kg.label("x.thing") == "thing" and kg.label("x.other_kind") == "other kind"
    assert (kg.label("m.a"), kg.label("m.b"), kg.label("m.c")) == ("A", "b mention", "C")
    assert kg.label("x.y.z") == "Zed"


def test_grailqa_kb_malformed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = _row(1, [], "", "x.thing")
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"t\.jsonl:2"):
        list(read_grailqa_kb([path]))
    bad = _row(1, [{"relation": "x.y", "object_id": "m.b"}], "", "x.thing")
    path.write_text(good + "\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="subject_id") as info:
        list(read_grailqa_kb([path]))
    assert info.value.line == 2
    with pytest.raises(DataError, match="triples file"):
        list(read_grailqa_kb([tmp_path / "grailqa.json"]))


def test_open_kg_specs_use_the_cache(data_dir: Path, tmp_path: Path) -> None:
    first = open_kg("pathquestion-3h", data_dir=data_dir, cache_dir=tmp_path)
    again = open_kg("pathquestion-3h", data_dir=data_dir, cache_dir=tmp_path)
    assert isinstance(first.kg, OxigraphKG) and isinstance(again.kg, OxigraphKG)
    assert len(first.identity) == 64 and first.identity == again.identity
    assert first.kg.imported and not again.kg.imported
    assert len(again.kg) == 2839  # 3H-kb.txt: 2,839 distinct lines
    mini = open_kg("grailqa-mini", data_dir=data_dir, cache_dir=tmp_path)
    assert isinstance(mini.kg, OxigraphKG) and len(mini.kg) == 6997
    with pytest.raises(ConfigError, match="unknown KG"):
        open_kg("pathquestion-9h", data_dir=data_dir, cache_dir=tmp_path)
