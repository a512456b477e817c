"""Over-long texts cut before they are tokenised, with the same tokens after truncation.

A fast tokenizer reads a whole text before it truncates it: a 130,000-character NQ passage costs
as much to tokenise as 70 ordinary ones, to keep 512 tokens of it (on one core, the 500 NQ gold
passages take 0.3 s, more than a MiniLM forward pass over them on a GPU). :func:`clip_long_texts`
cuts such a text, before tokenising, at a space after its first ``CHARS_PER_TOKEN x max_length``
characters, only where the tokens that truncation keeps are provably the same:

- the tokenizer splits words at spaces before anything else (its pre-tokenizer, or the first of
  a sequence of them, is BERT's, ``Whitespace[Split]``, ``Metaspace`` with ``split`` or
  ``ByteLevel`` with its regex; its normaliser keeps spaces; no added token holds a space), so
  the tokens of the text up to a space are the first tokens of the whole text;
- it truncates on the right, and the part kept holds at least ``max_length + 2`` space-separated
  words with a letter or digit, each at least one token: more than truncation keeps;
- of a pair, only one text is cut, and its part kept has more tokens than the other text, so
  ``longest_first`` truncation (which keeps a number of tokens of each text that depends on the
  shorter text's length and on which is longer) keeps the same tokens.

Anything else is tokenised whole, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["CHARS_PER_TOKEN", "clip_long_texts", "clips_safely"]

#: Characters of an over-long text kept per token of ``max_length`` (English prose has about
#: 4-6 characters per token; a part kept with too few words is not used).
CHARS_PER_TOKEN = 16
#: A space-separated word with a letter or digit (at most one match per word).
_WORD = re.compile(r"[A-Za-z0-9][^ ]*")
_SPLITTERS = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})
_LOCAL_NORMALIZERS = frozenset(
    {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "Nmt", "Precompiled",
     "Prepend", "Strip", "StripAccents"}
)  # fmt: skip


def _splits_at_spaces(spec: Any) -> bool:
    if not isinstance(spec, dict):
        return False
    kind = spec.get("type")
    if kind == "Sequence":
        members = spec.get("pretokenizers") or []
        return bool(members) and _splits_at_spaces(members[0])
    if kind == "Metaspace":
        return spec.get("split", True) is True
    if kind == "ByteLevel":
        return spec.get("use_regex", True) is True
    return kind in _SPLITTERS


def _keeps_spaces(spec: Any) -> bool:
    if spec is None:
        return True
    if not isinstance(spec, dict):
        return False
    kind = spec.get("type")
    if kind == "Sequence":
        return all(_keeps_spaces(member) for member in spec.get("normalizers") or [])
    if kind == "Replace":
        pattern = spec.get("pattern") or {}
        text = pattern.get("String")
        return (text is not None and " " not in text) or pattern.get("Regex") == " {2,}"
    return kind in _LOCAL_NORMALIZERS


def clips_safely(tokenizer: Any) -> bool:
    """Whether :func:`clip_long_texts` may cut texts for ``tokenizer`` (see the module)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not getattr(tokenizer, "is_fast", False):
        return False
    if getattr(tokenizer, "truncation_side", "right") != "right":
        return False
    try:
        pre = backend.pre_tokenizer
        normalizer = backend.normalizer
        pre_spec = json.loads(pre.__getstate__()) if pre is not None else None
        norm_spec = json.loads(normalizer.__getstate__()) if normalizer is not None else None
        added = tokenizer.get_added_vocab()
    except Exception:  # an unusual tokenizer: tokenise whole
        return False
    if any(" " in str(token) for token in added):
        return False
    return _splits_at_spaces(pre_spec) and _keeps_spaces(norm_spec)


def _head(text: str, chars: int, words: int) -> str | None:
    """``text`` up to a space (after a non-space) within ``chars`` characters, if that part
    holds at least ``words`` words; else ``None``."""
    at = text.rfind(" ", 0, chars)
    while at > 0 and text[at - 1].isspace():
        at = text.rfind(" ", 0, at)
    if at <= 0:
        return None
    head = text[:at]
    return head if len(_WORD.findall(head)) >= words else None


def clip_long_texts(
    tokenizer: Any,
    first: Sequence[str],
    second: Sequence[str] | None,
    max_length: int | None,
) -> tuple[list[str], list[str] | None]:
    """``first`` and ``second`` with over-long texts cut where truncation to ``max_length``
    then keeps the same tokens (see the module); the others unchanged."""
    firsts = list(first)
    seconds = None if second is None else list(second)
    if max_length is None:
        return firsts, seconds
    chars = CHARS_PER_TOKEN * (max_length + 2)
    long_first = [i for i, t in enumerate(firsts) if len(t) > chars]
    long_second = [i for i, t in enumerate(seconds or []) if len(t) > chars]
    if not (long_first or long_second) or not clips_safely(tokenizer):
        return firsts, seconds
    if seconds is None:
        for i in long_first:
            firsts[i] = _head(firsts[i], chars, max_length + 2) or firsts[i]
        return firsts, seconds
    both = set(long_first) & set(long_second)
    cuts = [(i, firsts, seconds) for i in long_first if i not in both]
    cuts += [(i, seconds, firsts) for i in long_second if i not in both]
    if not cuts:
        return firsts, seconds
    others = tokenizer([other[i] for i, _, other in cuts], add_special_tokens=False)["input_ids"]
    for (i, texts, _), other_ids in zip(cuts, others, strict=True):
        head = _head(texts[i], chars, max(max_length, len(other_ids)) + 2)
        if head is not None:
            texts[i] = head
    return firsts, seconds
