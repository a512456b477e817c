"""The lexical triple matcher and the cascade, with hand-checked cases and real BioKaLMA facts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, ModelError
from citegraph.kg import Subgraph
from citegraph.models import NLIModel, NLIPair, NLIVerdict, nli_model
from citegraph.models.nli import CascadeNLI, LexicalNLI, value_from_hypothesis, value_in_text


def _entails(model: NLIModel, pairs: Sequence[tuple[str, str]]) -> list[NLIVerdict]:
    return asyncio.run(model.entails([NLIPair(premise=p, hypothesis=h) for p, h in pairs]))


def test_value_from_hypothesis() -> None:
    assert value_from_hypothesis("place of birth: Newark") == "Newark"
    assert value_from_hypothesis("notable work: Faust: Part One") == "Faust: Part One"
    assert value_from_hypothesis("Newark") == "Newark"


@pytest.mark.parametrize(
    ("premise", "hypothesis", "expected"),
    [
        ("Kurt Gödel was a logician.", "name: Kurt Godel", True),
        ("Kurt Godel was a logician.", "name: Kurt Gödel", True),
        ("He was born in Newark, New Jersey.", "place of birth: Newark", True),
        ("He was born in Newarkshire.", "place of birth: Newark", False),
        ("He was born on 1 November 1871.", "date of birth: 1871-11-01", True),
        ("He was born on November 1, 1871.", "date of birth: 1871-11-01", True),
        ("He was born on Nov. 1, 1871.", "date of birth: 1871-11-01", True),
        ("He was born on 1871-11-01.", "date of birth: 1871-11-01", True),
        ("He was born in 1871.", "date of birth: 1871-11-01", False),  # year only: off by default
        ("He was born on November 2, 1871.", "date of birth: 1871-11-01", False),
        ("He was born on November 1, 1871.", "date of birth: 1871", True),
        ("He was a writer.", "occupation: novelist", False),  # no synonyms: lexical only
        # The relation is not checked (documented): the value alone decides.
        ("He was born in Newark.", "place of death: Newark", True),
    ],
)
def test_lexical_decisions(premise: str, hypothesis: str, expected: bool) -> None:
    (verdict,) = _entails(LexicalNLI(), [(premise, hypothesis)])
    assert verdict.entailed is expected
    assert verdict.source == "lexical" and verdict.score is None


def test_year_only_dates_option() -> None:
    pairs = [
        ("He was born in 1871.", "date of birth: 1871-11-01"),
        ("He was born in November 1871.", "date of birth: 1871-11-01"),
        ("He was born on November 2, 1871.", "date of birth: 1871-11-01"),
        ("He was born in 1872.", "date of birth: 1871-11-01"),
    ]
    assert [v.entailed for v in _entails(LexicalNLI(), pairs)] == [False, False, False, False]
    model = LexicalNLI(year_only_dates=True)
    assert model.name == "lexical(year_only_dates)"
    assert [v.entailed for v in _entails(model, pairs)] == [True, True, False, False]
    assert nli_model("lexical", year_only_dates=True).name == "lexical(year_only_dates)"
    with pytest.raises(ConfigError, match="unknown option"):
        nli_model("lexical", threshold=0.5)


def _entity(data_dir: Path, qid: str) -> Subgraph:
    entries = json.loads((data_dir / "biokalma" / "complex_question_graph.json").read_text())
    for _, entities in entries:
        for entity in entities:
            if entity["qid"] == qid:
                return Subgraph.from_entity_dict(entity)
    raise AssertionError(f"{qid} not in BioKaLMA")


def test_real_biokalma_facts_stephen_crane(data_dir: Path) -> None:
    crane = _entity(data_dir, "Q206534")
    sentence = "Stephen Crane was born in Newark, New Jersey, on November 1, 1871."
    verdicts = _entails(LexicalNLI(), [(sentence, t.as_text()) for t in crane])
    stated = {t.relation for t, v in zip(crane, verdicts, strict=True) if v.entailed}
    # By hand, over Crane's 26 facts: the sentence names Newark, the date of birth, his name,
    # given name and surname. Not "Category:Stephen Crane" (has the extra word "category"),
    # nor mother/father "... Crane" (the whole value is needed), nor anything else.
    assert stated == {"place of birth", "date_of_birth", "name", "given name", "surname"}

    died = "He died of tuberculosis in Badenweiler in 1900."
    pairs = [(died, t.as_text()) for t in crane]
    verdicts = _entails(LexicalNLI(), pairs)
    default = {t.relation for t, v in zip(crane, verdicts, strict=True) if v.entailed}
    assert default == {"cause of death", "medical condition", "place of death"}
    loose = LexicalNLI(year_only_dates=True)
    verdicts = _entails(loose, pairs)
    with_year = {t.relation for t, v in zip(crane, verdicts, strict=True) if v.entailed}
    assert with_year == default | {"date_of_death"}  # 1900 vs 1900-06-05


def test_real_biokalma_facts_with_accents(data_dir: Path) -> None:
    maric = _entity(data_dir, "Q76346")
    assert ("place of death", "Zürich") in {(t.relation, t.value) for t in maric}
    facts = {t.relation: t.as_text() for t in maric}
    pairs = [
        ("Mileva Maric died in Zurich.", facts["name"]),  # 'name: Mileva Marić'
        ("Mileva Maric died in Zurich.", facts["place of death"]),  # 'place of death: Zürich'
        ("She died in Zurichberg.", facts["place of death"]),
    ]
    assert [v.entailed for v in _entails(LexicalNLI(), pairs)] == [True, True, False]
    moller = _entity(data_dir, "Q697184")
    sentence = "Per Stig Moller served as foreign minister."
    assert value_in_text(sentence, next(t.value for t in moller if t.relation == "name"))


class _Scripted:
    """A fake second stage: entails iff the premise is in ``yes``; records every call."""

    def __init__(self, yes: set[str]) -> None:
        self.yes = yes
        self.calls: list[list[NLIPair]] = []

    @property
    def name(self) -> str:
        return "scripted"

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        self.calls.append(list(pairs))
        return [
            NLIVerdict(entailed=p.premise in self.yes, score=0.5, source="scripted") for p in pairs
        ]


def test_cascade_sends_only_rejected_pairs_in_one_batch() -> None:
    fake = _Scripted(yes={"He wrote novels."})
    cascade = CascadeNLI(fake)
    assert cascade.name == "lexical+scripted"
    pairs = [
        ("He was born in Newark.", "place of birth: Newark"),  # lexical accepts
        ("He wrote novels.", "occupation: writer"),  # lexical rejects, fake accepts
        ("He was born in 1871.", "date of birth: 1871-11-01"),  # both reject
        ("Newark is his birthplace.", "place of birth: Newark"),  # lexical accepts
    ]
    verdicts = _entails(cascade, pairs)
    assert [(v.entailed, v.source) for v in verdicts] == [
        (True, "lexical"),
        (True, "scripted"),
        (False, "scripted"),
        (True, "lexical"),
    ]
    assert [[p.premise for p in call] for call in fake.calls] == [
        ["He wrote novels.", "He was born in 1871."]
    ]
    # Everything accepted lexically: the model is not called at all.
    fake.calls.clear()
    _entails(cascade, [pairs[0]])
    assert fake.calls == []
    assert _entails(cascade, []) == []


def test_cascade_checks_the_verdict_count() -> None:
    class Broken(_Scripted):
        async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
            return []

    with pytest.raises(ModelError, match="0 verdicts for 1 pairs"):
        _entails(CascadeNLI(Broken(set())), [("x", "y: z")])


def test_backends_satisfy_the_protocol() -> None:
    assert isinstance(LexicalNLI(), NLIModel)
    assert isinstance(CascadeNLI(LexicalNLI()), NLIModel)
