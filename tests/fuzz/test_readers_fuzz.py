"""Fuzz the readers of user files with malformed files from a seeded generator (issue 17, item 3).

Every reader of a file a user hands citegraph (answers, gold, KG RDF files, the pairs CSV, human
labels CSV and JSONL, CAQA samples, CONNER knowledge and corpus files, run directories with torn
or corrupt lines) gets thousands of files made by mutating a valid one: random bytes,
truncation, invalid UTF-8, byte-order marks, wrong JSON types per field, missing and extra
fields, huge numbers, NaN, nested junk, blank lines, CRLF, NUL bytes, Unicode line breaks... Each
file must either parse or end in citegraph's own error type: a :class:`CitegraphError`, and a
:class:`DataError` must name the file. Never an unhandled exception.

The generator is seeded, so a failure names a case that reproduces: rerun with the same seed and
look at ``case`` in the assertion message. The case counts are in the test ids and asserted.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citegraph.caqa import load_caqa_split
from citegraph.caqa.judge import read_human_labels
from citegraph.conner.acquire import read_corpus, read_knowledge
from citegraph.datasets import ConnerSample, read_answers, read_gold
from citegraph.errors import CitegraphError, DataError
from citegraph.io import read_jsonl_tolerant
from citegraph.kalma.build import read_pairs_csv
from citegraph.kg._load_rdf import read_rdf
from citegraph.runs import RunDir

SEED = 17
BOM = b"\xef\xbb\xbf"

# ---------------------------------------------------------------- valid starting points

ANSWERS = [
    {"id": "specific-0", "answer": "Crane was born in Newark [Q206534, place of birth: Newark]."},
    {"id": "specific-1", "answer": None, "question": "Who?"},
    {"id": "general-2", "answer": "No knowledge [NA]."},
]
GOLD = [
    {"id": "specific-0", "knowledge": [["Q206534", "place of birth", "Newark"]]},
    {
        "id": "specific-1",
        "knowledge": [],
        "absent": [["Q1", "spouse", "Q2"]],
        "knowledge_injected": [["Q1", "spouse", "Q2"]],
    },
]
CAQA = [
    {
        "id": "grailqa-0-supportive",
        "question": "Who wrote Hamlet?",
        "answer": "Shakespeare wrote Hamlet.",
        "citation": "Hamlet was written by Shakespeare.",
        "label": "supportive",
        "complexity": "single",
        "source": "grailqa",
        "group": "g0",
        "answer_names": ["Shakespeare"],
        "query": {"op": "edge", "relation": "author"},
    },
    {
        "id": "grailqa-0-irrelevant",
        "question": "Who wrote Hamlet?",
        "answer": "Shakespeare wrote Hamlet.",
        "citation": "Paris is in France.",
        "label": "irrelevant",
        "source": "grailqa",
    },
]
KNOWLEDGE = [
    {"id": "nq:0", "status": "ok", "text": "Paris is the capital of France.", "source": "gen"},
    {"id": "nq:1", "status": "failed", "text": None, "error": "server down"},
    {"id": "nq:2", "text": "Water boils at 100 C."},
]
CORPUS = [{"id": "p1", "text": "Paris is the capital of France."}, {"id": 2, "text": "Water."}]
LABELS_JSONL = [{"id": "s0", "label": "supportive"}, {"id": "s1", "label": "Irrelevant"}]
RUN_RECORDS = [
    {"id": "specific-0", "status": "ok", "scores": {"precision": 0.5, "recall": None}},
    {"id": "specific-1", "status": "failed", "error": "timeout"},
    {"id": "specific-0", "status": "ok", "text": "caf\u00e9 \u2028 line"},
]
PAIRS_CSV = (
    "name1,relation,name2,paragraph\n"
    'William Shakespeare,spouse,Anne Hathaway,"He married her, in 1582."\n'
    'Marie Curie,spouse,Pierre Curie,"A quoted\nparagraph"\n'
)
LABELS_CSV = "id,label\ns0,supportive\ns1,contradictory\n"
NTRIPLES = (
    "<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "
    '"Q one"@en .\n'
    "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P19> "
    "<http://www.wikidata.org/entity/Q2> .\n"
    '_:b0 <http://example.org/p> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
)
TURTLE = (
    "@prefix wd: <http://www.wikidata.org/entity/> .\n"
    "@prefix wdt: <http://www.wikidata.org/prop/direct/> .\n"
    '@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\nwd:Q1 rdfs:label "one"@en ;\n'
    '  wdt:P19 wd:Q2, wd:Q3 .\nwd:P19 rdfs:label "place of birth"@en .\n'
)
CONNER_SAMPLES = [
    ConnerSample(
        id=f"nq:{i}", task="nq", topic="t", query="q?", gold_knowledge="g", gold_answer="a"
    )
    for i in range(3)
]

# ---------------------------------------------------------------- mutations

JUNK_VALUES: list[Any] = [
    None, True, 0, -1, 10**400, 1e308, float("nan"), float("inf"), "", "\x00", "\u2028",
    "x" * 5000, [], {}, [[[[]]]], {"a": {"b": [1, {"c": None}]}}, ["a", "b"], ["a", "b", "c"],
    [["a", "b"]], [["a", "b", 3]], "specific-0", "supportive", "ok", "failed", "nq:0", -0.0,
]  # fmt: skip
RAW_JUNK = [
    b"NaN", b"Infinity", b"-Infinity", b"1e999999", b"9" * 5000, b"[" * 3000, b"{" * 3000,
    b'"\\ud800"', b'"\\u0000"', b"\xff\xfe", b"\x91quoted\x92", b"\xc3", b"\x00", b"\r",
    b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"null", b"true", b"[]", b"{}",
]  # fmt: skip
INVALID_UTF8 = [b"\x80", b"\xff", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\x91", b"\xc0\xaf"]


def _json_line(rng: random.Random, record: dict[str, Any]) -> bytes:
    """One JSON line from ``record`` after a field-level mutation (or none)."""
    record = dict(record)
    keys = list(record)
    op = rng.randrange(8)
    if op == 0 and keys:
        del record[rng.choice(keys)]
    elif op == 1 and keys:
        record[rng.choice(keys)] = rng.choice(JUNK_VALUES)
    elif op == 2:
        record[rng.choice(["extra", "id", "", "\u00e9", "x" * 50])] = rng.choice(JUNK_VALUES)
    elif op == 3 and keys:  # a raw, possibly invalid, JSON token as a value
        key = rng.choice(keys)
        text = json.dumps({k: v for k, v in record.items() if k != key}, ensure_ascii=False)
        head = f"{{{json.dumps(key)}: ".encode()
        body = text[1:-1].encode()
        return head + rng.choice(RAW_JUNK) + (b", " + body if body else b"") + b"}"
    elif op == 4:
        return json.dumps(rng.choice(JUNK_VALUES)).encode()
    elif op == 5 and keys:  # a value of the wrong type taken from another field
        a, b = rng.choice(keys), rng.choice(keys)
        record[a] = record[b]
    return json.dumps(record, ensure_ascii=rng.random() < 0.5).encode()


def _jsonl_file(rng: random.Random, records: list[dict[str, Any]]) -> bytes:
    lines = [
        _json_line(rng, rng.choice(records)) if rng.random() < 0.4 else json.dumps(r).encode()
        for r in records
    ]
    if rng.random() < 0.2:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice([b"", b"   ", b"\r", b"\t"]))
    return rng.choice([b"\n", b"\r\n"]).join(lines) + rng.choice([b"\n", b"", b"\r\n", b"\n\n"])


def _byte_mutation(rng: random.Random, data: bytes) -> bytes:
    """A file-level mutation of ``data``."""
    op = rng.randrange(12)
    pos = rng.randrange(len(data) + 1)
    if op == 0:
        return rng.randbytes(rng.randrange(300))
    if op == 1:
        return data[:pos]
    if op == 2:
        return data[:pos] + rng.choice(INVALID_UTF8) + data[pos:]
    if op == 3:
        return BOM + data
    if op == 4:
        return data[:pos] + BOM + data[pos:]
    if op == 5:
        return data[:pos] + b"\x00" * rng.randrange(1, 4) + data[pos:]
    if op == 6:
        return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n", b"\xe2\x80\xa8"]))
    if op == 7:
        return data.decode("utf-8", "replace").encode("utf-16")
    if op == 8:
        return b""
    if op == 9:
        flips = bytearray(data)
        for _ in range(rng.randrange(1, 5)):
            if flips:
                flips[rng.randrange(len(flips))] = rng.randrange(256)
        return bytes(flips)
    if op == 10:
        return data[:pos] + rng.choice(RAW_JUNK) + data[pos:]
    return data.decode("utf-8", "replace").encode("cp1252", "replace") + b"\x91\x92\xe9"


def _jsonl_case(records: list[dict[str, Any]]) -> Callable[[random.Random], bytes]:
    def make(rng: random.Random) -> bytes:
        data = _jsonl_file(rng, records)
        return _byte_mutation(rng, data) if rng.random() < 0.4 else data

    return make


def _text_case(text: str) -> Callable[[random.Random], bytes]:
    lines = text.encode().split(b"\n")

    def make(rng: random.Random) -> bytes:
        data = text.encode()
        if rng.random() < 0.5:  # a line-level mutation: drop, repeat, or shuffle cells
            mutated = list(lines)
            i = rng.randrange(len(mutated))
            op = rng.randrange(5)
            if op == 0:
                del mutated[i]
            elif op == 1:
                mutated.insert(i, mutated[i])
            elif op == 2:
                mutated[i] = mutated[i].replace(b",", b",,", 1)
            elif op == 3:
                mutated[i] = mutated[i].replace(b",", b'"', 1)
            else:
                mutated[i] = b"," * rng.randrange(5) + b"x" * rng.choice([1, 200_000])
            data = b"\n".join(mutated)
        return _byte_mutation(rng, data) if rng.random() < 0.6 else data

    return make


# ---------------------------------------------------------------- the readers


def _run_dir(path: Path) -> object:
    """The records of a run whose samples.jsonl is ``path`` (its run.json written first: records
    without one are refused as orphans before they are read)."""
    held = path.with_name("held.jsonl")
    path.rename(held)
    RunDir.open(path.parent, {"task": "fuzz"}).close()
    held.rename(path)
    run = RunDir.open(path.parent, {"task": "fuzz"})
    return run.records


READERS: dict[str, tuple[str, Callable[[Path], object], Callable[[random.Random], bytes], int]] = {
    "answers": ("answers.jsonl", read_answers, _jsonl_case(ANSWERS), 1500),
    "gold": ("gold.jsonl", read_gold, _jsonl_case(GOLD), 1500),
    "rdf-nt": ("kg.nt", lambda p: list(read_rdf([p])), _text_case(NTRIPLES), 600),
    "rdf-ttl": ("kg.ttl", lambda p: list(read_rdf([p])), _text_case(TURTLE), 600),
    "pairs-csv": ("pairs.csv", read_pairs_csv, _text_case(PAIRS_CSV), 1000),
    "human-labels-csv": ("labels.csv", read_human_labels, _text_case(LABELS_CSV), 800),
    "human-labels-jsonl": ("labels.jsonl", read_human_labels, _jsonl_case(LABELS_JSONL), 500),
    "caqa-samples": ("test.jsonl", load_caqa_split, _jsonl_case(CAQA), 1500),
    "conner-knowledge": (
        "know.jsonl",
        lambda p: read_knowledge(str(p), CONNER_SAMPLES),
        _jsonl_case(KNOWLEDGE),
        1000,
    ),
    "conner-corpus-jsonl": ("corpus.jsonl", read_corpus, _jsonl_case(CORPUS), 400),
    "conner-corpus-tsv": ("corpus.tsv", read_corpus, _text_case("id\ttext\np1\tParis.\n"), 300),
    "run-samples": ("samples.jsonl", read_jsonl_tolerant, _jsonl_case(RUN_RECORDS), 1000),
    "run-dir": ("samples.jsonl", _run_dir, _jsonl_case(RUN_RECORDS), 200),
}
TOTAL = sum(count for *_, count in READERS.values())


def test_the_suite_feeds_at_least_10000_files() -> None:
    assert TOTAL >= 10_000, TOTAL


@pytest.mark.parametrize(
    ("reader", "count"),
    [(name, spec[3]) for name, spec in READERS.items()],
    ids=[f"{name}-{spec[3]}-cases" for name, spec in READERS.items()],
)
def test_reader_never_crashes(reader: str, count: int, tmp_path: Path) -> None:
    filename, read, make, expected = READERS[reader]
    rng = random.Random(f"{SEED}:{reader}")
    parsed = refused = 0
    for case in range(count):
        folder = tmp_path / str(case)
        folder.mkdir()
        path = folder / filename
        data = make(rng)
        path.write_bytes(data)
        try:
            read(path)
        except DataError as exc:
            assert exc.path is not None, f"case {case}: {exc!r} names no file; data={data[:200]!r}"
            # a line (the byte offset is in the message), unless the file has no content at all
            blank = not data.removeprefix(BOM).strip()
            assert exc.line is not None or blank, f"case {case}: {exc!r} names no line"
            refused += 1
        except CitegraphError:
            refused += 1
        except Exception as exc:  # the point of the suite: report the case that crashed
            pytest.fail(
                f"{reader} case {case} crashed with {type(exc).__name__}: {exc}; "
                f"data={data[:300]!r}"
            )
        else:
            parsed += 1
    assert parsed + refused == count == expected
    assert parsed > 0 and refused > 0, (parsed, refused)  # both paths were exercised
