"""A ``json-schema`` reply renders with every sentence cited, or is refused (issue 37, item 10).

A JSON sentence is one claim with its citations. Its text may still hold sentence ends of its
own (``He lived. Then he died``, a ``?``, a ``!``, a blank line): rendered as they were, the
citations followed the last sentence only and the others were read uncited. A sentence citing
nothing (``"citations": []``, the schema's ``minItems: 1``) and citations that are not a list
(``"citations": "NA"`` was read letter by letter) are refused with the reason.
"""

from __future__ import annotations

import json
import random

import pytest

from _kg_helpers import subgraph
from citegraph.errors import ResponseFormatError
from citegraph.kalma.constrain import CitationChoices, render_json_answer
from citegraph.kalma.parse import parse_answer

GRAPHS = (subgraph("Q1", "Ada", ("occupation", "mathematician"), ("father", "Lord Byron")),)
CHOICES = CitationChoices(GRAPHS)
JOB, FATHER = "Q1, occupation: mathematician", "Q1, father: Lord Byron"


def _reply(*sentences: tuple[object, object]) -> str:
    return json.dumps({"sentences": [{"text": t, "citations": c} for t, c in sentences]})


def _cited_per_sentence(text: str) -> list[int]:
    return [len(s.citations) for s in parse_answer(text, GRAPHS).sentences]


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("He lived. Then he died", "He lived; Then he died [Q1, occupation: mathematician]."),
        ("He lived? Then he died", "He lived; Then he died [Q1, occupation: mathematician]."),
        ("He lived! Then he died!", "He lived; Then he died [Q1, occupation: mathematician]!"),
        ("He lived\n\nThen he died", "He lived; Then he died [Q1, occupation: mathematician]."),
        ("He lived.\nThen he died.", "He lived; Then he died [Q1, occupation: mathematician]."),
        (
            'He said "no." Then he left',
            'He said "no"; Then he left [Q1, occupation: mathematician].',
        ),
        ("Born in the U.S. The end", "Born in the U.S; The end [Q1, occupation: mathematician]."),
    ],
)
def test_a_sentence_with_sentence_ends_of_its_own_stays_one_cited_sentence(
    text: str, rendered: str
) -> None:
    out = render_json_answer(_reply((text, [JOB]), ("More", ["NA"])), CHOICES)
    assert out == f"{rendered} More [NA]."
    assert _cited_per_sentence(out) == [1, 1]


def test_what_does_not_end_a_sentence_is_kept() -> None:
    text = "Dr. Ada met J. R. Smith on Jan. 5, 1840 in the U.S. capital; it cost 3.5 pounds"
    out = render_json_answer(_reply((text, [JOB])), CHOICES)
    assert out == f"{text} [Q1, occupation: mathematician]."
    assert _cited_per_sentence(out) == [1]


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (_reply(("Ada", [])), "sentence 1 cites nothing; the schema asks for at least one"),
        (_reply(("Ada", [JOB]), ("Byron", [])), "sentence 2 cites nothing"),
        (_reply(("Ada", "NA")), "sentence 1's 'citations' must be a list of strings, got str"),
        (_reply(("Ada", [JOB, 3])), "'citations' must be a list of strings, got list"),
        (_reply(("Ada", None)), "'citations' must be a list of strings, got none"),
        (_reply((7, ["NA"])), "sentence 1 has no 'text' string"),
        (_reply((None, ["NA"])), "sentence 1 has no 'text' string"),
        ('{"sentences": ["Ada"]}', "sentence 1 has no 'text' string"),
        ('{"sentences": {"text": "Ada"}}', 'expected an object {"sentences": [...]}'),
    ],
)
def test_replies_off_the_schema_are_refused_with_the_reason(reply: str, says: str) -> None:
    with pytest.raises(ResponseFormatError) as caught:
        render_json_answer(reply, CHOICES)
    assert "not the JSON the schema asks for" in str(caught.value)
    assert says in str(caught.value)


def test_random_texts_render_with_every_sentence_cited() -> None:
    """Texts made of words, sentence ends, abbreviations, quotes and line breaks: each parser
    sentence of the rendered answer holds a citation, and each JSON sentence gives one."""
    rng = random.Random(37)
    pieces = ["He", "lived", "Then", "the", "U.S.", "Dr.", "3.5", '"no."', "(yes!)", "x"]
    ends = [". ", "? ", "! ", "\n\n", "\n", "... ", " ", " ", " ", "? ... "]
    for _ in range(300):
        sentences = []
        for _ in range(rng.randint(1, 4)):
            words = [rng.choice(pieces) + rng.choice(ends) for _ in range(rng.randint(1, 8))]
            cited = rng.sample([JOB, FATHER, "NA"], rng.randint(1, 3))
            sentences.append(("".join(words), cited))
        out = render_json_answer(_reply(*sentences), CHOICES)
        parsed = parse_answer(out, GRAPHS)
        assert all(s.citations for s in parsed.sentences), (sentences, out)
        assert len(parsed.sentences) <= len(sentences)
        assert not parsed.issues, out
