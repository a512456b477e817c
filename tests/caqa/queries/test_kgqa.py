"""KGQA readers: real files, hand-made fixtures with hand-counted skips, grounding."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from _caqa_graphs import tiny_kg

from citegraph.caqa import CaqaKG, LogicalQuery
from citegraph.caqa.queries import (
    KGQASample,
    KGQASet,
    QueryEdge,
    ground_set,
    load_kgqa,
    parse_sparql,
    path_query,
    read_grailqa,
    read_pathquestion,
    read_simplequestions_wd,
    read_wikiwebquestions,
    single,
)
from citegraph.errors import ConfigError, DataError
from citegraph.kg import load_codex_kg, load_grailqa_kg, load_pathquestion_kg


@pytest.fixture(scope="module")
def codex(data_dir: Path) -> CaqaKG:
    return CaqaKG(load_codex_kg(data_dir, use_cache=False), name="codex-s")


def _edges(*triples: tuple[str, str, str]) -> tuple[QueryEdge, ...]:
    return tuple(QueryEdge(subject=s, relation=r, object=o) for s, r, o in triples)


# ---------------------------------------------------------------------------- SimpleQuestions
def test_simplequestions_derived(data_dir: Path, codex: CaqaKG) -> None:
    kgqa = load_kgqa("simplequestions-wd", data_dir)
    assert (kgqa.kg, len(kgqa.samples), kgqa.skipped) == ("codex-s", 96, {})  # 97 lines - header
    first, third = kgqa.samples[0], kgqa.samples[2]
    # line 2: "train Q6607 R1303 Q238795 who is an instrumentalist that plays the guitar"
    assert first.id == "sqwd-codex-s:2"
    assert first.query == single("?a", "P1303", "Q6607")
    assert first.answers == ("Q238795",)
    assert first.question == "who is an instrumentalist that plays the guitar"
    assert third.query == single("Q229282", "P27", "?a") and third.answers == ("Q30",)
    assert "Q238795" in codex.ground(first.query).answers
    kept, dropped = ground_set(kgqa, codex)
    assert (len(kept), dropped) == (96, {})  # the derived set is grounded in CoDEx-S by design


def test_simplequestions_raw(data_dir: Path) -> None:
    kgqa = read_simplequestions_wd(data_dir / "simplequestions_wikidata/annotated_wd_data_test.txt")
    assert kgqa.kg == "wikidata" and len(kgqa.samples) == 9961  # 9,961 lines (no final newline)
    first = kgqa.samples[0]  # "Q5487302 P136 Q1096120 Which genre of album is harder.....faster?"
    assert (first.id, first.query, first.answers) == (
        "sqwd-test:1",
        single("Q5487302", "P136", "?a"),
        ("Q1096120",),
    )


def test_simplequestions_inline_and_malformed(tmp_path: Path) -> None:
    path = tmp_path / "sq.txt"
    path.write_text("Q1\tP19\tQ2\twhere was one born\nQ3\tR26\tQ4\t\n", encoding="utf-8")
    kgqa = read_simplequestions_wd(path)
    assert [s.query for s in kgqa.samples] == [single("Q1", "P19", "?a"), single("?a", "P26", "Q3")]
    assert kgqa.samples[1].question is None and kgqa.samples[1].answers == ("Q4",)
    path.write_text("Q1\tP19\tQ2\tq\nQ1\tP19\tQ2\tq\nQ1\tP19\tQ2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"sq\.txt:3"):
        read_simplequestions_wd(path)
    path.write_text("Q1\tX19\tQ2\tq\n", encoding="utf-8")
    with pytest.raises(DataError, match="X19") as info:
        read_simplequestions_wd(path)
    assert info.value.line == 1


# ---------------------------------------------------------------------------- WikiWebQuestions
def test_wikiwebquestions_derived_grounds_to_listed_answers(data_dir: Path, codex: CaqaKG) -> None:
    kgqa = load_kgqa("wikiwebquestions", data_dir)
    raw = json.loads(
        (data_dir / "derived/wikiwebquestions_dev_grounded_in_codex_s.json").read_text()
    )
    assert len(kgqa.samples) == len(raw) == 22 and kgqa.skipped == {}
    assert kgqa.samples[0].query == single("Q96", "P30", "?a")  # Mexico, continent
    for sample, item in zip(kgqa.samples, raw, strict=True):
        listed = {r["x"]["value"].rsplit("/", 1)[1] for r in item["results"]}
        assert set(sample.answers) == listed
        assert listed <= set(codex.ground(sample.query).answers)
    # CoDEx-S puts Spain (Q29) in Europe (Q46) and Africa (Q15); the item lists Europe only
    spain = [s for s in kgqa.samples if s.query == single("Q29", "P30", "?a")]
    assert set(codex.ground(spain[0].query).answers) == {"Q46", "Q15"}
    assert spain[0].answers == ("Q46",)
    kept, dropped = ground_set(kgqa, codex)
    assert dropped == {} and [s.answers for s in kept] == [s.answers for s in kgqa.samples]


P = (
    "PREFIX wd: <http://www.wikidata.org/entity/> "
    "PREFIX wdt: <http://www.wikidata.org/prop/direct/> "
)
Q = P + "SELECT DISTINCT ?x WHERE { "


@pytest.mark.parametrize(
    ("body", "edges"),
    [
        ("wd:Q1 wdt:P2 ?x. }", [("Q1", "P2", "?a")]),
        ("?x wdt:P2 wd:Q1. }", [("?a", "P2", "Q1")]),
        ("wd:Q1 wdt:P2 ?y. ?y wdt:P3 ?x. }", [("Q1", "P2", "?v1"), ("?v1", "P3", "?a")]),
        ("?x wdt:P2 wd:Q1; wdt:P3 wd:Q4. }", [("?a", "P2", "Q1"), ("?a", "P3", "Q4")]),
        ("?y wdt:P355 wd:Q9; wdt:P127 ?x. }", [("?v1", "P355", "Q9"), ("?v1", "P127", "?a")]),
        ("wd:Q1 wdt:P2 ?x, ?z. ?z wdt:P5 wd:Q6 }", [("Q1", "P2", "?a"), ("Q1", "P2", "?v1"),
                                                    ("?v1", "P5", "Q6")]),
    ],
)  # fmt: skip
def test_parse_sparql_shapes(body: str, edges: list[tuple[str, str, str]]) -> None:
    parsed = parse_sparql(Q + body)
    assert parsed.skipped is None and parsed.answer_variable == "x"
    assert parsed.query == LogicalQuery(edges=_edges(*edges))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (Q + "?x wdt:P31/wdt:P279* wd:Q5. }", "property path"),
        (Q + "?x wdt:P1|wdt:P2 ?y. FILTER(?y < 3) }", "property path"),
        (Q + "wd:Q1 p:P39 ?s. ?s ps:P39 ?x. }", "qualifier (p:/ps:/pq:)"),
        (Q + "wd:Q1 wdt:P2 ?x. ?x wdt:P3 ?y. FILTER(?y > \"2000\"^^xsd:dateTime) }", "FILTER"),
        (Q + "{ wd:Q1 wdt:P2 ?x. } UNION { ?x wdt:P3 wd:Q1. } }", "UNION"),
        (Q + "wd:Q1 wdt:P2 ?x. } ORDER BY ?x LIMIT 1", "ORDER BY / LIMIT"),
        (P + "SELECT (COUNT(*) AS ?x) WHERE { wd:Q1 wdt:P2 ?y. }", "aggregate"),
        (P + "SELECT DISTINCT ?x ?y WHERE { wd:Q1 wdt:P2 ?x. ?x wdt:P3 ?y. }",
         "several answer variables"),
        (Q + "?x wdt:P2 \"Paris\"@en. }", "literal in pattern"),
        (Q + "?x a wd:Q5. }", "unsupported term"),
        (Q + "wd:Q1 wdt:P2 ?y. }", "answer not in the patterns"),
        (Q + "wd:Q1 wdt:P2 ?x. ?x wdt:P3 wd:Q1. }", "patterns not a tree"),
        ("ASK { wd:Q1 wdt:P2 wd:Q3 }", "not a SELECT query"),
    ],
)  # fmt: skip
def test_parse_sparql_skip_reasons(text: str, reason: str) -> None:
    parsed = parse_sparql(text)
    assert (parsed.query, parsed.skipped) == (None, reason)


def test_wikiwebquestions_inline_counts(tmp_path: Path) -> None:
    def uri(qid: str) -> dict[str, dict[str, str]]:
        return {"x": {"type": "uri", "value": "http://www.wikidata.org/entity/" + qid}}

    items = [
        {"id": "a", "utterance": "q a", "sparql": Q + "wd:Q1 wdt:P2 ?x. }",
         "results": [uri("Q3"), uri("Q4"), uri("Q3")]},
        {"id": "b", "utterance": "q b", "sparql": Q + "?x wdt:P2 wd:Q1; wdt:P5 wd:Q6. }"},
        {"id": "c", "utterance": "q c", "sparql": Q + "wd:Q1 wdt:P2/wdt:P3 ?x. }"},
        {"id": "d", "utterance": "q d", "sparql": Q + "wd:Q1 wdt:P2+ ?x. }"},
        {"id": "e", "utterance": "q e", "sparql": Q + "wd:Q1 p:P2 ?s. ?s pq:P3 ?x. }"},
        {"id": "f", "utterance": "q f", "sparql": Q + "wd:Q1 wdt:P1082 ?x. }",
         "results": [{"x": {"type": "literal", "value": "12"}}]},
    ]  # fmt: skip
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    kgqa = read_wikiwebquestions(path)
    assert [s.id for s in kgqa.samples] == ["wwq:a", "wwq:b"]
    assert kgqa.samples[0].answers == ("Q3", "Q4") and kgqa.samples[1].answers == ()
    assert kgqa.samples[1].query.shape == "tree"
    assert kgqa.skipped == {"property path": 2, "qualifier (p:/ps:/pq:)": 1, "literal answer": 1}
    path.write_text(json.dumps([{"id": "z"}]), encoding="utf-8")
    with pytest.raises(DataError, match=r"\[0\]"):
        read_wikiwebquestions(path)


def test_wikiwebquestions_raw_accounting(data_dir: Path) -> None:
    kgqa = load_kgqa("wikiwebquestions-raw", data_dir)
    items = [
        *json.loads((data_dir / "wikiwebquestions/dev.json").read_text()),
        *json.loads((data_dir / "wikiwebquestions/train.json").read_text()),
    ]
    assert kgqa.kg == "wikidata"
    assert len(kgqa.samples) + sum(kgqa.skipped.values()) == len(items) == 2885
    assert kgqa.skipped["SERVICE"] == sum("SERVICE" in i["sparql"] for i in items) == 10
    # an independent count: bodies exactly "wd:Q.. wdt:P.. ?x." with no literal result
    plain = re.compile(r"SELECT DISTINCT \?x WHERE \{ wd:Q\d+ wdt:P\d+ \?x\.\s*\}\s*$")
    expected = sum(
        bool(plain.search(i["sparql"]))
        and all(r["x"]["type"] == "uri" for r in i.get("results", []))
        for i in items
    )
    got = sum(s.query.shape == "single" and s.query.edges[0].object == "?a" for s in kgqa.samples)
    assert got == expected


# ---------------------------------------------------------------------------- GrailQA
def test_grailqa_real(data_dir: Path) -> None:
    kgqa = load_kgqa("grailqa", data_dir)
    items = json.loads((data_dir / "kgqa_tog/grailqa.json").read_text())
    first = kgqa.samples[0]
    assert first.id == "grailqa:2101960008000" and first.level == "i.i.d."
    assert first.query == LogicalQuery(
        edges=_edges(("?a", "theater.play.productions", "m.0yrlqjm")),
        answer_types=("theater.play",),
    )
    assert first.answers == ("m.0yrltsn",)
    functions = Counter(f"function {i['function']}" for i in items if i["function"] != "none")
    literal_nodes = sum(
        i["function"] == "none"
        and any(n["node_type"] == "literal" for n in i["graph_query"]["nodes"])
        for i in items
    )
    assert kgqa.skipped == {**functions, "literal node": literal_nodes}
    assert functions["function count"] == 3 and literal_nodes == 8
    assert len(kgqa.samples) == 1000 - sum(kgqa.skipped.values())


def test_grailqa_grounds_in_the_mini_kb(data_dir: Path) -> None:
    kgqa = load_kgqa("grailqa", data_dir)
    kg = CaqaKG(load_grailqa_kg(data_dir, use_cache=False), name="grailqa-mini")
    kept, dropped = ground_set(kgqa, kg)
    assert kept[0].answers == ("m.0yrltsn",)
    rows = (data_dir / "derived/grailqa_tog_single_edge_triples.jsonl").read_text().splitlines()
    derived = {f"grailqa:{json.loads(line)['qid']}" for line in rows}
    read = {s.id for s in kgqa.samples}
    assert (derived & read) <= {s.id for s in kept}  # every single-edge question grounds
    assert len(kept) + sum(dropped.values()) == len(kgqa.samples)


def test_grailqa_inline(tmp_path: Path) -> None:
    def node(nid: int, kind: str, node_id: str, question: int = 0, fn: str = "none") -> dict:
        return {"nid": nid, "node_type": kind, "id": node_id, "class": node_id,
                "question_node": question, "function": fn}  # fmt: skip

    def item(qid: int, nodes: list, edges: list, fn: str = "none", kind: str = "Entity") -> dict:
        return {"qid": qid, "question": f"q{qid}", "function": fn, "level": "zero-shot",
                "answer": [{"answer_type": kind, "answer_argument": "m.ans"}],
                "graph_query": {"nodes": nodes, "edges": edges}}  # fmt: skip

    items = [
        item(1, [node(0, "class", "c.a", 1), node(1, "class", "c.b"), node(2, "entity", "m.e")],
             [{"start": 0, "end": 1, "relation": "r.one"},
              {"start": 1, "end": 2, "relation": "r.two"}]),
        item(2, [node(0, "entity", "m.e"), node(1, "class", "c.a", 1)],
             [{"start": 0, "end": 1, "relation": "r.three"}]),
        item(3, [node(0, "class", "c.a", 1, "count"), node(1, "entity", "m.e")],
             [{"start": 0, "end": 1, "relation": "r.one"}], fn="count", kind="Value"),
        item(4, [node(0, "class", "c.a", 1), node(1, "literal", "3^^xsd:int")],
             [{"start": 0, "end": 1, "relation": "r.one"}]),
        item(5, [node(0, "class", "c.a", 1), node(1, "entity", "m.e")],
             [{"start": 0, "end": 1, "relation": "r.one"}], kind="Value"),
    ]  # fmt: skip
    path = tmp_path / "grailqa.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    kgqa = read_grailqa(path)
    assert kgqa.skipped == {"function count": 1, "literal node": 1, "literal answer": 1}
    one, two = kgqa.samples
    assert one.query == LogicalQuery(
        edges=_edges(("?a", "r.one", "?v1"), ("?v1", "r.two", "m.e")), answer_types=("c.a",)
    )
    assert one.query.shape == "path"
    assert two.query.edges == _edges(("m.e", "r.three", "?a"))
    path.write_text(json.dumps([{"qid": 9, "graph_query": {}}]), encoding="utf-8")
    with pytest.raises(DataError, match="graph_query"):
        read_grailqa(path)


# ---------------------------------------------------------------------------- PathQuestion
def test_pathquestion_first_line_grounds(data_dir: Path) -> None:
    kgqa = load_kgqa("pathquestion-2h", data_dir)
    assert len(kgqa.samples) == 1908  # wc -l PQ-2H.txt
    first = kgqa.samples[0]
    assert first.id == "pq2h:1" and first.kg == "pathquestion-2h"
    assert first.query == path_query("frederica_of_mecklenburg-strelitz", ["spouse", "nationality"])
    assert first.answers == ("united_kingdom",)
    kg = CaqaKG(load_pathquestion_kg(data_dir, "2h", use_cache=False), name="pathquestion-2h")
    assert kg.ground(first.query).answers == ("united_kingdom",)


def test_pathquestion_inline(tmp_path: Path) -> None:
    path = tmp_path / "PQL-2H.txt"
    path.write_text(
        " what is x 's y ?\tPG_(USA)(PG_(USA)/)\ts#r_1#m#r_2#PG_(USA)\n"
        "which sex ?\tfemale(male/female/)\ta#children#b#gender#female#<end>#female\n",
        encoding="utf-8",
    )
    kgqa = read_pathquestion(path)
    assert kgqa.kg == "pathquestion-pql2" and [s.id for s in kgqa.samples] == ["pql2:1", "pql2:2"]
    one, two = kgqa.samples
    assert one.question == "what is x 's y ?" and one.answers == ("PG_(USA)",)
    assert one.query == path_query("s", ["r_1", "r_2"])
    assert two.answers == ("male", "female")
    for bad, line in (
        ("q\tx(x/)\n", 1),
        ("q\tx(x/)\ts#r#x\nq\tx(x/)\ts#r#m#x\n", 2),
        ("q\tx(x/)\ts#r#y\n", 1),
        ("q\tx\ts#r#x\n", 1),
    ):
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(DataError) as info:
            read_pathquestion(path)
        assert info.value.line == line


# ---------------------------------------------------------------------------- sets, grounding
def test_load_kgqa_names_and_limit(data_dir: Path) -> None:
    assert len(load_kgqa("pathquestion-pql3", data_dir, limit=5).samples) == 5
    with pytest.raises(ConfigError, match="unknown KGQA set"):
        load_kgqa("webqsp", data_dir)


def test_ground_set_on_a_tiny_graph() -> None:
    kg = tiny_kg([("e1", "r", "a1"), ("e1", "r", "a2"), ("e2", "s", "a3")])

    def sample(i: int, query: LogicalQuery, answers: tuple[str, ...]) -> KGQASample:
        return KGQASample(id=f"t:{i}", question="q", query=query, answers=answers,
                          source="test", kg="tiny")  # fmt: skip

    samples = [
        sample(1, single("e1", "r", "?a"), ("a2", "zz")),  # keeps a2 only
        sample(2, single("e2", "s", "?a"), ()),  # takes the local answers
        sample(3, single("e2", "r", "?a"), ("a1",)),  # no local answer
        sample(4, single("e2", "s", "?a"), ("a1",)),  # local answer a3, listed a1
    ]
    kept, dropped = ground_set(KGQASet(name="t", kg="tiny", samples=samples, skipped={}), kg)
    assert [(s.id, s.answers) for s in kept] == [("t:1", ("a2",)), ("t:2", ("a3",))]
    assert dropped == {
        "not grounded in the local KG": 1,
        "listed answers not among the local answers": 1,
    }
