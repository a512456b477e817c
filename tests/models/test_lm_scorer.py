"""CausalLMScorer on tiny Llamas built by the tests, and one check on the embedded SmolLM2.

The fixed tiny LM (``_tiny_models.build_tiny_causal_lm``) gives logit 2.0 to "paris" and 0 to the
other 21 tokens whatever the input, so with Z = e^2 + 21 every prediction costs
NLL(paris) = ln Z - 2 and NLL(any other token) = ln Z. Its WordLevel tokenizer splits on
whitespace and maps unknown words ("london", "pa", "ris") to <unk>. The random tiny LM
(``build_random_causal_lm``) has input-dependent logits, so it shows padding or position leaks;
its reference values come from a plain transformers forward pass of each text alone.
"""

from __future__ import annotations

import asyncio
import gc
import math
import sys
import weakref
from pathlib import Path

import pytest
from pydantic import ValidationError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from _tiny_models import build_random_causal_lm, build_tiny_causal_lm  # noqa: E402
from citegraph.errors import ConfigError, MissingDependency, ModelError  # noqa: E402
from citegraph.models import LMScorer, TokenScores, causal_lm_scorer  # noqa: E402
from citegraph.models.chat import LOCAL_CHAT_NAME  # noqa: E402
from citegraph.models.lm import CausalLMScorer  # noqa: E402

LN_Z = math.log(math.exp(2.0) + 21.0)  # ln(7.389056 + 21) = ln 28.389056 = 3.345997
NLL_PARIS = LN_Z - 2.0  # 1.345997
NLL_OTHER = LN_Z  # 3.345997
TEXTS = [
    "the city of paris is the capital of france .",
    "paris",
    "where is the city ?",
    "",
    "hello . be brief",
    "paris is the capital",
]


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny_lm"), chat_template=None)


@pytest.fixture(scope="module")
def random_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_random_causal_lm(tmp_path_factory.mktemp("random_lm"))


@pytest.fixture(scope="module")
def tiny(tiny_lm_dir: Path) -> CausalLMScorer:
    return CausalLMScorer.load(tiny_lm_dir)


def reference_logprobs(path: Path, text: str, bos: bool = False) -> list[float]:
    """ln P of tokens 2..n of ``text`` alone (1..n after a BOS), straight from transformers."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    ids = ([tok.bos_token_id] if bos else []) + tok(text, add_special_tokens=False).input_ids
    with torch.no_grad():
        logp = model(torch.tensor([ids])).logits[0].log_softmax(-1)
    return [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]


def test_token_scores_arithmetic_and_unmeasured() -> None:
    s = TokenScores(sum_nll=3.0, n_tokens=2)
    assert s.mean_nll == 1.5 and s.measured
    assert s.perplexity == pytest.approx(4.481689, abs=1e-6)  # e^1.5
    empty = TokenScores(sum_nll=0.0, n_tokens=0, reason="empty text")
    assert empty.mean_nll is None and empty.perplexity is None and not empty.measured
    with pytest.raises(ValidationError):
        TokenScores(sum_nll=0.0, n_tokens=0)  # unmeasured needs its reason
    with pytest.raises(ValidationError):
        TokenScores(sum_nll=1.0, n_tokens=1, token_logprobs=(-0.5, -0.5))


def test_text_scores_from_the_known_logits(tiny: CausalLMScorer) -> None:
    # "paris paris london" -> [paris, paris, <unk>]; the first token has no prediction:
    # token 2 (paris) costs ln Z - 2, token 3 (<unk>) costs ln Z: sum = 2 ln Z - 2 = 4.691994,
    # mean = ln Z - 1, perplexity = Z / e = 28.389056 / 2.718282 = 10.443780.
    (s,) = tiny.score_sync(["paris paris london"], token_logprobs=True)
    assert s.n_tokens == 2 and s.n_truncated == 0 and s.reason is None
    assert s.sum_nll == pytest.approx(2 * LN_Z - 2, abs=1e-4)
    assert s.sum_nll == pytest.approx(4.691994, abs=1e-4)
    assert s.perplexity == pytest.approx(10.443780, abs=1e-3)
    assert s.token_logprobs == pytest.approx((-NLL_PARIS, -NLL_OTHER), abs=1e-4)
    assert tiny.score_sync(["paris paris london"])[0].token_logprobs is None


def test_prepend_bos_scores_the_first_token_too(tiny_lm_dir: Path) -> None:
    scorer = CausalLMScorer.load(tiny_lm_dir, prepend_bos=True)
    # <s> paris paris <unk>: 2 x (ln Z - 2) + ln Z = 3 ln Z - 4 = 6.037991 over 3 tokens
    (s,) = scorer.score_sync(["paris paris london"])
    assert s.n_tokens == 3
    assert s.sum_nll == pytest.approx(3 * LN_Z - 4, abs=1e-4)
    (one,) = scorer.score_sync(["london"])  # one token, predicted from <s>
    assert one.n_tokens == 1 and one.sum_nll == pytest.approx(NLL_OTHER, abs=1e-4)
    assert scorer.settings["prepend_bos"] is True


def test_continuations_count_exactly_the_continuation_tokens(tiny: CausalLMScorer) -> None:
    scores = tiny.score_continuations_sync(
        [
            ("paris paris", " london the city"),  # 3 tokens, none is paris: 3 ln Z
            ("the city", " paris"),  # 1 token, predicted from "city": ln Z - 2
            ("the pa", "ris"),  # "the pa" = [the, <unk>], joined [the, paris]: 1 merged token
            ("", "paris city"),  # no prefix: "paris" is unpredicted, "city" costs ln Z
        ]
    )
    assert [s.n_tokens for s in scores] == [3, 1, 1, 1]
    expected = [3 * NLL_OTHER, NLL_PARIS, NLL_PARIS, NLL_OTHER]
    assert [s.sum_nll for s in scores] == pytest.approx(expected, abs=1e-4)
    assert scores[0].perplexity == pytest.approx(math.exp(LN_Z), abs=1e-3)  # = Z = 28.389056


def test_empty_and_unscorable_inputs(tiny: CausalLMScorer) -> None:
    assert tiny.score_sync([]) == [] and tiny.score_continuations_sync([]) == []
    empty, single = tiny.score_sync(["", "paris"], token_logprobs=True)
    assert (empty.n_tokens, empty.perplexity, empty.reason) == (0, None, "empty text")
    assert empty.token_logprobs == ()
    assert single.n_tokens == 0 and single.perplexity is None
    assert single.reason is not None and "first token" in single.reason
    no_cont, only_first = tiny.score_continuations_sync([("paris city", ""), ("", "paris")])
    assert (no_cont.n_tokens, no_cont.reason) == (0, "empty continuation")
    assert only_first.n_tokens == 0 and only_first.reason is not None
    assert asyncio.run(tiny.perplexities(["", "paris paris london"])) == [
        None,
        pytest.approx(math.exp(LN_Z - 1), abs=1e-3),
    ]


def test_truncation_keeps_the_continuation_and_records_the_drop(tiny_lm_dir: Path) -> None:
    scorer = CausalLMScorer.load(tiny_lm_dir, max_length=3)
    kept, too_long = scorer.score_continuations_sync(
        [
            ("the city of paris", " paris"),  # 5 tokens -> [of, paris, paris]: 1 scored
            ("the", " paris paris paris paris"),  # -> [the, paris, paris]: 2 of 4 scored
        ]
    )
    assert (kept.n_tokens, kept.n_truncated) == (1, 2)
    assert kept.sum_nll == pytest.approx(NLL_PARIS, abs=1e-4)
    assert (too_long.n_tokens, too_long.n_truncated) == (2, 2)
    assert too_long.sum_nll == pytest.approx(2 * NLL_PARIS, abs=1e-4)
    (text,) = CausalLMScorer.load(tiny_lm_dir, max_length=2).score_sync(["the city of paris"])
    assert (text.n_tokens, text.n_truncated) == (1, 2)  # texts keep their start: [the, city]
    assert text.sum_nll == pytest.approx(NLL_OTHER, abs=1e-4)


def test_left_truncation_equals_the_shorter_prefix(random_lm_dir: Path) -> None:
    for bos in (False, True):
        short = CausalLMScorer.load(random_lm_dir, max_length=3, prepend_bos=bos)
        full = CausalLMScorer.load(random_lm_dir, prepend_bos=bos)
        # no BOS: [of, paris, paris]; BOS: [<s>, paris, paris] (BOS stays first)
        prefix = "of paris" if not bos else "paris"
        (cut,) = short.score_continuations_sync([("the city of paris", " paris")])
        (ref,) = full.score_continuations_sync([(prefix, " paris")])
        assert cut.n_tokens == ref.n_tokens == 1
        assert cut.n_truncated == 2 + bos
        assert cut.sum_nll == pytest.approx(ref.sum_nll, abs=1e-4)


def test_random_lm_matches_plain_transformers(random_lm_dir: Path) -> None:
    scorer = CausalLMScorer.load(random_lm_dir, batch_size=4)
    text = TEXTS[0]
    (s,) = scorer.score_sync([text], token_logprobs=True)
    ref = reference_logprobs(random_lm_dir, text)
    assert s.n_tokens == len(ref) == 9
    assert s.token_logprobs == pytest.approx(ref, abs=1e-4)
    assert len({round(x, 3) for x in ref}) > 3  # input-dependent: the padding test means something
    (b,) = CausalLMScorer.load(random_lm_dir, prepend_bos=True).score_sync([text])
    assert b.sum_nll == pytest.approx(-sum(reference_logprobs(random_lm_dir, text, True)), abs=1e-4)


def test_batched_equals_one_at_a_time(random_lm_dir: Path) -> None:
    batched = CausalLMScorer.load(random_lm_dir, batch_size=4)
    single = CausalLMScorer.load(random_lm_dir, batch_size=1)
    many = batched.score_sync(TEXTS, token_logprobs=True)
    alone = [single.score_sync([t], token_logprobs=True)[0] for t in TEXTS]
    assert [s.n_tokens for s in many] == [9, 0, 4, 0, 3, 3]  # input order kept
    for a, b in zip(many, alone, strict=True):
        assert a.n_tokens == b.n_tokens and a.reason == b.reason
        assert a.sum_nll == pytest.approx(b.sum_nll, abs=1e-4)
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=1e-4)
    pairs = [("the city of", " paris is the capital"), ("where", " is paris ?"), ("hello", " .")]
    many_c = batched.score_continuations_sync(pairs)
    alone_c = [single.score_continuations_sync([p])[0] for p in pairs]
    assert [s.n_tokens for s in many_c] == [4, 3, 1]
    assert [s.sum_nll for s in many_c] == pytest.approx([s.sum_nll for s in alone_c], abs=1e-4)
    # a text's score is its prefix part plus its continuation part (same tokens, same positions)
    whole = single.score_sync(["the city of paris is the capital"], token_logprobs=True)[0]
    assert whole.token_logprobs is not None
    assert -sum(whole.token_logprobs[-4:]) == pytest.approx(many_c[0].sum_nll, abs=1e-4)


def test_batches_the_device_cannot_hold_run_again_in_halves(random_lm_dir: Path) -> None:
    """A forward pass of more than one input runs out of memory: the texts run again one at a
    time, with the numbers of a scorer that batched them."""
    import torch

    want = CausalLMScorer.load(random_lm_dir, batch_size=4).score_sync(TEXTS)
    scorer = CausalLMScorer.load(random_lm_dir, batch_size=4)
    runner = scorer._runner
    assert runner is not None
    real_batch, widths = runner.batch, []

    def small_batch(items):  # type: ignore[no-untyped-def]
        widths.append(len(items))
        if len(items) > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 5.00 GiB")
        return real_batch(items)

    runner.batch = small_batch  # type: ignore[method-assign]
    got = scorer.score_sync(TEXTS)
    refused = [i for i, n in enumerate(widths) if n > 1]
    assert widths[0] == 4 and 2 in widths  # halved: 4, then 2, then one at a time
    assert set(widths[refused[-1] + 1 :]) == {1}
    assert [s.sum_nll for s in got] == pytest.approx([s.sum_nll for s in want], abs=1e-4)
    assert [s.n_tokens for s in got] == [s.n_tokens for s in want]


def test_async_calls_share_the_model(tiny: CausalLMScorer) -> None:
    async def both() -> tuple[list[TokenScores], list[float | None]]:
        return await asyncio.gather(
            tiny.score(["paris paris london"] * 3), tiny.perplexities(["paris london"])
        )

    scores, ppl = asyncio.run(both())
    assert [s.sum_nll for s in scores] == pytest.approx([2 * LN_Z - 2] * 3, abs=1e-4)
    assert ppl == [pytest.approx(math.exp(LN_Z), abs=1e-3)]  # <unk> after paris: ln Z
    assert isinstance(tiny, LMScorer)


def test_factory_specs_and_errors(tiny_lm_dir: Path) -> None:
    assert causal_lm_scorer(f"hf:{tiny_lm_dir}").name == f"hf:{tiny_lm_dir}"
    assert causal_lm_scorer(str(tiny_lm_dir), batch_size=2).name == f"hf:{tiny_lm_dir}"
    for spec in ("hf:", "no-such-model-folder", ""):
        with pytest.raises(ConfigError):
            causal_lm_scorer(spec)
    with pytest.raises(ConfigError):
        causal_lm_scorer(str(tiny_lm_dir), cache_dir="/tmp")  # cache_dir is for 'local'
    with pytest.raises(ConfigError):
        CausalLMScorer.load(tiny_lm_dir, batch_size=0)
    with pytest.raises(ConfigError):
        CausalLMScorer.load(tiny_lm_dir, max_length=1)
    with pytest.raises(ModelError):
        CausalLMScorer.load(tiny_lm_dir / "missing")


def test_closed_scorer_refuses(tiny_lm_dir: Path) -> None:
    scorer = CausalLMScorer.load(tiny_lm_dir)
    model = weakref.ref(scorer._model)
    asyncio.run(scorer.aclose())
    with pytest.raises(ModelError, match="closed"):
        scorer.score_sync(["paris"])
    gc.collect()
    assert model() is None  # the weights are freed: nothing (the forward runner) holds them


def test_missing_transformers_names_the_local_extra(
    tiny_lm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import now raises ImportError
    with pytest.raises(MissingDependency) as info:
        CausalLMScorer.load(tiny_lm_dir)
    assert info.value.extra == "local"


@pytest.mark.slow
def test_local_smollm2_prefers_fluent_text(smollm2_cache: Path) -> None:
    scorer = causal_lm_scorer("local", cache_dir=smollm2_cache)
    assert scorer.name == LOCAL_CHAT_NAME
    fluent = "The cat sat on the mat and looked out of the window at the rain."
    shuffled = "window the rain mat looked at on out The sat and the of cat the."
    low, high = scorer.score_sync([fluent, shuffled])
    assert low.perplexity is not None and high.perplexity is not None
    assert low.perplexity < high.perplexity


def test_plan_batches_cut_by_count_budget_and_padding() -> None:
    from citegraph.models.lm._inputs import plan_batches

    # widths sorted longest first; batch_size 3, budget 100 padded positions, 16 free padding
    widths = [120, 60, 40, 30, 30, 10, 10, 10, 10]
    # 120 > 100: alone; 60: 100 // 60 = 1; 40: 2 (40, 30: pads 10); 30: 30 and 10 pads 20 > 16,
    # so (30); 10: 3 (10, 10, 10), then the last 10
    assert plan_batches(widths, 3, 100, 16) == [(0, 1), (1, 2), (2, 4), (4, 5), (5, 8), (8, 9)]
    assert plan_batches(widths, 3, 100, 1000) == [(0, 1), (1, 2), (2, 4), (4, 7), (7, 9)]
    assert plan_batches([5, 5, 5], 8, 10_000, 0) == [(0, 3)]
    assert plan_batches([700, 500, 20, 8], 8, 8192, 16) == [(0, 1), (1, 2), (2, 4)]
    assert plan_batches([], 4, 100, 16) == []


def test_prefix_groups_share_long_prefixes_of_neighbours() -> None:
    from citegraph.models.lm._inputs import ScoreItem, prefix_groups

    p = list(range(100, 140))  # 40 shared tokens
    items = [
        ScoreItem([*p, 1, 2, 3], 41, 0, None),
        ScoreItem([9, 9, 9], 1, 0, None),  # 2 tokens to share at most < 32: alone
        ScoreItem([*p, 5, 6], 41, 0, None),
        ScoreItem([*p[:35], 7, 8], 36, 0, None),  # sorts first; shares 35 with the others
        ScoreItem([*p, 4], 1, 0, None),  # scores its prefix too: shares all but its last token
    ]
    groups = prefix_groups(items, [0, 1, 2, 3, 4], 32)
    assert sorted((s, sorted(m)) for s, m in groups) == [(0, [1]), (35, [0, 2, 3, 4])]
    assert prefix_groups(items, [0, 2], 41) == [(0, [0]), (0, [2])]  # 40 < 41: no group
    # a neighbour sharing 20 of a group's 40 (< 3/4) starts a group of its own
    tail = [ScoreItem([*p, 1], 1, 0, None), ScoreItem([*p, 2], 1, 0, None)]
    cut = [*tail, ScoreItem([*p[:20], 200], 1, 0, None)]
    assert prefix_groups(cut, [0, 1, 2], 8) == [(40, [0, 1]), (0, [2])]
    # identical inputs share all but their last token
    same = [ScoreItem(p, 1, 0, None), ScoreItem(p, 1, 0, None)]
    assert prefix_groups(same, [0, 1], 8) == [(39, [0, 1])]


@pytest.fixture(scope="module")
def softcapped_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Gemma2 whose logits are soft-capped (not its head applied to its output)."""
    from _tiny_models import _lm_tokenizer, save_model

    torch.manual_seed(1)
    config = transformers.Gemma2Config(
        vocab_size=22,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=256,
        final_logit_softcapping=0.5,
        initializer_range=0.5,
        pad_token_id=0,
    )
    model = transformers.Gemma2ForCausalLM(config).eval()
    return save_model(model, _lm_tokenizer(), tmp_path_factory.mktemp("softcapped_lm"))


LONG_PREFIX = " ".join(["the city of paris is the capital of france ."] * 4)


def test_shared_prefixes_run_once_and_score_as_alone(random_lm_dir: Path) -> None:
    scorer = CausalLMScorer.load(random_lm_dir, batch_size=4)
    assert scorer._runner.fast_head and scorer._runner.reuses_prefix
    # 40 shared prefix tokens, four continuations (two prefixes differ only after token 40)
    pairs = [
        (LONG_PREFIX + " where is", " paris ?"),
        (LONG_PREFIX + " where is", " the city"),
        (LONG_PREFIX + " hello", " . be brief"),
        (LONG_PREFIX, " paris is the capital"),
        ("where is", " paris"),
    ]
    got = scorer.score_continuations_sync(pairs, token_logprobs=True)
    for (prefix, continuation), scores in zip(pairs, got, strict=True):
        ref = reference_logprobs(random_lm_dir, prefix + continuation)
        n = len(continuation.split())
        assert scores.n_tokens == n
        assert scores.token_logprobs == pytest.approx(ref[-n:], abs=1e-4)
    # every scored token after the shared prefix (none inside it), as in CONNER helpfulness
    late = [pairs[0], pairs[2]]
    got = scorer.score_continuations_sync(late, token_logprobs=True)
    for (prefix, continuation), scores in zip(late, got, strict=True):
        n = len(continuation.split())
        ref = reference_logprobs(random_lm_dir, prefix + continuation)
        assert scores.token_logprobs == pytest.approx(ref[-n:], abs=1e-4)
    # whole texts extending one paragraph: the paragraph's own tokens are scored once, shared
    texts = [LONG_PREFIX + " paris", LONG_PREFIX + " where is the city ?", LONG_PREFIX]
    for text, scores in zip(texts, scorer.score_sync(texts, token_logprobs=True), strict=True):
        ref = reference_logprobs(random_lm_dir, text)
        assert scores.n_tokens == len(text.split()) - 1
        assert scores.token_logprobs == pytest.approx(ref, abs=1e-4)


def test_soft_capped_logits_keep_the_full_forward_pass(softcapped_lm_dir: Path) -> None:
    scorer = CausalLMScorer.load(softcapped_lm_dir, batch_size=4)
    assert not scorer._runner.fast_head and not scorer._runner.reuses_prefix
    got = scorer.score_sync(TEXTS[:3], token_logprobs=True)
    for text, scores in zip(TEXTS[:3], got, strict=True):
        ref = reference_logprobs(softcapped_lm_dir, text)
        assert scores.token_logprobs == pytest.approx(ref, abs=1e-4)
    (c,) = scorer.score_continuations_sync([("the city of", " paris is")], token_logprobs=True)
    ref = reference_logprobs(softcapped_lm_dir, "the city of paris is")
    assert c.token_logprobs == pytest.approx(ref[-2:], abs=1e-4)
    # capped logits lie in [-0.5, 0.5], so ln P >= -0.5 - (0.5 + ln 22)
    assert max(abs(x) for x in ref) <= 1.0 + math.log(22)
