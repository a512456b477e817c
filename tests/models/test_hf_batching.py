"""Length-sorted batching: the device's batch plan, how inputs are cut into batches (under a
batch size and a token budget) and padded, the order in which batches are prepared, run and
collected, and that every backend (NLI, three-way NLI, T5 NLI, reranker, embeddings) gives the
same numbers batched as one at a time, on tiny seeded models and inputs of very different lengths
(so padding matters)."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from citegraph.errors import ConfigError, ModelError  # noqa: E402
from citegraph.models import NLIPair, embedding_model  # noqa: E402
from citegraph.models.hf._batching import (  # noqa: E402
    ACCELERATOR_PLAN,
    CPU_PLAN,
    BatchPlan,
    _cuts_monotone,
    _cuts_plain,
    batch_plan_for,
    length_batches,
    pad_rows,
    pipelined,
    to_device,
)
from citegraph.models.nli import HFNLI3, HFClassifierNLI, TrueT5NLI  # noqa: E402
from citegraph.models.rerank import CrossEncoderReranker  # noqa: E402
from citegraph.testing import (  # noqa: E402
    build_tiny_encoder,
    nli_tokenizer,
    save_model,
    t5_tokenizer,
    tiny_bert_classifier,
    tiny_t5,
)

LONG = " ".join(["stephen crane was born in newark , he wrote a novel ."] * 8)  # > 64 tokens
PAIRS = [
    NLIPair(premise="crane", hypothesis="writer"),
    NLIPair(premise=LONG, hypothesis="place of birth : newark"),
    NLIPair(premise="he died in paris .", hypothesis="place of death : paris"),
    NLIPair(premise="she", hypothesis=LONG),
    NLIPair(premise="stephen crane was born in 1871 in newark .", hypothesis="born : 1871"),
    NLIPair(premise="a", hypothesis="b"),
    NLIPair(premise="he wrote a novel", hypothesis="occupation : writer"),
]


def test_length_batches_sort_longest_first_and_cover_every_input_once() -> None:
    lengths = [3, 9, 1, 9, 4, 2, 7]
    # sorted: 9 9 7 4 3 2 1; three calls are needed, and (4 3)(2 1) pads less than (4 3 2)(1)
    assert length_batches(lengths, batch_size=3, call_cost=100) == [[1, 3, 6], [4, 0], [5, 2]]
    assert length_batches([], 4) == []
    for size in (1, 2, 5):
        batches = length_batches(lengths, size)
        assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
        assert all(1 <= len(b) <= size for b in batches)


def test_length_batches_keep_short_inputs_away_from_long_ones() -> None:
    # 64 MNLI texts (all-MiniLM-L6-v2 token counts): fixed batches of 32 pad to 3,808 tokens
    lengths = [6, 7, 7, 7, 8, 8, 9] + [10] * 6 + [11] * 7 + [12] * 4 + [13] + [14] * 4
    lengths += [15] * 3 + [16] + [17] * 6 + [18, 19, 19, 20, 21, 21, 23, 25, 25, 26, 28, 28]
    lengths += [32, 33, 33, 35, 39, 39, 44, 45, 47, 50, 54, 93, 104]
    batches = length_batches(lengths, 32)
    assert sum(len(b) * max(lengths[i] for i in b) for b in batches) == 1549
    assert len(batches) == 7
    # calls that cost nothing: every batch holds one length only
    assert all(len({lengths[i] for i in b}) == 1 for b in length_batches(lengths, 32, 0))


def test_batch_plan_depends_on_the_device_only_by_its_type() -> None:
    # CPU: today's batches (16 inputs, no token budget, a call worth 32 tokens)
    assert batch_plan_for("cpu") == BatchPlan(16, None, 32) == CPU_PLAN
    assert batch_plan_for(torch.device("cpu")) == CPU_PLAN
    # any accelerator: 512 inputs, 32,768 padded positions, a call worth 4,096 positions
    for device in ("cuda", "cuda:1", torch.device("cuda", 0), "mps", "xpu:0"):
        assert batch_plan_for(device) == BatchPlan(512, 32_768, 4096) == ACCELERATOR_PLAN
    # the user's choices replace the plan's; a backend brings its own CPU plan
    assert batch_plan_for("cuda", batch_size=64) == BatchPlan(64, 32_768, 4096)
    assert batch_plan_for("cuda", max_batch_tokens=1000) == BatchPlan(512, 1000, 4096)
    assert batch_plan_for("cpu", batch_size=4, max_batch_tokens=99) == BatchPlan(4, 99, 32)
    own = BatchPlan(8, None, 32)
    assert batch_plan_for("cpu", cpu=own) == own
    assert batch_plan_for("cuda:0", cpu=own) == ACCELERATOR_PLAN
    # a batch of a generation of 10 tokens is 11 forward passes: 11 x 32 = 352 on a CPU
    assert batch_plan_for("cpu", cpu=own, calls=11) == BatchPlan(8, None, 352)
    assert batch_plan_for("cuda", calls=3).call_cost == 3 * 4096
    for bad in ({"batch_size": 0}, {"max_batch_tokens": 0}, {"calls": 0}):
        with pytest.raises(ConfigError, match=">= 1"):
            batch_plan_for("cpu", **bad)


def test_token_budget_caps_padded_positions() -> None:
    lengths = [50, 10, 45, 10, 10, 200, 30, 10]
    # sorted 200 50 45 30 10 10 10 10. With calls nearly free (1 position) no batch pads:
    batches = length_batches(lengths, batch_size=8, call_cost=1, max_batch_tokens=100)
    assert batches == [[5], [0], [2], [6], [1, 3, 4, 7]]
    # A call worth 1,000 positions and 120 positions per batch: 200 alone (over the budget),
    # then 2 rows at width 50 or 45, 4 at 30, 12 at 10, so 3 more calls at least; of those
    # (50 45)(30)(10 x 4) pads least: 100 + 30 + 40 = 170 (next: (50)(45 30)(10 x 4), 180).
    batches = length_batches(lengths, batch_size=8, call_cost=1000, max_batch_tokens=120)
    assert batches == [[5], [0, 2], [6], [1, 3, 4, 7]]
    for size, budget in ((3, 25), (100, 60), (600, 1000)):
        batches = length_batches(lengths, size, 5, budget)
        assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
        for b in batches:
            assert len(b) <= size
            assert len(b) == 1 or len(b) * max(lengths[i] for i in b) <= budget


def _cut_cost(widths: list[int], cut: list[int], call_cost: float) -> float:
    total, end = 0.0, len(widths)
    while end > 0:
        total += call_cost + (end - cut[end]) * widths[cut[end]]
        end = cut[end]
    return total


@pytest.mark.parametrize("seed", range(6))
def test_monotone_cut_costs_what_the_plain_dynamic_program_costs(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        n = rng.randint(1, 120)
        widths = sorted((rng.randint(1, 90) for _ in range(n)), reverse=True)
        size = rng.choice([1, 2, 5, 17, 64, 200, 512])
        budget = rng.choice([None, 1, 50, 300, 2048])
        call = rng.choice([0, 1, 32, 500, 4096])
        plain = _cuts_plain(widths, size, call, budget)
        fast = _cuts_monotone(widths, size, call, budget)
        assert _cut_cost(widths, fast, call) == _cut_cost(widths, plain, call)
        end = n
        while end > 0:  # the fast cut keeps the limits too
            rows = end - fast[end]
            assert 1 <= rows <= size
            assert rows == 1 or budget is None or rows * widths[fast[end]] <= budget
            end = fast[end]


def test_large_batch_sizes_use_the_monotone_cut() -> None:
    lengths = [random.Random(1).randint(5, 120) for _ in range(3000)]
    batches = length_batches(lengths, 512, 4096, 32_768)
    assert sorted(i for b in batches for i in b) == list(range(3000))
    assert max(len(b) for b in batches) == 512
    assert all(len(b) * max(lengths[i] for i in b) <= 32_768 for b in batches)


def test_pipelined_prepares_the_next_batch_before_collecting_this_one() -> None:
    log: list[str] = []
    pipelined(
        [[0], [1], [2]],
        prepare=lambda rows: log.append(f"prepare {rows[0]}") or rows[0],
        launch=lambda k: log.append(f"launch {k}") or k,
        collect=lambda rows, k: log.append(f"collect {k}"),
    )
    assert log == [
        "prepare 0", "launch 0",
        "prepare 1", "launch 1", "collect 0",
        "prepare 2", "launch 2", "collect 1",
        "collect 2",
    ]  # fmt: skip
    log.clear()
    pipelined([], prepare=log.append, launch=log.append, collect=lambda *a: log.append(a))
    assert log == []


def test_to_device_on_a_cpu_copies_plainly() -> None:
    moved = to_device({"input_ids": torch.tensor([[1, 2]])}, "cpu")
    assert moved["input_ids"].tolist() == [[1, 2]]
    assert moved["input_ids"].device.type == "cpu"


def test_pad_rows_pads_on_the_tokenizer_side() -> None:
    encoded = {"input_ids": [[5, 6, 7], [8]], "attention_mask": [[1, 1, 1], [1]]}
    tok = SimpleNamespace(pad_token_id=0, padding_side="right")
    right = pad_rows(encoded, [1, 0], tok, torch)
    assert right["input_ids"].tolist() == [[8, 0, 0], [5, 6, 7]]
    assert right["attention_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    tok.padding_side = "left"
    assert pad_rows(encoded, [1], tok, torch)["input_ids"].tolist() == [[8]]  # no padding
    assert pad_rows(encoded, [1, 0], tok, torch)["input_ids"].tolist() == [[0, 0, 8], [5, 6, 7]]
    tok.pad_token_id = None
    with pytest.raises(ModelError, match="no pad token"):
        pad_rows(encoded, [0, 1], tok, torch)


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    spread = tiny_bert_classifier()  # random (seed 0), scaled so that inputs matter
    with torch.no_grad():
        spread.classifier.weight.mul_(300.0)
    return {
        "bert": save_model(spread, nli_tokenizer(), tmp_path_factory.mktemp("spread")),
        "t5": save_model(tiny_t5(), t5_tokenizer(), tmp_path_factory.mktemp("t5")),
        "encoder": build_tiny_encoder(tmp_path_factory.mktemp("encoder")),
    }


def _nli(path: Path, size: int | None, tokens: int | None = None) -> list[float]:
    model = HFClassifierNLI(path, batch_size=size, max_batch_tokens=tokens)
    return [v.score or 0.0 for v in model.entails_sync(PAIRS)]


def _nli3(path: Path, size: int | None, tokens: int | None = None) -> list[float]:
    probs = HFNLI3(path, batch_size=size, max_batch_tokens=tokens).probabilities_sync(PAIRS)
    return [x for p in probs for x in p.vector]


def _t5(path: Path, size: int | None, tokens: int | None = None) -> list[float]:
    verdicts = TrueT5NLI(path, batch_size=size, max_batch_tokens=tokens).entails_sync(PAIRS)
    return [x for v in verdicts for x in (v.score or 0.0, float(v.entailed))]


def _reranker(path: Path, size: int | None, tokens: int | None = None) -> list[float]:
    pairs = [(p.hypothesis, p.premise) for p in PAIRS]
    model = CrossEncoderReranker(path, batch_size=size, label_index=1, max_batch_tokens=tokens)
    return model.score_sync(pairs)


def _embed(path: Path, size: int | None, tokens: int | None = None) -> list[float]:
    texts = [t for p in PAIRS for t in (p.premise, p.hypothesis)]
    model = embedding_model(f"hf:{path}")
    if tokens is not None:  # the embedding model takes a batch size per call only
        return [x for t in texts for x in model.encode([t], batch_size=1)[0]]
    return [x for v in model.encode(texts, batch_size=size) for x in v]


@pytest.mark.parametrize(
    ("run", "model"),
    [(_nli, "bert"), (_nli3, "bert"), (_t5, "t5"), (_reranker, "bert"), (_embed, "encoder")],
    ids=["nli", "nli3", "t5-nli", "reranker", "embeddings"],
)
def test_batched_equals_one_at_a_time(run: object, model: str, dirs: dict[str, Path]) -> None:
    assert callable(run)
    one = run(dirs[model], 1)
    assert len(set(one)) > 2  # the inputs do change the numbers
    for size in (2, 3, 32, None):  # None: the CPU plan
        assert run(dirs[model], size) == pytest.approx(one, abs=1e-5)


@pytest.mark.parametrize(
    ("run", "model"),
    [(_nli, "bert"), (_nli3, "bert"), (_t5, "t5"), (_reranker, "bert"), (_embed, "encoder")],
    ids=["nli", "nli3", "t5-nli", "reranker", "embeddings"],
)
def test_token_budget_batches_equal_one_at_a_time(
    run: object, model: str, dirs: dict[str, Path]
) -> None:
    # batches of up to 512 inputs (the monotone cut) within 40 padded positions, so long
    # inputs run alone and short ones together
    assert callable(run)
    assert run(dirs[model], 512, 40) == pytest.approx(run(dirs[model], 1), abs=1e-5)


def test_the_auto_device_plans_for_where_auto_puts_the_model() -> None:
    torch = pytest.importorskip("torch")
    from citegraph.models.hf._batching import batch_plan_for

    expected = batch_plan_for("cuda:0" if torch.cuda.is_available() else "cpu")
    assert batch_plan_for("auto") == expected
    assert batch_plan_for(None) == expected


def test_a_batch_the_device_cannot_hold_runs_again_in_smaller_batches(
    dirs: dict[str, Path],
) -> None:
    """The model runs out of memory on batches of more than 2 pairs: the pairs run again in
    batches of 2 and 1, and every score equals the one computed a pair at a time."""
    want = _nli(dirs["bert"], 1)
    model = HFClassifierNLI(dirs["bert"], batch_size=8)
    real = model._model
    sizes: list[int] = []

    class Small(torch.nn.Module):
        device = real.device
        config = real.config

        def forward(self, **inputs: object) -> object:
            rows = int(inputs["input_ids"].shape[0])  # type: ignore[attr-defined]
            sizes.append(rows)
            if rows > 2:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB")
            return real(**inputs)

    model._model = Small()
    got = [v.score or 0.0 for v in model.entails_sync(PAIRS)]
    assert got == pytest.approx(want, abs=1e-6)
    refused = [i for i, rows in enumerate(sizes) if rows > 2]
    assert refused  # the first plan had a batch of more than 2
    after = sizes[refused[-1] + 1 :]  # the pairs without a score, in batches of at most 2
    assert after and max(after) <= 2
    assert sum(after) <= len(PAIRS)  # only pairs whose batch had not been collected run again

    class Never(Small):
        def forward(self, **inputs: object) -> object:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB")

    model._model = Never()
    with pytest.raises(ModelError, match="out of memory on cpu"):  # even one pair at a time
        model.entails_sync(PAIRS)
