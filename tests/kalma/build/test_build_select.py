"""Knowledge selection for evolutionary question generation: templates, counts, scores.

Expected values are computed by hand in the tests (the exps and logs are written out).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.kalma.build import _templates as _build_templates
from citegraph.kalma.build._select import (
    RelationCounts,
    Selection,
    candidate_facts,
    relation_counts,
    select_fact_async,
    specificity,
)
from citegraph.kalma.build._templates import fact_sentence, pos_source, relation_class, relation_pos
from citegraph.kg import Entity, Subgraph, Triple


def _has_spacy_pipeline() -> bool:
    try:
        return pos_source("auto").startswith("spacy:")
    except MissingDependency:
        return False


needs_spacy = pytest.mark.skipif(not _has_spacy_pipeline(), reason="no spaCy English pipeline")


# ---------------------------------------------------------------- templates
# Real BioKaLMA relation labels (listed from the data), plus the brief's verb examples.
CLASS_TABLE = [
    ("place of birth", "noun"),
    ("date_of_birth", "noun"),
    ("occupation", "noun"),
    ("spouse", "noun"),
    ("sex or gender", "noun"),
    ("member of sports team", "noun"),
    ("given name", "noun"),
    ("award received", "noun"),
    ("languages spoken", "noun"),
    ("genre", "noun"),
    ("(OBSOLETE) playing hand", "noun"),
    ("student of", "prep"),
    ("member of", "prep"),
    ("influenced by", "prep"),
    ("instance of", "prep"),
    ("part of", "prep"),
    ("convicted of", "prep"),
    ("named after", "prep"),
    ("described by source", "prep"),
    ("archives at", "prep"),
    ("present in work", "prep"),
    ("said to be the same as", "prep"),
    ("follows", "verb"),
    ("replaces", "verb"),
    ("succeeds", "verb"),
    ("commands", "verb"),
    ("participated in", "verb"),
    ("founded", "verb"),
]


@pytest.mark.parametrize(("relation", "expected"), CLASS_TABLE)
def test_relation_class_heuristic(relation: str, expected: str) -> None:
    assert relation_class(relation, pos="heuristic") == expected


@needs_spacy
@pytest.mark.parametrize(("relation", "expected"), CLASS_TABLE)
def test_relation_class_spacy(relation: str, expected: str) -> None:
    assert relation_class(relation, pos="spacy") == expected


def test_pos_source_is_recorded() -> None:
    info = relation_pos("student of", pos="heuristic")
    assert (info.pos_source, info.tags, info.text) == ("heuristic", (), "student of")
    assert relation_pos("said to be the same as").pos_source == "override"
    assert relation_pos("date_of_birth", pos="heuristic").text == "date of birth"


@needs_spacy
def test_pos_source_spacy_records_tags() -> None:
    info = relation_pos("influenced by", pos="spacy")
    assert info.pos_source.startswith("spacy:en_core_web_sm")
    assert info.tags == ("VBN", "IN")


def test_missing_spacy_falls_back_or_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_build_templates, "_tagger", lambda: None)
    assert pos_source("auto") == "heuristic"
    with pytest.raises(MissingDependency):
        pos_source("spacy")
    # a label no other test classifies, so the per-label cache is not in the way
    assert relation_pos("works for the test", pos="auto").pos_source == "heuristic"


def _t(relation: str, value: str, subject: str = "Q7259", label: str | None = None) -> Triple:
    return Triple(subject=subject, relation=relation, value=value, subject_label=label)


@pytest.mark.parametrize("pos", ["heuristic", "auto"])
@pytest.mark.parametrize(
    ("triple", "name", "sentence"),
    [
        (_t("place of birth", "Rome"), "Artemisia", "Artemisia's place of birth is Rome."),
        (_t("date_of_birth", "1815-12-10"), "Ada Lovelace",
         "Ada Lovelace's date of birth is 1815-12-10."),
        (_t("student of", "Augustus De Morgan"), "Ada Lovelace",
         "Ada Lovelace is a student of Augustus De Morgan."),
        (_t("instance of", "human"), "Ada Lovelace", "Ada Lovelace is an instance of human."),
        (_t("influenced by", "Mary Somerville"), "Ada Lovelace",
         "Ada Lovelace is influenced by Mary Somerville."),
        (_t("part of", "Byron family"), "Ada Lovelace", "Ada Lovelace is part of Byron family."),
        (_t("participated in", "1936 Summer Olympics"), "Jesse Owens",
         "Jesse Owens participated in 1936 Summer Olympics."),
        (_t("succeeds", "Louis XV"), "Louis XVI", "Louis XVI succeeds Louis XV."),
        (_t("honorific suffix", "Jr."), "Martin Luther King",
         "Martin Luther King's honorific suffix is Jr."),
        (_t("(OBSOLETE) playing hand", "right-handedness"), "Rafael Nadal",
         "Rafael Nadal's playing hand is right-handedness."),
        (_t("spouse", "William King-Noel", label="Ada Lovelace"), "",
         "Ada Lovelace's spouse is William King-Noel."),
    ],
)  # fmt: skip
def test_fact_sentence(triple: Triple, name: str, sentence: str, pos: str) -> None:
    if pos == "auto" and not _has_spacy_pipeline():
        pytest.skip("no spaCy English pipeline")
    assert fact_sentence(triple, name, pos=pos) == sentence  # type: ignore[arg-type]


# ---------------------------------------------------------------- counts and candidates
def _graph(qid: str, name: str, *facts: tuple[str, str]) -> Subgraph:
    triples = tuple(Triple(subject=qid, relation=r, value=v, subject_label=name) for r, v in facts)
    return Subgraph(center=Entity(id=qid, name=name), triples=triples)


ADA = _graph("Q7259", "Ada Lovelace", ("spouse", "William King-Noel"), ("spouse", "Someone"),
             ("occupation", "mathematician"))  # fmt: skip
BYRON = _graph("Q5679", "Lord Byron", ("occupation", "poet"))
SHELLEY = _graph("Q93343", "Percy Shelley", ("movement", "Romanticism"))


def test_relation_counts_counts_people_having_the_relation() -> None:
    counts = relation_counts([[ADA, BYRON], [SHELLEY, ADA]])
    # N = 2 items; spouse: Ada in both items (twice in one graph still counts once) = 2;
    # occupation: Ada, Byron, Ada = 3; movement: Shelley = 1
    assert counts == RelationCounts(n_items=2, counts={"movement": 1, "occupation": 3, "spouse": 2})


def test_specificity_by_hand() -> None:
    counts = RelationCounts(n_items=2, counts={"occupation": 4, "spouse": 1, "movement": 2})
    assert specificity("occupation", counts) == pytest.approx(0.0)  # log(4/4)
    assert specificity("spouse", counts) == pytest.approx(1.3862943611198906)  # log(4/1)
    assert specificity("movement", counts) == pytest.approx(0.6931471805599453)  # log(4/2)
    assert specificity("unseen", counts) == pytest.approx(1.3862943611198906)  # Count 0 -> 1
    with pytest.raises(ConfigError):
        specificity("spouse", RelationCounts(n_items=0, counts={}))


def test_candidate_facts_exclusions_order_and_dedup() -> None:
    person = _graph(
        "Q1", "Stephen Crane",
        ("name", "Stephen Crane"),
        ("place of birth", "Newark"),
        ("topic's main category", "Category:Stephen Crane"),
        ("topic's main infobox", "Template:Stephen Crane"),
        ("religion", "atheism"),
        ("place of birth", "Newark"),
        ("movement", "literary realism"),
    )  # fmt: skip
    other = _graph("Q2", "Cora Crane", ("spouse", "Stephen Crane"))
    used = {Triple(subject="Q1", relation="religion", value="atheism")}
    got = candidate_facts([person, other], used)
    assert [t.key for t in got] == [
        ("Q1", "place of birth", "Newark"),
        ("Q1", "movement", "literary realism"),
        ("Q2", "spouse", "Stephen Crane"),
    ]
    got = candidate_facts([person], set(), exclude_relations={"movement"}, exclude_value_markers=())
    assert [t.relation for t in got] == [
        "name", "place of birth", "topic's main category", "topic's main infobox", "religion",
    ]  # fmt: skip


# ---------------------------------------------------------------- selection
class FakePerplexity:
    """Returns fixed values and records every call."""

    def __init__(self, values: Sequence[float | None]) -> None:
        self.values = list(values)
        self.calls: list[list[str]] = []

    async def __call__(self, texts: Sequence[str]) -> list[float | None]:
        self.calls.append(list(texts))
        return self.values


COUNTS = RelationCounts(n_items=2, counts={"occupation": 4, "spouse": 1, "movement": 2})
CANDIDATES = [
    _t("occupation", "mathematician"),
    _t("spouse", "William King-Noel"),
    _t("movement", "Romanticism"),
]
NAMES = {"Q7259": "Ada Lovelace"}
PARAGRAPH = "Ada Lovelace was the daughter of Lord Byron."


def _select(values: Sequence[float | None], **kw: object) -> tuple[Selection, FakePerplexity]:
    fake = FakePerplexity(values)
    candidates = kw.pop("candidates", CANDIDATES)
    selection = asyncio.run(
        select_fact_async(PARAGRAPH, candidates, COUNTS, fake, names=NAMES, **kw)  # type: ignore[arg-type]
    )
    return selection, fake


def test_select_fact_scores_by_hand() -> None:
    selection, fake = _select([10.0, 20.0, 40.0], alpha=0.5)
    # inv perplexities 0.1, 0.05, 0.025; softmax
    e1, e2, e3 = math.exp(0.1), math.exp(0.05), math.exp(0.025)
    coherence = [e1 / (e1 + e2 + e3), e2 / (e1 + e2 + e3), e3 / (e1 + e2 + e3)]
    spec = [0.0, math.log(4), math.log(2)]
    score = [0.5 * s + 0.5 * c for s, c in zip(spec, coherence, strict=True)]
    # 0.1737, 0.8584, 0.5077 -> spouse, movement, occupation
    assert selection.chosen == CANDIDATES[1]
    by_index = sorted(selection.candidates, key=lambda c: c.index)
    assert [c.rank for c in by_index] == [3, 1, 2]
    assert [c.index for c in selection.candidates] == [1, 2, 0]  # best first
    assert [c.count for c in by_index] == [4, 1, 2]
    assert [c.inv_perplexity for c in by_index] == pytest.approx([0.1, 0.05, 0.025])
    assert [c.coherence for c in by_index] == pytest.approx(coherence)
    assert [c.specificity for c in by_index] == pytest.approx(spec)
    assert [c.score for c in by_index] == pytest.approx(score)
    assert by_index[1].score == pytest.approx(0.8583500939)  # 0.5*1.3862944 + 0.5*0.3304058
    assert selection.n_unmeasured == 0 and selection.alpha == 0.5
    # one call, every candidate: the scorer can batch
    assert fake.calls == [
        [
            f"{PARAGRAPH} Ada Lovelace's occupation is mathematician.",
            f"{PARAGRAPH} Ada Lovelace's spouse is William King-Noel.",
            f"{PARAGRAPH} Ada Lovelace's movement is Romanticism.",
        ]
    ]


def test_alpha_extremes() -> None:
    # alpha = 0: pure coherence -> lowest perplexity (occupation); alpha = 1: rarest (spouse)
    assert _select([10.0, 20.0, 40.0], alpha=0.0)[0].chosen == CANDIDATES[0]
    only_rarity, _ = _select([10.0, 20.0, 40.0], alpha=1.0)
    assert only_rarity.chosen == CANDIDATES[1]
    assert [c.score for c in only_rarity.candidates] == pytest.approx([math.log(4), math.log(2), 0])


@pytest.mark.parametrize("alpha", [-0.1, 1.1, float("nan")])
def test_alpha_bounds(alpha: float) -> None:
    with pytest.raises(ConfigError):
        _select([10.0, 20.0, 40.0], alpha=alpha)


def test_ties_go_to_the_first_candidate() -> None:
    twins = [_t("spouse", "A"), _t("spouse", "B")]
    selection, _ = _select([15.0, 15.0], candidates=twins)
    assert selection.candidates[0].score == selection.candidates[1].score
    assert selection.chosen == twins[0]
    assert [(c.index, c.rank) for c in selection.candidates] == [(0, 1), (1, 2)]


def test_unmeasured_perplexity_gets_zero_coherence() -> None:
    selection, _ = _select([10.0, None, float("nan")], alpha=0.5)
    by_index = sorted(selection.candidates, key=lambda c: c.index)
    # the softmax runs over the one measured value: exp(0.1) / exp(0.1) = 1
    assert [c.coherence for c in by_index] == [1.0, 0.0, 0.0]
    assert [c.perplexity for c in by_index] == [10.0, None, None]
    assert by_index[0].note is None and by_index[1].note and by_index[2].note
    assert selection.n_unmeasured == 2
    # scores: 0.5*0 + 0.5*1 = 0.5; 0.5*log 4 = 0.693; 0.5*log 2 = 0.347
    assert [c.score for c in by_index] == pytest.approx([0.5, 0.6931471805599453, 0.3465735902])
    assert selection.chosen == CANDIDATES[1]


def test_two_measured_softmax() -> None:
    selection, _ = _select([10.0, None, 40.0], alpha=0.0)
    by_index = sorted(selection.candidates, key=lambda c: c.index)
    e1, e3 = math.exp(0.1), math.exp(0.025)
    assert [c.coherence for c in by_index] == pytest.approx([e1 / (e1 + e3), 0.0, e3 / (e1 + e3)])


def test_sentence_scope_and_errors() -> None:
    _, fake = _select([10.0, 20.0, 40.0], scope="sentence")
    assert fake.calls[0][0] == "Ada Lovelace's occupation is mathematician."
    with pytest.raises(ModelError):
        _select([10.0, 20.0])
    with pytest.raises(ConfigError):
        _select([], candidates=[])
    with pytest.raises(ConfigError):
        _select([10.0, 20.0, 40.0], scope="document")


def test_selection_dumps_to_json() -> None:
    selection, _ = _select([10.0, None, 40.0])
    dumped = [c.model_dump(mode="json") for c in selection.candidates]
    assert json.loads(json.dumps(dumped))[0]["triple"]["relation"] == "spouse"


# ---------------------------------------------------------------- real data
def test_biokalma_counts_sanity(data_dir: Path) -> None:
    """Counts over BioKaLMA's two-person entries: frequent relations are less specific."""
    entries = json.loads((data_dir / "biokalma" / "simple_question_graph.json").read_text())
    pools = [[Subgraph.from_entity_dict(e) for e in graphs] for _, graphs in entries
             if len(graphs) == 2]  # fmt: skip
    counts = relation_counts(pools)
    assert counts.n_items == len(pools) > 100
    spec = {r: specificity(r, counts) for r in counts.counts}
    assert all(value >= 0 for value in spec.values())  # two people per item: Count_r <= 2N
    assert spec["sex or gender"] < spec["occupation"] < spec["student of"]
    assert spec["instance of"] == pytest.approx(0.0)  # every person is a human
    # every relation of the data gets a sentence, and the heuristic agrees with spaCy
    for relation in counts.counts:
        sentence = fact_sentence(_t(relation, "X"), "Ada Lovelace", pos="heuristic")
        assert sentence.startswith("Ada Lovelace") and sentence.endswith("X.")
        if _has_spacy_pipeline():
            assert relation_class(relation) == relation_class(relation, pos="heuristic"), relation


def test_minmax_coherence_by_hand() -> None:
    """1/perp = [0.1, 0.05, 0.025] -> minmax [1, (0.05 - 0.025) / 0.075 = 1/3, 0]."""
    import asyncio

    from citegraph.kalma.build._select import RelationCounts, select_fact_async
    from citegraph.kg import Triple

    facts = [
        Triple(subject="Q1", relation=r, value=v)
        for r, v in (("occupation", "painter"), ("spouse", "B"), ("movement", "C"))
    ]
    counts = RelationCounts(n_items=2, counts={"occupation": 4, "spouse": 1, "movement": 2})

    async def ppl(texts):
        return [10.0, 20.0, 40.0]

    sel = asyncio.run(
        select_fact_async(
            "P.", facts, counts, ppl, alpha=0.5, names={"Q1": "A"}, coherence="minmax"
        )
    )
    by_value = {c.triple.value: c for c in sel.candidates}
    assert by_value["painter"].coherence == pytest.approx(1.0)
    assert by_value["B"].coherence == pytest.approx(1 / 3)
    assert by_value["C"].coherence == pytest.approx(0.0)
    # scores: painter 0.5*ln(4/4) + 0.5*1 = 0.5; B 0.5*ln 4 + 0.5/3 = 0.8598; C 0.5*ln 2 = 0.3466
    assert by_value["B"].score == pytest.approx(0.5 * 1.3862944 + 0.5 / 3, abs=1e-6)
    assert sel.chosen.value == "B" and sel.coherence == "minmax"
