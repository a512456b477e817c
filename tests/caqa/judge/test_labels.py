"""Label extraction: every paper-mode rule and every reference-mode quirk, on hand-written
replies with hand-decided labels."""

from __future__ import annotations

import pytest

from citegraph.caqa.judge import extract_label
from citegraph.errors import ConfigError

PAPER = [
    # plain label words, case-insensitive, with punctuation and markdown
    ("Supportive", "four", "supportive"),
    ("supportive.", "four", "supportive"),
    ("**IRRELEVANT**", "four", "irrelevant"),
    ("Contradictory", "four", "contradictory"),
    ("Insufficient", "four", "insufficient"),
    # synonyms
    ("The citation supports the answer.", "four", "supportive"),
    ("Attributable", "four", "supportive"),
    ("Missing", "four", "insufficient"),
    ("The citation is incomplete.", "four", "insufficient"),
    ("Partially supportive", "four", "insufficient"),
    ("The reference only partially supports the claim.", "four", "insufficient"),
    ("The reference refutes the answer.", "four", "contradictory"),
    ("There is a contradiction between them.", "four", "contradictory"),
    ("The reference is not relevant to the question.", "four", "irrelevant"),
    ("The citation is unrelated.", "four", "irrelevant"),
    # negation of support
    ("The citation does not support the answer.", "four", None),
    ("The citation does not support the answer.", "binary", "unsupported"),
    ("Not supportive", "binary", "unsupported"),
    ("It isn't supportive.", "binary", "unsupported"),
    ("Unsupported", "binary", "unsupported"),
    ("Unsupported", "four", None),
    ("The citation cannot fully support the answer.", "binary", "unsupported"),
    ("Not attributable", "binary", "unsupported"),
    ("The citation does not support the answer; it is contradictory.", "four", "contradictory"),
    ("Not supportive. The reference is about another film: irrelevant.", "four", "irrelevant"),
    # other negated words are dropped
    ("The citation is not contradictory. It fully supports the answer.", "four", "supportive"),
    ("No contradiction here, the reference is supportive.", "four", "supportive"),
    # a negation needs to be next to the word (fillers only): "No it is" is not one
    ("No it is supportive", "four", "supportive"),
    # binary set: every non-supportive concept is unsupported
    ("Contradictory", "binary", "unsupported"),
    ("Partially supportive", "binary", "unsupported"),
    ("Insufficient: the citation does not support the date.", "binary", "unsupported"),
    ("Supportive", "binary", "supportive"),
    # AutoIS digits (binary only)
    ("1", "binary", "supportive"),
    ("0", "binary", "unsupported"),
    ("1", "four", None),
    # AttrScore's words (Appendix C)
    ("Attributable", "attrscore", "supportive"),
    ("Extrapolatory", "attrscore", "irrelevant"),
    ("Contradictory", "attrscore", "contradictory"),
    ("Insufficient", "attrscore", None),  # not an AttrScore label
    ("Extrapolatory", "binary", "unsupported"),
    # JSON (structured output)
    ('{"label": "Irrelevant"}', "four", "irrelevant"),
    ('```json\n{"label": "Missing"}\n```', "four", "insufficient"),
    ('{"Label": "Unsupported"}', "binary", "unsupported"),
    ('{"label": 1}', "binary", "supportive"),
    # several labels: an explicit line wins
    (
        "Options: Supportive, Insufficient, Contradictory or Irrelevant.\n"
        "Relationship Category: Contradictory",
        "four",
        "contradictory",
    ),
    ("The citation supports part of it.\nLabel: Insufficient", "four", "insufficient"),
    ("### Response: Missing", "four", "insufficient"),
    ("Answer: Not supportive, irrelevant", "four", "irrelevant"),
    # an echoed prompt: Relationship Category outranks Answer (which holds the statement)
    (
        "Example: Question: q Answer: the band supports them Reference: r "
        "Relationship Category: Irrelevant",
        "four",
        "irrelevant",
    ),
    # then a label the reply starts with
    ("**Insufficient**. The citation supports only the first place.", "four", "insufficient"),
    ("Contradictory - the reference says 1990, not supportive.", "four", "contradictory"),
    # then the only label of the first line
    ("The citation is insufficient, it supports just one.\nSupportive", "four", None),
    ("I think it is irrelevant.\nThe citation supports another answer.", "four", "irrelevant"),
    # then the only label of the whole reply (repeats allowed)
    ("Let me compare them.\nThe citation confirms the answer: supportive.", "four", "supportive"),
    ("Looking closely.\nIt is supportive. Clearly supportive.", "four", "supportive"),
    # ambiguous or empty: no label
    ("Supportive, Insufficient, Contradictory or Irrelevant", "four", None),
    ("Let me see.\nIt supports X but contradicts Y.", "four", None),
    ("", "four", None),
    ("I don't know.", "four", None),
]


@pytest.mark.parametrize(("reply", "label_set", "expected"), PAPER)
def test_paper_mode(reply: str, label_set: str, expected: str | None) -> None:
    assert extract_label(reply, label_set, mode="paper") == expected  # type: ignore[arg-type]


REFERENCE = [
    # four-way: re.search("Support|Missing|Contradictory|Irrelevant", re.I), first match
    ("Support", "four", "supportive"),
    ("Supportive", "four", "supportive"),
    ("supported", "four", "supportive"),
    ("not support", "four", "supportive"),  # REFERENCE_NOTES: "not support" -> Support
    ("Unsupported", "four", "supportive"),  # the regex matches inside the word
    ("MISSING", "four", "insufficient"),
    ("contradictory", "four", "contradictory"),
    ("Irrelevant", "four", "irrelevant"),
    ("Insufficient", "four", None),  # the paper's word is not in the authors' regex
    ("Irrelevant, though it mentions support", "four", "irrelevant"),  # first occurrence
    ("The reference is missing support", "four", "insufficient"),
    ("The reference is not relevant.", "four", None),
    ('{"label": "Missing"}', "four", "insufficient"),
    # binary: Supportive|Unsupported
    ("Supportive", "binary", "supportive"),
    ("Unsupported", "binary", "unsupported"),
    ("Not supportive", "binary", "supportive"),
    ("Supported", "binary", None),
    ("1", "binary", None),
    # attrscore: Attributable|Extrapolatory|Contradictory
    ("Attributable", "attrscore", "supportive"),
    ("extrapolatory", "attrscore", "irrelevant"),
    ("Contradictory", "attrscore", "contradictory"),
    ("Not attributable", "attrscore", "supportive"),
    ("Irrelevant", "attrscore", None),
]


@pytest.mark.parametrize(("reply", "label_set", "expected"), REFERENCE)
def test_reference_mode(reply: str, label_set: str, expected: str | None) -> None:
    assert extract_label(reply, label_set, mode="reference") == expected  # type: ignore[arg-type]


def test_bad_label_set_or_mode() -> None:
    with pytest.raises(ConfigError, match="label set"):
        extract_label("Supportive", "three")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="extraction mode"):
        extract_label("Supportive", "four", mode="code")  # type: ignore[arg-type]
