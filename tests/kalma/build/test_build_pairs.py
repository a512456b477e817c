"""kalma build, Appendix A.1-A.2: the pairs file, complete names, disambiguation, KG sampling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.kalma.build._disambiguate import (
    Resolution,
    disambiguate_async,
    disambiguate_many_async,
    resolution_counts,
)
from citegraph.kalma.build._links import connecting_facts
from citegraph.kalma.build._pairs import (
    PersonPair,
    filter_complete,
    is_complete_name,
    person_pair_candidates,
    read_pairs_csv,
    sample_pairs,
)
from citegraph.kg import OxigraphKG, Subgraph, Triple, load_biokalma_kg


# ---------------------------------------------------------------- the pairs file
def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_read_pairs_csv_happy_path(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "name1,relation,name2,paragraph\n"
        'William Shakespeare,spouse, Anne Hathaway ,"He married Anne Hathaway.\nIn 1582."\n'
        "\n"
        "Mary Shelley,father,William Godwin,\n",
    )
    first, second = read_pairs_csv(path)
    assert first == PersonPair(
        name_a="William Shakespeare",
        relation="spouse",
        name_b="Anne Hathaway",
        paragraph="He married Anne Hathaway.\nIn 1582.",
        source=f"csv:{path}:2",
    )
    # The quoted paragraph spans lines 2-3 and line 4 is blank: the next record is line 5.
    assert (second.name_a, second.paragraph, second.source) == (
        "Mary Shelley",
        None,
        f"csv:{path}:5",
    )


def test_read_pairs_csv_aliases_bom_and_extra_columns(tmp_path: Path) -> None:
    path = _csv(tmp_path, "\ufeffid,Head,RELATION,tail\n7,Ada Lovelace,father,Lord Byron\n")
    [pair] = read_pairs_csv(path)
    assert (pair.name_a, pair.relation, pair.name_b, pair.paragraph) == (
        "Ada Lovelace",
        "father",
        "Lord Byron",
        None,
    )
    [with_text] = read_pairs_csv(_csv(tmp_path, "head,relation,tail,text\nA B,spouse,C D,Hi.\n"))
    assert with_text.paragraph == "Hi."


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("name1,relation\nA B,spouse\n", 1, "name2"),
        ("name1,head,relation,name2\n", 1, "head"),
        ("name1,relation,name2\nA B,spouse,C D\nA B,,C D\n", 3, "relation"),
        ("name1,relation,name2\n\nA B,spouse\n", 3, "name2"),
        ("name1,relation,name2\nA B,spouse,C D,extra\n", 2, None),
    ],
)
def test_read_pairs_csv_errors_name_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None
) -> None:
    path = _csv(tmp_path, text)
    with pytest.raises(DataError) as info:
        read_pairs_csv(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)
    assert str(info.value).startswith(f"{path}:{line}")


def test_read_pairs_csv_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError):
        read_pairs_csv(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="empty file"):
        read_pairs_csv(_csv(tmp_path, "\n\n"))


# ---------------------------------------------------------------- complete names
@pytest.mark.parametrize(
    ("name", "complete"),
    [
        ("William Shakespeare", True),
        ("Anne Hathaway", True),
        ("John F. Kennedy", True),  # the middle initial does not count, two parts remain
        ("Martin Luther King, Jr.", True),
        ("Stephen King", True),  # "King" is a title only in front
        ("Sir Isaac Newton", True),
        ("Ludwig van Beethoven", True),
        ("Jean-Paul Sartre", True),
        ("Sima Yi", True),
        ("John II Komnenos", True),
        ("Plato", False),
        ("J. R. R. Tolkien", False),
        ("J.R.R. Tolkien", False),
        ("J Smith", False),
        ("Queen Elizabeth II", False),
        ("Louis XIV", False),
        ("Lady Gaga", False),
        ("Dr. Smith", False),
        ("Catherine the Great", False),
        ("毛泽东", False),
        ("", False),
    ],
)
def test_is_complete_name(name: str, complete: bool) -> None:
    assert is_complete_name(name) is complete


def test_filter_complete_keeps_order_and_says_why() -> None:
    good = PersonPair(name_a="Mary Shelley", relation="father", name_b="William Godwin", source="x")
    bad = PersonPair(name_a="Plato", relation="student of", name_b="Socrates", source="y")
    half = PersonPair(name_a="Ada Lovelace", relation="father", name_b="Lord Byron", source="z")
    kept, dropped = filter_complete([bad, good, half])
    assert kept == [good]
    assert [(d.pair, d.reason) for d in dropped] == [
        (bad, "incomplete name: name_a 'Plato', name_b 'Socrates'"),
        (half, "incomplete name: name_b 'Lord Byron'"),
    ]


# ---------------------------------------------------------------- disambiguation (A.2)
def _t(subject: str, name: str, relation: str, value: str, value_id: str | None = None) -> Triple:
    return Triple(
        subject=subject, relation=relation, value=value, subject_label=name, value_id=value_id
    )


@pytest.fixture(scope="module")
def toy_kg() -> OxigraphKG:
    """Two Anne Hathaways (ids as in a Wikidata-style KG: entity values carry ids) and, in
    BioKaLMA style (label values), a son of two same-named fathers and a house."""
    kg = OxigraphKG.in_memory()
    kg.add_triples(
        [
            _t("Q100", "Anne Hathaway", "instance of", "human"),
            _t("Q100", "Anne Hathaway", "occupation", "actor"),
            _t("Q100", "Anne Hathaway", "spouse", "Adam Shulman", "Q400"),
            _t("Q200", "Anne Hathaway", "instance of", "human"),
            _t("Q200", "Anne Hathaway", "spouse", "William Shakespeare", "Q300"),
            _t("Q300", "William Shakespeare", "instance of", "human"),
            _t("Q300", "William Shakespeare", "spouse", "Anne Hathaway", "Q200"),
            _t("Q300", "William Shakespeare", "occupation", "playwright"),
            _t("Q400", "Adam Shulman", "instance of", "human"),
            # Label values only: both John Smiths name Paul Smith as their father.
            _t("Q10", "John Smith", "instance of", "human"),
            _t("Q10", "John Smith", "father", "Paul Smith"),
            _t("Q11", "John Smith", "instance of", "human"),
            _t("Q11", "John Smith", "father", "Paul Smith"),
            _t("Q12", "Paul Smith", "instance of", "human"),
            _t("Q13", "Hamnet Shakespeare", "instance of", "human"),
            _t("Q13", "Hamnet Shakespeare", "doctoral_advisor", "Paul  SMITH"),
            _t("Q600", "Mary Arden", "instance of", "house"),
        ]
    )
    return kg


def _run(pair: PersonPair, kg: OxigraphKG) -> Resolution:
    return asyncio.run(disambiguate_async(pair, kg))


def _pair(a: str, relation: str, b: str) -> PersonPair:
    return PersonPair(name_a=a, relation=relation, name_b=b, source="test")


def test_shakespeare_marries_the_right_anne_hathaway(toy_kg: OxigraphKG) -> None:
    result = _run(_pair("William Shakespeare", "Spouse", "Anne Hathaway"), toy_kg)
    assert result.status == "resolved"
    assert (result.entity_a.id, result.entity_b.id) == ("Q300", "Q200")  # type: ignore[union-attr]
    assert (result.candidates_a, result.candidates_b) == (("Q300",), ("Q100", "Q200"))
    # Both directions connect; a->b comes first.
    assert [t.key for t in result.facts] == [
        ("Q300", "spouse", "Anne Hathaway"),
        ("Q200", "spouse", "William Shakespeare"),
    ]
    assert [g.center.id for g in result.pool] == ["Q300", "Q200"]
    assert result.pool[0].values("occupation") == ["playwright"]
    # The actress is found by her own spouse.
    actress = _run(_pair("anne hathaway", "spouse", "Adam Shulman"), toy_kg)
    assert (actress.status, actress.entity_a.id) == ("resolved", "Q100")  # type: ignore[union-attr]


def test_reversed_direction_with_label_values(toy_kg: OxigraphKG) -> None:
    # Only Hamnet's fact exists (Paul Smith has no facts pointing back): b --relation--> a,
    # relation "doctoral_advisor" vs "doctoral advisor", value "Paul  SMITH" vs the name.
    result = _run(_pair("Paul Smith", "doctoral advisor", "Hamnet Shakespeare"), toy_kg)
    assert result.status == "resolved"
    assert (result.entity_a.id, result.entity_b.id) == ("Q12", "Q13")  # type: ignore[union-attr]
    assert [t.key for t in result.facts] == [("Q13", "doctoral_advisor", "Paul  SMITH")]


def test_two_identical_candidates_are_ambiguous(toy_kg: OxigraphKG) -> None:
    result = _run(_pair("John Smith", "father", "Paul Smith"), toy_kg)
    assert result.status == "ambiguous"
    assert result.entity_a is None and result.entity_b is None
    assert result.facts == () and result.pool == ()
    assert [(c.a, c.b) for c in result.connections] == [("Q10", "Q12"), ("Q11", "Q12")]
    assert "none chosen" in result.reason


def test_unresolved_says_why(toy_kg: OxigraphKG) -> None:
    not_connected = _run(_pair("William Shakespeare", "father", "Anne Hathaway"), toy_kg)
    assert not_connected.status == "unresolved"
    assert not_connected.reason == "no pair of the 1 x 2 candidates is connected by 'father'"
    nobody = _run(_pair("Nobody Here", "spouse", "Anne Hathaway"), toy_kg)
    assert (nobody.status, nobody.reason) == ("unresolved", "no entity named 'Nobody Here'")
    assert nobody.candidates_b == ("Q100", "Q200")
    house = _run(_pair("William Shakespeare", "mother", "Mary Arden"), toy_kg)
    assert house.reason == "1 entity named 'Mary Arden', none of type 'human'"


def test_disambiguate_many_keeps_order_and_counts(toy_kg: OxigraphKG) -> None:
    pairs = [
        _pair("John Smith", "father", "Paul Smith"),
        _pair("William Shakespeare", "spouse", "Anne Hathaway"),
        _pair("Nobody Here", "spouse", "Anne Hathaway"),
        _pair("Anne Hathaway", "spouse", "Adam Shulman"),
    ]
    seen: list[tuple[int, int]] = []
    results = asyncio.run(
        disambiguate_many_async(
            pairs, toy_kg, concurrency=2, progress=lambda d, n: seen.append((d, n))
        )
    )
    assert [r.pair for r in results] == pairs
    assert resolution_counts(results) == {"resolved": 2, "ambiguous": 1, "unresolved": 1}
    assert resolution_counts([]) == {"resolved": 0, "ambiguous": 0, "unresolved": 0}
    assert sorted(seen) == [(1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(ConfigError):
        asyncio.run(disambiguate_many_async(pairs, toy_kg, concurrency=0))


def test_connecting_facts_ignores_self_and_other_ids() -> None:
    a = Subgraph.from_entity_dict({"qid": "Q1", "name": "A B", "spouse": "C D"})
    b = Subgraph.from_entity_dict({"qid": "Q2", "name": "C D"})
    assert [t.key for t in connecting_facts("spouse", a, b)] == [("Q1", "spouse", "C D")]
    assert connecting_facts("spouse", a, a) == []
    # An entity value connects by id only, whatever its label.
    wrong_id = Subgraph(center=a.center, triples=(_t("Q1", "A B", "spouse", "C D", "Q9"),))
    assert connecting_facts("spouse", wrong_id, b) == []


# ---------------------------------------------------------------- sampling from BioKaLMA
@pytest.fixture(scope="module")
def biokalma(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> OxigraphKG:
    return load_biokalma_kg(data_dir, cache_dir=tmp_path_factory.mktemp("kg"))


def test_sample_pairs_from_biokalma(biokalma: OxigraphKG) -> None:
    pairs = sample_pairs(biokalma, 12, seed=0)
    assert len(pairs) == 12
    keys = {(frozenset((p.qid_a, p.qid_b)), p.relation) for p in pairs}
    assert len(keys) == 12
    for p in pairs:
        assert p.source == "kg-sample" and p.paragraph is None
        assert p.qid_a is not None and p.qid_b is not None
        assert is_complete_name(p.name_a) and is_complete_name(p.name_b)
        # BioKaLMA values are labels: the fact's value is the other person's name.
        assert biokalma.has_fact_sync(Triple(subject=p.qid_a, relation=p.relation, value=p.name_b))
        assert biokalma.entity_sync(p.qid_b).name == p.name_b  # type: ignore[union-attr]
    assert sample_pairs(biokalma, 12, seed=0) == pairs
    assert sample_pairs(biokalma, 5, seed=0) == pairs[:5]
    assert sample_pairs(biokalma, 12, seed=1) != pairs
    # Every sampled pair resolves, by the A.2 rule, to the ids it was sampled with.
    results = asyncio.run(disambiguate_many_async(pairs, biokalma))
    assert [(r.status, r.entity_a.id, r.entity_b.id) for r in results] == [  # type: ignore[union-attr]
        ("resolved", p.qid_a, p.qid_b) for p in pairs
    ]
    with pytest.raises(ConfigError):
        sample_pairs(biokalma, 0)


def test_biokalma_candidates_hand_checked(biokalma: OxigraphKG) -> None:
    candidates = {(p.qid_a, p.relation, p.qid_b) for p in person_pair_candidates(biokalma)}
    # Bob Marley (Q409) has "child": "Ziggy Marley", the one person of that name (Q199418).
    assert ("Q409", "child", "Q199418") in candidates
    # Martha Jefferson Randolph (Q255159) has "father": "Thomas Jefferson", a name two people
    # carry (Q11812, Q76012398): ambiguous, so never sampled.
    assert not any(a == "Q255159" and r == "father" for a, r, _ in candidates)
    # Gordian II (Q1803) "child": "Gordian III": incomplete names.
    assert not any("Q1803" in (a, b) for a, _, b in candidates)
    ambiguous = asyncio.run(
        disambiguate_async(
            _pair("Martha Jefferson Randolph", "father", "Thomas Jefferson"), biokalma
        )
    )
    assert ambiguous.status == "ambiguous"
    assert [(c.a, c.b) for c in ambiguous.connections] == [
        ("Q255159", "Q11812"),
        ("Q255159", "Q76012398"),
    ]
