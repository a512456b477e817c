"""Grammars applied in local decoding, with llguidance (the ``logits`` grammar mode).

Why llguidance: one abi3 wheel with no dependencies (the same file on Python 3.10-3.13, CPU or
GPU), the engine behind vLLM's and llama.cpp's ``guidance`` backends and maintained by the
guidance team; its matcher computes a token mask in tens of microseconds from a Lark grammar whose
terminals are regular expressions, without compiling anything ahead per tokenizer beyond a ~1 s
tokenizer import (cached per model). xgrammar needs torch, triton-era pins and a C++ compile of the
grammar; outlines-core builds a full regex index per grammar, slow for a grammar made fresh for
every question.

- :class:`GrammarLogits`: a transformers logits processor. Before each new token it feeds the
  matcher the token chosen last, asks it for the allowed tokens and sets every other logit to
  ``-inf``; it times itself (:attr:`GrammarLogits.seconds`) so the grammar's share of generation
  time is measured, not guessed.
- :func:`decode_under`: the mock model's decoding. It writes a scripted text byte by byte under
  the grammar, as a model that wants to write the script would: a byte the grammar allows is
  kept; where the script leaves the grammar (a citation of something outside the graph), the
  bytes the grammar forces are taken, then ``]`` as soon as it is allowed, else the lowest allowed
  byte, and the script resumes after its own closing bracket.

A grammar with an :attr:`~citegraph.models.Grammar.update` is matched by a :class:`LiveMatcher`
in all three (the logits processor, the mock's decoding and :func:`grammar_accepts`), so they
hold the same language.
"""

from __future__ import annotations

import re
import time
import weakref
from typing import Any

from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.models.grammar._grammar import Grammar, Steering

__all__ = [
    "GrammarLogits",
    "LiveMatcher",
    "byte_tokenizer",
    "compile_grammar",
    "decode_under",
    "grammar_accepts",
    "hf_tokenizer",
]

_HF_TOKENIZERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def require_llguidance() -> Any:
    """Import llguidance, or raise :class:`MissingDependency` (the ``local`` extra)."""
    try:
        import llguidance
    except ImportError as exc:
        raise MissingDependency("llguidance", "local", cause=exc) from exc
    return llguidance


def hf_tokenizer(tokenizer: Any, vocab_size: int | None = None) -> Any:
    """llguidance's view of a transformers fast tokenizer (built once per tokenizer object).

    Raises:
        ConfigError: The tokenizer is not a fast (Rust) tokenizer, which llguidance needs.
    """
    cached = _HF_TOKENIZERS.get(tokenizer)
    if cached is not None:
        return cached
    require_llguidance()
    import llguidance.hf

    try:
        made = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size)
    except ValueError as exc:
        raise ConfigError(
            f"constrained generation needs a fast (Rust) tokenizer; "
            f"{type(tokenizer).__name__} is not one ({exc})"
        ) from exc
    _HF_TOKENIZERS[tokenizer] = made
    return made


class _ByteTokens:
    """A tokenizer of 256 byte tokens and an end token (id 256), for :func:`decode_under`."""

    def __init__(self) -> None:
        self.eos_token_id = 256
        self.bos_token_id = None
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.special_token_ids = [256]

    def __call__(self, text: bytes | str) -> list[int]:
        return list(text.encode("utf-8") if isinstance(text, str) else text)


_BYTE_TOKENIZER: list[Any] = []


def byte_tokenizer() -> Any:
    """The llguidance tokenizer of :class:`_ByteTokens` (built once)."""
    if not _BYTE_TOKENIZER:
        llg = require_llguidance()
        _BYTE_TOKENIZER.append(llg.LLTokenizer(llg.TokenizerWrapper(_ByteTokens())))
    return _BYTE_TOKENIZER[0]


def compile_grammar(tokenizer: Any, grammar: Grammar) -> Any:
    """A fresh llguidance matcher of ``grammar``'s Lark form over ``tokenizer``; a
    :class:`LiveMatcher` when the grammar has an :attr:`~citegraph.models.Grammar.update`.

    Raises:
        ModelError: llguidance refuses the grammar (the message names it and says why).
    """
    if grammar.update is not None:
        return LiveMatcher(tokenizer, grammar)
    return _matcher(tokenizer, grammar.lark, grammar.name)


def _matcher(tokenizer: Any, lark: str, name: str) -> Any:
    llg = require_llguidance()
    try:
        compiled = llg.LLMatcher.grammar_from_lark(lark)
    except UnicodeEncodeError as exc:  # a lone surrogate: no grammar engine takes one
        raise ModelError(
            f"grammar {name!r} cannot be compiled: it holds text UTF-8 cannot encode "
            f"(a lone surrogate at character {exc.start})"
        ) from exc
    matcher = llg.LLMatcher(tokenizer, compiled, log_level=0)
    if matcher.is_error():
        raise ModelError(f"grammar {name!r} cannot be compiled: {matcher.get_error()}")
    return matcher


class LiveMatcher:
    """A matcher whose grammar changes as the reply grows (a grammar's ``update``).

    It answers as an llguidance matcher does (the methods the decoders use). After a token whose
    bytes hold a trigger character it asks the update for a new grammar with the reply so far;
    a new grammar is compiled and fed every token of the reply again. One that refuses them
    (a token that ran past the trigger into text the new grammar does not allow, which a byte
    tokenizer never has) is not used: the current grammar stays, and :attr:`refused` counts it.

    Attributes:
        updates: How many times the grammar was replaced.
        refused: New grammars not used because they refused the reply so far.
    """

    def __init__(self, tokenizer: Any, grammar: Grammar) -> None:
        if grammar.update is None:
            raise ValueError("LiveMatcher needs a grammar with an update")
        self._tokenizer = tokenizer
        self._grammar = grammar
        self._update = grammar.update
        self._trigger = frozenset(grammar.update.trigger.encode("utf-8"))
        self._matcher = _matcher(tokenizer, grammar.lark, grammar.name)
        self._tokens: list[int] = []
        self.updates = 0
        self.refused = 0

    def consume_token(self, token: int) -> bool:
        """Feed ``token``; False when the grammar refuses it. May replace the grammar after it."""
        if not self._matcher.consume_token(token):
            return False
        self._tokens.append(token)
        if self._trigger.intersection(self._tokenizer.decode_bytes([token])):
            self._refresh()
        return True

    def _refresh(self) -> None:
        reply = self._tokenizer.decode_bytes(self._tokens).decode("utf-8", errors="replace")
        lark = self._update(reply)
        if lark is None:
            return
        matcher = _matcher(self._tokenizer, lark, f"{self._grammar.name} ({self._update.name})")
        if matcher.consume_tokens(self._tokens):
            self._matcher = matcher
            self.updates += 1
        else:
            self.refused += 1

    def compute_bitmask(self) -> bytes:
        """The allowed tokens, one bit each."""
        return self._matcher.compute_bitmask()  # type: ignore[no-any-return]

    def compute_ff_bytes(self) -> bytes:
        """The bytes the grammar forces next."""
        return self._matcher.compute_ff_bytes()  # type: ignore[no-any-return]

    def get_error(self) -> str:
        """The matcher's error, if any."""
        return str(self._matcher.get_error())

    def is_accepting(self) -> bool:
        """Whether the reply may end here."""
        return bool(self._matcher.is_accepting())


class SteerTokens:
    """A :class:`~citegraph.models.Steering` as token ids of one tokenizer."""

    def __init__(self, tokenizer: Any, steering: Steering, vocab_size: int, eos: list[int]):
        import numpy as np

        when, to = re.compile(steering.when), re.compile(steering.to)
        texts = [tokenizer.decode([i]) for i in range(vocab_size)]
        self._when = np.array([bool(when.search(t)) for t in texts], dtype=bool)
        if steering.at_end:
            self._when[[e for e in eos if e < vocab_size]] = True
        self._to = np.array([bool(to.search(t)) for t in texts], dtype=bool)

    def turn(self, top: int, allowed: Any) -> Any | None:
        """The token ids left when ``top`` (refused) is to be steered, or None."""
        import numpy as np

        if top >= len(self._when) or not self._when[top]:
            return None
        kept = np.flatnonzero(self._to & allowed.astype(bool))
        return kept if len(kept) else None


_STEER: weakref.WeakKeyDictionary[Any, dict[Steering, SteerTokens]] = weakref.WeakKeyDictionary()


def steer_tokens(tokenizer: Any, steering: Steering, vocab_size: int, eos: list[int]) -> Any:
    """:class:`SteerTokens` of ``steering`` over ``tokenizer`` (built once per pair: every
    token is decoded, ~0.5 s for 49k tokens)."""
    known = _STEER.setdefault(tokenizer, {})
    if steering not in known:
        known[steering] = SteerTokens(tokenizer, steering, vocab_size, eos)
    return known[steering]


class GrammarLogits:
    """A logits processor keeping one generation (batch of one) inside a grammar.

    Args:
        matcher: A fresh matcher from :func:`compile_grammar`.
        prompt_len: Tokens of the prompt (the reply starts after them).
        vocab_size: Tokens the tokenizer knows (logits beyond them are always masked).
        torch: The torch module.

    Attributes:
        seconds: Time spent in this processor so far (the grammar's cost, updates included).
        tokens: Tokens the matcher has consumed.
        steered: Tokens chosen under the grammar's :class:`~citegraph.models.Steering`.
    """

    def __init__(
        self,
        matcher: Any,
        prompt_len: int,
        vocab_size: int,
        torch: Any,
        steer: SteerTokens | None = None,
    ) -> None:
        self._matcher = matcher
        self._prompt_len = prompt_len
        self._vocab = vocab_size
        self._torch = torch
        self._steer = steer
        self.seconds = 0.0
        self.tokens = 0
        self.steered = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Mask ``scores`` (1 x model vocabulary) in place to the tokens the grammar allows.

        The cost follows the smaller side: in free text nearly every token is allowed and only
        the refused ones are set to ``-inf``; inside a citation few are allowed and only those
        are kept (about 0.1 ms per token on a 49k vocabulary, one CPU core).
        """
        started = time.perf_counter()
        if input_ids.shape[0] != 1:
            raise ModelError("constrained generation runs one reply at a time")
        generated = int(input_ids.shape[1]) - self._prompt_len
        if generated > self.tokens:
            token = int(input_ids[0, -1])
            if not self._matcher.consume_token(token):
                raise ModelError(f"the grammar refused token {token}: {self._matcher.get_error()}")
            self.tokens += 1
        import numpy as np

        torch = self._torch
        bits = np.frombuffer(self._matcher.compute_bitmask(), dtype=np.uint8)
        allowed = np.unpackbits(bits, count=self._vocab, bitorder="little")
        kept = np.flatnonzero(allowed)
        if not len(kept):
            raise ModelError("the grammar allows no token here (the model's vocabulary lacks it)")
        if self._steer is not None:
            top = int(scores[0].argmax())
            if top >= self._vocab or not allowed[top]:
                turned = self._steer.turn(top, allowed)
                if turned is not None:
                    kept, allowed = turned, np.zeros_like(allowed)
                    allowed[kept] = 1
                    self.steered += 1
        width = scores.shape[-1]
        if width > self._vocab:  # padded embedding rows are no tokens
            scores[:, self._vocab :] = float("-inf")
        if 2 * len(kept) >= self._vocab:
            refused = torch.from_numpy(np.flatnonzero(allowed[:width] == 0))
            scores.index_fill_(1, refused.to(scores.device), float("-inf"))
        else:
            index = torch.from_numpy(kept[kept < width]).to(scores.device)
            values = scores.index_select(1, index)
            scores.fill_(float("-inf"))
            scores.index_copy_(1, index, values)
        self.seconds += time.perf_counter() - started
        return scores

    @property
    def updates(self) -> dict[str, int]:
        """How the grammar changed with the reply (:class:`LiveMatcher`): ``grammar_updates``
        and, when any, ``grammar_updates_refused``; empty for a fixed grammar."""
        if not isinstance(self._matcher, LiveMatcher):
            return {}
        out = {"grammar_updates": self._matcher.updates}
        if self._matcher.refused:
            out["grammar_updates_refused"] = self._matcher.refused
        return out


def decode_under(script: str, grammar: Grammar, max_bytes: int) -> tuple[str, bool]:
    """``script`` as a model that wants to write it would write it under ``grammar``.

    The script's bytes are kept while the grammar allows them. Where it does not:

    - inside a bracket (a citation of something outside the graph): the grammar's own citation
      is finished (forced bytes, else ``]`` when allowed, else the lowest allowed byte) and the
      script resumes after its own ``]``;
    - a ``]`` outside any bracket: left out;
    - anything else outside a bracket (a sentence end, or the end of the answer, where the
      grammar wants a citation first): a citation is opened and finished the same way (the
      lowest path makes it ``[NA]``), then the script's byte is tried again;
    - where no citation can open either (a grammar without citations: a judge's label or
      score), the rest of the script is dropped and the grammar's own reply finished (forced
      bytes, else the lowest allowed), or ended where it may end.

    Brackets are counted (the grammar's values hold balanced brackets only), so whether the
    text is inside a citation is known exactly.

    Args:
        script: The text the mock model would write unconstrained.
        grammar: The constraint.
        max_bytes: Most bytes to write (one byte is one token).

    Returns:
        The text written, and whether it ended before ``max_bytes``.

    Raises:
        ModelError: The grammar cannot be compiled, or allows nothing where it must.
    """
    matcher = compile_grammar(byte_tokenizer(), grammar)
    want = script.encode("utf-8")
    out = bytearray()
    pos, depth = 0, 0
    skipping = False  # the script left the grammar inside a bracket: resume after its ']'
    opened = False  # a citation the decoder opened itself: filled, the script waits
    while len(out) < max_bytes:
        allowed = _allowed_bytes(matcher)
        if skipping and depth == 0:
            close = want.find(b"]", pos)
            pos = len(want) if close < 0 else close + 1
            skipping = False
        if depth == 0 and not skipping:
            if pos >= len(want) and _END in allowed:
                return out.decode("utf-8", errors="replace"), True
            if pos < len(want) and want[pos] in allowed:
                byte = want[pos]
                pos += 1
            elif pos < len(want) and want[pos] == _CLOSE:
                pos += 1  # a stray ']' in text
                continue
            elif out and out[-1:] != b" " and _SPACE in allowed:
                byte = _SPACE  # a citation is due: " [" then the grammar's choice
            elif _OPEN in allowed:
                byte, opened = _OPEN, True
            elif allowed - {_END}:  # a grammar without citations (a judge's label or score):
                pos = len(want)  # the script is dropped, the grammar's own choice written
                byte = _fill(matcher, allowed)
            elif _END in allowed:  # its reply is whole: the rest of the script is dropped
                return out.decode("utf-8", errors="replace"), True
            else:
                raise ModelError(f"grammar {grammar.name!r}: no citation can open here")
        elif depth > 0 and not skipping and not opened and pos < len(want) and want[pos] in allowed:
            byte = want[pos]
            pos += 1
        else:
            if depth > 0 and not opened and pos < len(want) and want[pos] not in allowed:
                skipping = True
            byte = _fill(matcher, allowed)
        _consume(matcher, byte)
        out.append(byte)
        depth += {_OPEN: 1, _CLOSE: -1}.get(byte, 0)
        opened = opened and depth > 0
    return out.decode("utf-8", errors="replace"), False


_END = 256
_OPEN = ord("[")
_CLOSE = ord("]")
_SPACE = ord(" ")


def _fill(matcher: Any, allowed: set[int]) -> int:
    """The byte a citation is finished with: a forced one, else ``]``, else the lowest."""
    forced = matcher.compute_ff_bytes()
    if forced:
        return int(forced[0])
    if _CLOSE in allowed:
        return _CLOSE
    choices = allowed - {_END}
    if not choices:
        raise ModelError("the grammar allows no byte inside a citation")
    return min(choices)


def grammar_accepts(grammar: Grammar, text: str) -> bool:
    """Whether ``text`` is a whole sentence of ``grammar``'s language (its Lark form, changed by
    its update as the text grows, as in local decoding).

    Example:
        >>> g = Grammar(name="yes", lark='start: "yes"', gbnf='root ::= "yes"')
        >>> grammar_accepts(g, "yes"), grammar_accepts(g, "no")
        (True, False)
    """
    matcher = compile_grammar(byte_tokenizer(), grammar)
    for byte in text.encode("utf-8"):
        if byte not in _allowed_bytes(matcher) or not matcher.consume_token(byte):
            return False
    return _END in _allowed_bytes(matcher)


def _allowed_bytes(matcher: Any) -> set[int]:
    mask = matcher.compute_bitmask()
    return {i for i in range(257) if mask[i >> 3] >> (i & 7) & 1}


def _consume(matcher: Any, token: int) -> None:
    if not matcher.consume_token(token):
        raise ModelError(f"the grammar refused byte {token}: {matcher.get_error()}")
