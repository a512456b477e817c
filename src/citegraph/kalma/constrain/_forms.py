"""The citation language's Lark and GBNF text: :func:`._grammar.citation_grammar` puts them in
a :class:`~citegraph.models.Grammar`, and :class:`._once.OncePerAnswer` writes the Lark form
again as an answer's facts are used.

A citation is ``[NA]`` or ``[`` group (``, `` group)? ``]``: one group, or two of different
entities. A group is ``qid: ``? *display id* then one to :data:`MAX_FACTS` of that entity's
facts, in the order of the choices, each at most once (:func:`_ordered`). Both forms spell the
same language; the Lark form's ``CITE`` is one terminal (the named pieces it references are
part of its regular expression, not lexemes of their own), so no lexing choice between
overlapping facts can refuse a valid citation.
"""

from __future__ import annotations

from collections.abc import Sequence

from citegraph.kalma.constrain._choices import CitableEntity

__all__ = ["MAX_FACTS", "MAX_GROUPS", "gbnf_form", "lark_form"]

#: At most this many facts of one entity, and entities, in one citation: the paper's brackets
#: hold one to four facts; without a bound a small model lists facts until ``max_tokens``.
MAX_FACTS = 4
MAX_GROUPS = 2
_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~/")


def _regex_literal(text: str) -> str:
    """``text`` as a regular expression matching exactly it (llguidance's Rust syntax; ``/``
    escaped for Lark's ``/.../``, control characters as ``\\xhh``)."""
    return "".join(
        "\\" + ch
        if ch in _REGEX_META
        else f"\\x{ord(ch):02x}"
        if ord(ch) < 32 or ord(ch) == 127
        else ch
        for ch in text
    )


def _gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _groups(names: Sequence[str], sep: str) -> str:
    """The entity groups of one citation: one group, or two of different entities (so no
    entity's facts are listed twice in one bracket); ``sep`` is the form's ``", "``."""
    if MAX_GROUPS != 2:  # pragma: no cover - the forms below spell out pairs
        raise NotImplementedError("citation groups are written for MAX_GROUPS == 2")
    if len(names) == 1:
        return names[0]
    return " | ".join(
        f"{name} ({sep} ({' | '.join(other for other in names if other != name)}))?"
        for name in names
    )


def _ordered(name: str, fact: str, n: int, sep: str) -> list[tuple[str, str]]:
    """``(name, body)`` of the rules (Lark terminals or GBNF rules) spelling one entity's facts
    as a citation lists them: one to :data:`MAX_FACTS`, each at most once, in the order of the
    choices (the prompt's order).

    ``name.format(k=k, c=c)`` is "facts ``k..`` in order, at most ``c``": the ``k``-th fact
    then at most ``c - 1`` of the later ones, or only later ones; ``fact.format(k=k)`` names
    the ``k``-th fact. Linear in the facts (``n`` x :data:`MAX_FACTS` rules), where "any order,
    no repeat" would need a rule per set of facts already written.
    """
    rules = []
    for c in range(1, MAX_FACTS + 1):
        for k in range(n):
            head = fact.format(k=k)
            if c > 1 and k + 1 < n:
                head = f"{head} ({sep} {name.format(k=k + 1, c=c - 1)})?"
            later = f" | {name.format(k=k + 1, c=c)}" if k + 1 < n else ""
            rules.append((name.format(k=k, c=c), f"({head}){later}"))
    return rules


def _cite_terminals(entities: Sequence[CitableEntity]) -> list[str]:
    """The Lark terminals of a citation: ``CITE`` and the named pieces it is made of (one
    lexeme: terminals referenced inside a terminal are part of its regular expression)."""
    if not entities:
        return [r"CITE: /\[NA\]/"]
    lines = []
    for i, e in enumerate(entities):
        lines += [f"F{i}K{k}: /{_regex_literal(f)}/" for k, f in enumerate(e.facts)]
        lines += [
            f"{name}: {body}"
            for name, body in _ordered(f"E{i}K{{k}}C{{c}}", f"F{i}K{{k}}", len(e.facts), '", "')
        ]
        lines.append(f'G{i}: /(qid: )?{_regex_literal(e.display_id)}/ ", " E{i}K0C{MAX_FACTS}')
    groups = _groups([f"G{i}" for i in range(len(entities))], '", "')
    lines.append(f'CITE: "[NA]" | "[" ({groups}) "]"')
    return lines


def lark_form(entities: Sequence[CitableEntity], done: str | None = None) -> str:
    """The Lark form; with ``done``, the form of a reply that starts with the text ``done``
    (which ends on a closed citation) and goes on as the language allows after one."""
    start = "start: (TEXT? CITE END?)+"
    if done is not None:
        start = f"start: DONE END? (TEXT? CITE END?)*\nDONE: /{_regex_literal(done)}/"
    return "\n".join([start, r"TEXT: /[^\[\].!?]+/", *_cite_terminals(entities), r"END: /[.!?]+/"])


def gbnf_form(entities: Sequence[CitableEntity]) -> str:
    """The GBNF form (llama.cpp, vLLM): the rules of the Lark form, one per piece."""
    lines = [
        "root ::= (text* cite end?)+",
        r"text ::= [^\[\].!?]",
        r"end ::= [.!?]+",
    ]
    if not entities:
        lines.append('cite ::= "[NA]"')
        return "\n".join(lines)
    groups = _groups([f"g{i}" for i in range(len(entities))], '", "')
    lines.append(f'cite ::= "[NA]" | "[" ({groups}) "]"')
    for i, e in enumerate(entities):
        lines.append(f'g{i} ::= "qid: "? {_gbnf_literal(e.display_id)} ", " e{i}k0c{MAX_FACTS}')
        lines += [
            f"{name} ::= {body}"
            for name, body in _ordered(f"e{i}k{{k}}c{{c}}", f"f{i}k{{k}}", len(e.facts), '", "')
        ]
        lines += [f"f{i}k{k} ::= {_gbnf_literal(f)}" for k, f in enumerate(e.facts)]
    return "\n".join(lines)
