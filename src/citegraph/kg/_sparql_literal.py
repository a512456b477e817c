"""The only way user data reaches remote SPARQL query text: audited literal and id serialisers.

SPARQL over HTTP has no bind parameters, so every query the remote backend sends is built from
fixed template text plus values that went through exactly one of these functions:

- :func:`sparql_string` serialises any string as a SPARQL 1.1 ``STRING_LITERAL_QUOTE``
  (``"..."``), optionally with a language tag. Per the grammar (SPARQL 1.1 §19.8, rules
  [156] and [160]) the characters ``"``, ``\\``, LF and CR may not appear raw, and ECHAR is
  ``\\[tbnrf\\"']``. We escape ``\\ " ' \\n \\r \\t \\b \\f`` as ECHARs and refuse the other C0
  control characters (U+0000-U+001F) and lone surrogates, which no Wikidata label contains and
  some engines mishandle.
- :func:`item_id` / :func:`property_id` accept only ``Q<n>`` / ``P<n>`` (``n`` without leading
  zeros), checked with :func:`re.fullmatch` (``$`` would let a trailing newline through).
- :func:`sparql_iri` writes ``<iri>`` only for an absolute IRI made of characters SPARQL's
  ``IRIREF`` (rule [139]) allows: no space, control, ``<>"{}|^`\\`` (so no ``\\u`` escapes).
- :func:`language_tag` accepts a BCP 47-shaped tag (letters, digits, hyphens).
- :func:`sparql_int` accepts a non-negative ``int`` (not ``bool``).

Codepoint escapes. SPARQL 1.1 §19.2 lets ``\\uXXXX`` appear anywhere and be decoded before
parsing. We never *emit* ``\\u``; an input containing the characters ``\\u0022`` becomes
``\\\\u0022``. An engine that tracks escaped backslashes (Oxigraph, Jena) reads back the input
exactly. An engine that decoded ``\\uXXXX`` naively would still not leave the string: every
backslash we emit is doubled, so a decoded quote is always preceded by an odd number of
backslashes (an escaped quote), and a decoded LF/CR/other character after a backslash is a
syntax error. At worst such an engine changes the value or refuses the query; it never runs
text outside the literal.
"""

from __future__ import annotations

import re

from citegraph.errors import KGQueryError

__all__ = [
    "item_id",
    "language_tag",
    "property_id",
    "sparql_int",
    "sparql_iri",
    "sparql_string",
]

_ECHAR = {
    "\\": "\\\\",
    '"': '\\"',
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
# C0 controls without an ECHAR, and lone surrogates (not encodable as UTF-8).
_FORBIDDEN = re.compile(r"[\x00-\x07\x0b\x0e-\x1f\ud800-\udfff]")
_SPECIAL = re.compile(r"[\\\"'\n\r\t\b\f]")
_ITEM = re.compile(r"Q[1-9][0-9]*")
_PROPERTY = re.compile(r"P[1-9][0-9]*")
_IRIREF = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^<>\"{}|^`\\\x00-\x20\ud800-\udfff]*")
_LANGUAGE = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*")


def sparql_string(value: str, *, lang: str | None = None) -> str:
    """Serialise ``value`` as a SPARQL string literal, e.g. ``"Stephen Crane"@en``.

    Args:
        value: Any string; it is data, never query syntax.
        lang: Optional language tag (validated by :func:`language_tag`).

    Returns:
        The literal's query text, which parses back to exactly ``value``.

    Raises:
        KGQueryError: ``value`` is not a ``str``, or holds a control character without an
            escape (U+0000-U+001F except TAB, LF, CR, BS, FF) or a lone surrogate.
    """
    if not isinstance(value, str):
        raise KGQueryError(f"a SPARQL string literal needs a str, got {type(value).__name__}")
    bad = _FORBIDDEN.search(value)
    if bad is not None:
        raise KGQueryError(
            f"cannot send {value!r} to a SPARQL endpoint: it contains the character "
            f"U+{ord(bad.group()):04X} at index {bad.start()}"
        )
    body = _SPECIAL.sub(lambda m: _ECHAR[m.group()], value)
    suffix = "" if lang is None else "@" + language_tag(lang)
    return f'"{body}"{suffix}'


def item_id(value: str) -> str:
    """Return ``value`` if it is a Wikidata item id (``Q206534``), else raise KGQueryError."""
    if isinstance(value, str) and _ITEM.fullmatch(value):
        return value
    raise KGQueryError(f"not a Wikidata item id (Q followed by digits): {value!r}")


def property_id(value: str) -> str:
    """Return ``value`` if it is a Wikidata property id (``P19``), else raise KGQueryError."""
    if isinstance(value, str) and _PROPERTY.fullmatch(value):
        return value
    raise KGQueryError(f"not a Wikidata property id (P followed by digits): {value!r}")


def is_item_id(value: object) -> bool:
    """Whether ``value`` is a well-formed Wikidata item id."""
    return isinstance(value, str) and _ITEM.fullmatch(value) is not None


def language_tag(value: str) -> str:
    """Return ``value`` if it is a language tag such as ``en`` or ``en-GB``, else raise."""
    if isinstance(value, str) and _LANGUAGE.fullmatch(value):
        return value
    raise KGQueryError(f"not a language tag: {value!r}")


def sparql_int(value: int) -> str:
    """Serialise a non-negative ``int`` (e.g. a LIMIT); ``bool`` and other types are refused."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise KGQueryError(f"expected a non-negative int, got {value!r}")
    return str(value)


def sparql_iri(value: str) -> str:
    """Serialise an absolute IRI as ``<value>``, or raise KGQueryError when it cannot be one.

    Only characters that ``IRIREF`` allows pass (a scheme, then no space, control character,
    ``<``, ``>``, ``"``, ``{``, ``}``, ``|``, ``^``, backquote or backslash), so the IRI can
    never end the ``<...>`` early nor carry an escape.
    """
    if isinstance(value, str) and _IRIREF.fullmatch(value):
        return f"<{value}>"
    raise KGQueryError(f"not an IRI that can be sent to a SPARQL endpoint: {value!r}")
