"""Over-long texts cut before tokenising keep the tokens that truncation keeps (hf/_clip.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from citegraph.models.hf._clip import CHARS_PER_TOKEN, clip_long_texts, clips_safely
from citegraph.testing import nli_tokenizer, t5_tokenizer

_WORDS = [
    "he",
    "was",
    "born",
    "in",
    "newark",
    ".",
    "she",
    "died",
    "in",
    "paris",
    ",",
    "1871",
    "the",
    "writer",
    "of",
    "a",
    "novel",
]


def _text(n_words: int, offset: int = 0, sep: str = " ") -> str:
    return sep.join(_WORDS[(offset + k) % len(_WORDS)] for k in range(n_words))


@pytest.mark.parametrize("build", [nli_tokenizer, t5_tokenizer])
@pytest.mark.parametrize("max_length", [8, 33, 64])
def test_clipped_texts_tokenise_as_whole_texts(build, max_length: int) -> None:
    tokenizer = build()
    assert clips_safely(tokenizer)
    long_text = _text(400)
    first = [long_text, _text(5), _text(300, 3), long_text, "x" * 2000, _text(500, 1, "  ")]
    second = [_text(6), long_text, _text(350, 5), _text(40, 2), _text(3), _text(4)]
    for a, b in ((first, second), (second, first), (first, None)):
        clipped_a, clipped_b = clip_long_texts(tokenizer, a, b, max_length)
        whole = tokenizer(a, b, truncation=True, max_length=max_length)
        cut = tokenizer(clipped_a, clipped_b, truncation=True, max_length=max_length)
        assert cut["input_ids"] == whole["input_ids"]
        assert cut.get("token_type_ids") == whole.get("token_type_ids")
        assert sum(map(len, clipped_a)) < sum(map(len, a))  # something was cut
    limit = CHARS_PER_TOKEN * (max_length + 2)
    assert len(clip_long_texts(tokenizer, [long_text], None, max_length)[0][0]) <= limit
    # both texts of a pair long: neither is cut (which one truncation favours is unknown)
    assert clip_long_texts(tokenizer, [long_text], [long_text], max_length) == (
        [long_text],
        [long_text],
    )


def test_no_clipping_without_a_limit_or_when_truncating_on_the_left() -> None:
    tokenizer = nli_tokenizer()
    text = _text(400)
    assert clip_long_texts(tokenizer, [text], None, None) == ([text], None)
    tokenizer.truncation_side = "left"
    assert not clips_safely(tokenizer)
    assert clip_long_texts(tokenizer, [text], None, 16) == ([text], None)


def test_a_part_with_too_few_words_is_not_used() -> None:
    text = "x" * 600 + " " + _text(10)  # one huge word: the part kept would be one word
    assert clip_long_texts(nli_tokenizer(), [text], None, 16) == ([text], None)
