"""Reading an attribution label out of an evaluator's reply.

Two modes. ``paper`` is citegraph's robust extraction (the paper only says "we extract the
predicted label using regular expression techniques", Appendix C); ``reference`` is exactly the
authors' ``inference.py``.

**Paper mode.** Case-insensitive. Label words and their synonyms:

==================  ============================================================================
concept             words (whole words; longest match first)
==================  ============================================================================
supportive          supportive, support, supports, supported, attributable
insufficient        insufficient, missing, partial, partially, incomplete, and "partially /
                    insufficiently / incompletely support(s/ed/ive)"
contradictory       contradictory, contradict(s/ed/ing), contradiction(s), refute(s/d), refuting
irrelevant          irrelevant, not relevant, not related, unrelated, extrapolatory
not supportive      unsupported, unsupportive, non-supportive, unattributable, non-attributable,
                    and any support word negated ("not supportive", "does not support", "isn't
                    supportive", "cannot fully support", "lacks support", "not attributable")
==================  ============================================================================

A word is *negated* when a negation (``not``, ``n't``, ``no``, ``never``, ``cannot``, ``nor``,
``neither``, ``without``, ``lack(s/ing)``, ``fail(s/ed) to``) precedes it with at most three
filler words between (adverbs such as "fully", "directly", "really"; "provide", "enough", "be",
"a", "any"...). A negated support word means *not supportive*; any other negated word says
nothing and is dropped ("not contradictory").

How each label set reads the concepts:

==================  ============  ============  ============
concept             four          binary        attrscore
==================  ============  ============  ============
supportive          supportive    supportive    supportive
insufficient        insufficient  unsupported   (dropped)
contradictory       contradictory unsupported   contradictory
irrelevant          irrelevant    unsupported   irrelevant
not supportive      (dropped)     unsupported   (dropped)
==================  ============  ============  ============

(AttrScore's Attributable -> supportive, Extrapolatory -> irrelevant, Contradictory ->
contradictory, Appendix C.) In the binary set a reply that is just ``1`` or ``0`` (AutoIS) means
supportive / unsupported. Dropped words are no label: "The citation does not support the
answer." is unsupported in the binary set and has no label in the four-way set.

Rules, in order (the first that yields a label wins):

1. JSON (structured output): ``{"label": "..."}`` (also in a ```` ```json ```` fence); the
   value is read with the rules below (its first label).
2. An explicit line: ``Relationship Category: X``, ``Attribution category: X``, ``Category:
   X``, ``Label: X``, ``Classification: X``, then ``Final answer: X``, ``Answer: X``,
   ``Response: X``, ``Verdict: X``, ``Prediction: X``, ``Judgement: X``: the first label in the
   value (up to the line end or the next ``Question:`` / ``Reference:`` / ... field).
3. A reply that starts with a label whose first clause names no other label ("**Insufficient**.
   The citation supports only..."; but not "Supportive, Insufficient or Irrelevant").
4. The first non-empty line names exactly one label.
5. The whole reply names exactly one label (possibly several times), dropped words aside.

Otherwise there is no label (``None``): a reply listing several labels is ambiguous.

**Reference mode** (the authors' code, with its quirks):

==========  ===============================================  =================================
label set   regex (``re.IGNORECASE``, first match)           map (of ``match.capitalize()``)
==========  ===============================================  =================================
four        ``Support|Missing|Contradictory|Irrelevant``     Support -> supportive, Missing ->
                                                             insufficient, Contradictory ->
                                                             contradictory, Irrelevant ->
                                                             irrelevant
binary      ``Supportive|Unsupported``                       Supportive -> supportive,
                                                             Unsupported -> unsupported
attrscore   ``Attributable|Extrapolatory|Contradictory``     Attributable -> supportive,
                                                             Extrapolatory -> irrelevant,
                                                             Contradictory -> contradictory
==========  ===============================================  =================================

Quirks kept: the first occurrence wins even inside a word or a negation ("not support",
"unsupported", "supported" and "Supportive" are all Support; "not attributable" is
Attributable); the four-way regex does not know the paper's word "Insufficient" (a reply
"Insufficient" has no label); the binary regex does not match "Supported".
"""

from __future__ import annotations

import json
import re

from citegraph.caqa._types import Label
from citegraph.caqa.judge._evaluator import LabelSet
from citegraph.caqa.judge._rules import CaqaRules, Mode
from citegraph.errors import ConfigError

__all__ = ["ExtractionMode", "extract_label"]

ExtractionMode = Mode

# -- paper mode ---------------------------------------------------------------------------------

_NOT_SUPPORTIVE = "not-supportive"  # a concept, not a label

_TERMS: tuple[tuple[str, str], ...] = (
    (
        r"(?:partial(?:ly)?|insufficient(?:ly)?|incomplete(?:ly)?)[\s-]+support(?:ive|s|ed)?",
        "insufficient",
    ),
    (
        r"un-?supported|unsupportive|non-?supportive|un-?attributable|non-?attributable",
        _NOT_SUPPORTIVE,
    ),
    (r"not\s+relevant|not\s+related|irrelevant|unrelated|extrapolatory", "irrelevant"),
    (r"supportive|supports|supported|support|attributable", "supportive"),
    (r"insufficient|missing|partial(?:ly)?|incomplete", "insufficient"),
    (
        r"contradictory|contradictions?|contradict(?:s|ed|ing)?|refute[sd]?|refuting",
        "contradictory",
    ),
)
_TERM_RE = re.compile(
    "|".join(f"(?P<t{i}>\\b(?:{pattern})\\b)" for i, (pattern, _) in enumerate(_TERMS)),
    re.IGNORECASE,
)
_FILLERS = (
    "fully|directly|really|entirely|completely|explicitly|clearly|necessarily|sufficiently|"
    "adequately|actually|truly|strongly|quite|very|so|any|a|an|the|be|being|been|seem|seems|"
    "appear|appears|to|provide|provides|offer|offers|give|gives|contain|contains|enough|much|"
    "real|clear|direct|full|sufficient|considered|itself"
)
_NEGATION_RE = re.compile(
    r"(?:\bnot|n't|\bno|\bnever|\bcannot|\bnor|\bneither|\bwithout|\black(?:s|ing)?"
    rf"|\bfail(?:s|ed)?\s+to)(?:\s+(?:{_FILLERS})\b){{0,3}}\s*$",
    re.IGNORECASE,
)
_SET_MAPS: dict[str, dict[str, Label]] = {
    "four": {
        "supportive": "supportive",
        "insufficient": "insufficient",
        "contradictory": "contradictory",
        "irrelevant": "irrelevant",
    },
    "binary": {
        "supportive": "supportive",
        "insufficient": "unsupported",
        "contradictory": "unsupported",
        "irrelevant": "unsupported",
        _NOT_SUPPORTIVE: "unsupported",
    },
    "attrscore": {
        "supportive": "supportive",
        "contradictory": "contradictory",
        "irrelevant": "irrelevant",
    },
}
_KEY_GROUPS = (
    r"relationship\s+category|attribution\s+category|category|label|classification",
    r"final\s+answer|answer|response|verdict|prediction|judge?ment",
)
_FIELD_END_RE = re.compile(
    r"\b(?:question|answer|reference|citation|claim|explanation|reason(?:ing)?|relationship\s+"
    r"category)\s*:",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(r"^[\W\d_]*$")
_CLAUSE_END_RE = re.compile(r"[.!?;:\n(]|\s[-\u2013\u2014]\s|,\s*(?:because|as|since|but)\b")
_FENCE_RE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)
_AUTOIS: dict[str, Label] = {"1": "supportive", "0": "unsupported"}
_JSON_KEYS = ("label", "category", "relationship_category", "answer", "prediction")


def _mentions(text: str, label_set: str) -> list[tuple[int, Label | None]]:
    """``(start, label)`` of every label word in ``text``; ``label`` None when dropped."""
    mapping = _SET_MAPS[label_set]
    found: list[tuple[int, Label | None]] = []
    for match in _TERM_RE.finditer(text):
        concept = _TERMS[int(str(match.lastgroup)[1:])][1]
        sentence_start = max(text.rfind(c, 0, match.start()) for c in ".!?;:\n,") + 1
        if _NEGATION_RE.search(text[sentence_start : match.start()]):
            concept = _NOT_SUPPORTIVE if concept == "supportive" else "dropped"
        found.append((match.start(), mapping.get(concept)))
    return found


def _first(text: str, label_set: str) -> Label | None:
    return next((label for _, label in _mentions(text, label_set) if label), None)


def _only(text: str, label_set: str) -> Label | None:
    labels = {label for _, label in _mentions(text, label_set) if label}
    return labels.pop() if len(labels) == 1 else None


def _from_json(reply: str, label_set: str) -> Label | None:
    text = reply.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    lowered = {str(k).lower(): v for k, v in data.items()}
    for key in _JSON_KEYS:
        value = lowered.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float | str):
            label = _autois(str(value), label_set) or _first(str(value), label_set)
            if label is not None:
                return label
    return None


def _autois(reply: str, label_set: str) -> Label | None:
    if label_set != "binary":
        return None
    bare = reply.strip().strip(".\"'`*")
    return _AUTOIS.get(bare)


def _explicit(reply: str, label_set: str) -> Label | None:
    for keys in _KEY_GROUPS:
        pattern = rf"(?:^|(?<=[\s*#>_(\[-]))(?:{keys})[\s*_]*[:=][\s*_]*(?P<value>[^\n]*)"
        for match in re.finditer(pattern, reply, re.IGNORECASE):
            value = match.group("value")
            end = _FIELD_END_RE.search(value)
            label = _first(value[: end.start()] if end else value, label_set)
            if label is not None:
                return label
    return None


def _leading(line: str, label_set: str) -> Label | None:
    """The label a line starts with, when its first clause names no other label (a list of
    options such as "Supportive, Insufficient or Irrelevant" is not an answer)."""
    found = _mentions(line, label_set)
    if not found or not _LEAD_RE.match(line[: found[0][0]]):
        return None
    clause = _CLAUSE_END_RE.split(line[found[0][0] :], maxsplit=1)[0]
    return _only(clause, label_set) if found[0][1] is not None else None


def _paper(reply: str, label_set: str) -> Label | None:
    if not reply.strip():
        return None
    first_line = next(line for line in reply.splitlines() if line.strip())
    for rule in (_from_json, _autois, _explicit):
        label = rule(reply, label_set)
        if label is not None:
            return label
    return (
        _leading(first_line, label_set) or _only(first_line, label_set) or _only(reply, label_set)
    )


# -- reference mode -----------------------------------------------------------------------------

_REFERENCE: dict[str, tuple[str, dict[str, Label]]] = {
    "four": (
        "Support|Missing|Contradictory|Irrelevant",
        {
            "Support": "supportive",
            "Missing": "insufficient",
            "Contradictory": "contradictory",
            "Irrelevant": "irrelevant",
        },
    ),
    "binary": (
        "Supportive|Unsupported",
        {"Supportive": "supportive", "Unsupported": "unsupported"},
    ),
    "attrscore": (
        "Attributable|Extrapolatory|Contradictory",
        {
            "Attributable": "supportive",
            "Extrapolatory": "irrelevant",
            "Contradictory": "contradictory",
        },
    ),
}


def _reference(reply: str, label_set: str) -> Label | None:
    pattern, mapping = _REFERENCE[label_set]
    match = re.search(pattern, reply, re.IGNORECASE)
    return mapping.get(match.group().capitalize()) if match else None


def extract_label(
    reply: str, label_set: LabelSet, *, mode: ExtractionMode | CaqaRules = "paper"
) -> Label | None:
    """The label ``reply`` gives in ``label_set`` (module docstring: words, rules, modes).

    Args:
        reply: The evaluator's reply, verbatim (text or structured-output JSON).
        label_set: ``"four"``, ``"binary"`` or ``"attrscore"`` (AttrScore's words mapped to
            CAQA labels).
        mode: ``"paper"`` (citegraph's robust rules) or ``"reference"`` (the authors' regex),
            or the :class:`~citegraph.caqa.CaqaRules` of one.

    Returns:
        The label, or ``None`` when none can be read (no label word, or an ambiguous reply).

    Raises:
        ConfigError: Unknown label set or mode.

    Example:
        >>> extract_label("The citation does not support the answer.", "binary")
        'unsupported'
        >>> extract_label("Relationship Category: Insufficient", "four")
        'insufficient'
        >>> extract_label("not support", "four", mode="reference")
        'supportive'
    """
    if label_set not in _SET_MAPS:
        raise ConfigError(f"unknown label set {label_set!r}; use 'four', 'binary' or 'attrscore'")
    rules = CaqaRules.for_mode(mode)
    return _reference(reply, label_set) if rules.first_match_labels else _paper(reply, label_set)
