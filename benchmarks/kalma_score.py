"""Throughput of ``kalma score`` on the whole BioKaLMA split with synthetic attributed answers.

For every question with a graph, an answer is built from its facts: one sentence per fact,
"<name>'s <relation> is <value> [<qid>, <relation>: <value>]." (every third fact is cited with a
wrong value, every fifth sentence carries [NA]). Gold = the first five facts. The script scores
them with the lexical matcher in paper and reference mode and prints answers per second, with the
parse and scoring stages timed side by side in one run. Prints figures only.

    .venv/bin/python benchmarks/kalma_score.py [--data-dir DIR] [--split specific]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from citegraph.datasets import BioKaLMASample, load_biokalma
from citegraph.kalma import KalmaScoreConfig, parse_answer, score_answers
from citegraph.kalma.parse import parse_answer_reference


def build_inputs(split: str, data_dir: str | None, folder: Path) -> tuple[Path, Path, int]:
    """Write synthetic answers.jsonl and gold.jsonl; return their paths and the answer count."""
    samples = [s for s in load_biokalma(split, data_dir) if s.has_graph]  # type: ignore[arg-type]
    answers, gold = folder / "answers.jsonl", folder / "gold.jsonl"
    return answers, gold, write_answers(samples, answers, gold)


def write_answers(samples: Iterable[BioKaLMASample], answers: Path, gold: Path) -> int:
    """Write one synthetic attributed answer and its gold set per sample; return the count."""
    n = 0
    with answers.open("w") as fa, gold.open("w") as fg:
        for s in samples:
            sentences, knowledge = [], []
            for g in s.graphs:
                for i, t in enumerate(g.triples):
                    value = t.value if i % 3 else t.value + " (disputed)"
                    na = " [NA]" if i % 5 == 4 else ""
                    sentences.append(
                        f"{g.center.name}'s {t.relation} is {t.value} "
                        f"[{t.subject}, {t.relation}: {value}]{na}."
                    )
                knowledge += [t.as_list() for t in g.triples[:5]]
            fa.write(json.dumps({"id": s.id, "answer": " ".join(sentences)}) + "\n")
            fg.write(json.dumps({"id": s.id, "knowledge": knowledge}) + "\n")
            n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--split", default="specific", choices=["general", "specific"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        answers, gold, n = build_inputs(args.split, args.data_dir, folder)
        texts = [json.loads(x)["answer"] for x in answers.read_text().splitlines()]
        graphs = {s.id: s.graphs for s in load_biokalma(args.split, args.data_dir)}  # type: ignore[arg-type]
        ids = [json.loads(x)["id"] for x in answers.read_text().splitlines()]
        n_chars = sum(len(t) for t in texts)
        print(f"{n} answers, {n_chars / n:.0f} characters each on average")
        for name, fn in (
            ("parse (paper, with graphs)", lambda t, i: parse_answer(t, graphs[i])),
            ("parse (reference regex)", lambda t, i: parse_answer_reference(t)),
        ):
            start = time.perf_counter()
            for text, sid in zip(texts, ids, strict=True):
                fn(text, sid)
            took = time.perf_counter() - start
            print(f"{name:<32} {took:7.2f} s  {n / took:8.1f} answers/s")
        for mode in ("paper", "reference"):
            start = time.perf_counter()
            result = score_answers(
                answers,
                folder / f"run-{mode}",
                KalmaScoreConfig(mode=mode, split=args.split),
                gold_path=gold,
                data_dir=args.data_dir,
            )
            took = time.perf_counter() - start
            m = result.metrics
            print(
                f"score ({mode}, lexical){'':<15} {took:7.2f} s  {n / took:8.1f} answers/s  "
                f"citations={m['n_citations']} corr={m['correctness']['micro']:.3f} "
                f"P={m['precision']['micro']:.3f} R={m['recall']['micro']:.3f} "
                f"align={m['alignment']['micro']:.3f}"
            )


if __name__ == "__main__":
    main()
