"""Free vs constrained citations (``--citations``), side by side in one run, on BioKaLMA.

For two answering models, the embedded SmolLM2-135M-Instruct (``local``) and a scripted noisy
citer (``mock``), the script runs :func:`citegraph.kalma.run_kalma` on the first ``--questions``
questions of BioKaLMA's specific split twice, with ``citations="free"`` and
``citations="constrained"``, and prints one table row per (model, mode) from each run's
``metrics.json`` and records:

- answers, answers with at least one KG citation, KG citations per answer, correctness,
  precision, recall, F1 (paper mode, micro), [NA] markers, malformed brackets (parse issues);
- generation speed (local only): completion tokens per second of generation latency (prefill
  included), and per second of CPU time in the generating thread (steadier on a shared
  machine), and for constrained runs the grammar's share of generation time
  (``sum(constraint.grammar_s) / sum(generation.latency_s)``, the logits processor timing
  itself) and its cost per token.

It also times the grammar's making per question: the citable facts (``CitationChoices``), the
grammar (``citation_grammar``) and the llguidance matcher compiled over the SmolLM2 tokenizer.

Settings: gold ``question-match`` (a labelled approximation: BioKaLMA released no gold minimum
knowledge sets), paper mode, lexical NLI, temperature 0 (greedy, so free and constrained differ
only by the grammar), ``--max-tokens`` per answer, response cache off. The local runs alternate
free and constrained every ``--batch`` questions (each run directory resumes where it stopped),
so both modes share the machine's load. The mock model writes, per question and seeded, sentences
citing real triples, some citing a wrong value or a QID that does not exist, malformed brackets
(``[1]``, a bare QID, an unclosed bracket at the end) and uncited sentences; constrained, it
decodes the same script under the grammar. Prints figures only.

    python benchmarks/constrained_citations.py --data-dir ../shared/data --questions 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citegraph.datasets import BioKaLMASample, load_biokalma
from citegraph.kalma import KalmaRunConfig, run_kalma
from citegraph.kalma.constrain import CitationChoices, citation_grammar
from citegraph.models import ChatRequest, Generation, MockChat
from citegraph.models.chat import HFChat, local_chat
from citegraph.models.grammar._llg import compile_grammar, hf_tokenizer
from citegraph.runs import Runtime

MODES = ("free", "constrained")
UNCITED = (
    "{name} is remembered by many readers.",
    "Much has been written about {name}.",
    "{name} influenced the people around them.",
)


@dataclass(frozen=True)
class NoisyAnswer:
    """A scripted answer and the kind of each of its sentences, in order."""

    text: str
    kinds: tuple[str, ...]


def noisy_answer(sample: BioKaLMASample, seed: int = 0) -> NoisyAnswer:
    """A realistic noisy citer's answer to ``sample``, from its own graphs (seeded per question).

    Sentence kinds: ``real`` (cites a triple of the graph), ``wrong-value`` (a real entity and
    relation with another relation's value, not a triple), ``unknown-qid`` (a QID that is in no
    graph), ``uncited``, ``na`` (an ``[NA]`` marker), and the malformed brackets ``number``
    (``[1]``), ``bare-qid`` (``[Q..]``) and ``unclosed`` (a citation missing its ``]``, always
    last, as a reply cut short). A question without a graph gets one uncited sentence and one
    [NA] sentence.
    """
    rng = random.Random(f"{seed}:{sample.id}")
    facts = [(g, t) for g in sample.graphs for t in g.triples if t.relation != "name"]
    if not facts:
        return _joined([("uncited", "I do not know much about this."), _na("this")])
    known = {(t.subject, t.relation, t.value) for _, t in facts}
    qids = {g.center.id for g in sample.graphs}
    picks = rng.sample(facts, min(len(facts), 6))
    parts: list[tuple[str, str]] = []
    for g, t in picks[: rng.randint(2, 4)]:
        cite = f"[{t.subject}, {t.relation}: {t.value}]"
        parts.append(("real", f"{g.center.name}'s {t.relation} is {t.value} {cite}."))
    for _ in range(rng.randint(0, 1)):
        g, t = rng.choice(facts)
        others = [o.value for _, o in facts if (t.subject, t.relation, o.value) not in known]
        wrong = rng.choice(others) if others else f"{t.value} (disputed)"
        cite = f"[{t.subject}, {t.relation}: {wrong}]"
        parts.append(("wrong-value", f"{g.center.name}'s {t.relation} is {wrong} {cite}."))
    for _ in range(rng.randint(0, 1)):
        g, t = rng.choice(facts)
        qid = f"Q{rng.randint(10**8, 10**9 - 1)}"
        while qid in qids:
            qid = f"Q{rng.randint(10**8, 10**9 - 1)}"
        cite = f"[{qid}, {t.relation}: {t.value}]"
        parts.append(("unknown-qid", f"Its {t.relation} is {t.value} {cite}."))
    name = picks[0][0].center.name
    for _ in range(rng.randint(0, 2)):
        parts.append(("uncited", rng.choice(UNCITED).format(name=name)))
    if rng.random() < 0.4:
        parts.append(_na(name))
    g, t = picks[-1]
    malformed = rng.sample(["number", "bare-qid", "unclosed"], rng.randint(0, 2))
    if "number" in malformed:
        parts.append(("number", f"{name} is widely cited [1]."))
    if "bare-qid" in malformed:
        parts.append(("bare-qid", f"{g.center.name} has an entry in Wikidata [{g.center.id}]."))
    rng.shuffle(parts)
    if "unclosed" in malformed:
        parts.append(("unclosed", f"Its {t.relation} is {t.value} [{t.subject}, {t.relation}:"))
    return _joined(parts)


def _na(name: str) -> tuple[str, str]:
    return ("na", f"Some of {name}'s story is missing from the knowledge graph [NA].")


def _joined(parts: Sequence[tuple[str, str]]) -> NoisyAnswer:
    return NoisyAnswer(" ".join(text for _, text in parts), tuple(kind for kind, _ in parts))


def noisy_mock(samples: Sequence[BioKaLMASample], seed: int = 0) -> MockChat:
    """A :class:`MockChat` answering each question of ``samples`` with :func:`noisy_answer`
    (the question is the last line of the request's last message)."""
    scripts = {s.question: noisy_answer(s, seed).text for s in samples}

    def script(request: ChatRequest) -> str:
        return scripts[request.messages[-1].content.rsplit("\n", 1)[-1]]

    return MockChat(script, name="mock/noisy-citer")


@dataclass
class CpuTimed:
    """An :class:`HFChat` whose generations are also timed in CPU seconds of the generating
    thread (torch runs there with one thread), per mode (with or without a grammar)."""

    chat: HFChat
    cpu_s: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MODES, 0.0))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.chat, name)

    async def generate(self, request: ChatRequest) -> Generation:
        """Generate in a worker thread, adding its CPU time to :attr:`cpu_s`."""
        return await asyncio.to_thread(self._timed, request)

    def _timed(self, request: ChatRequest) -> Generation:
        start = time.thread_time()
        try:
            return self.chat.generate_sync(request)
        finally:
            mode = "free" if request.grammar is None else "constrained"
            self.cpu_s[mode] += time.thread_time() - start

    async def aclose(self) -> None:
        """Left open: the benchmark closes the model itself."""


def config(mode: str, model: str, max_tokens: int) -> KalmaRunConfig:
    """The run configuration of one (model, mode) cell."""
    return KalmaRunConfig(
        model=model,
        split="specific",
        gold="question-match",
        mode="paper",
        nli="lexical",
        temperature=0.0,
        max_tokens=max_tokens,
        citations=mode,  # type: ignore[arg-type]
    )


def run_cells(out: Path, model: str, chat: Any, args: argparse.Namespace) -> dict[str, float]:
    """Run free and constrained for ``model``, alternating every ``--batch`` questions;
    return each mode's wall seconds."""
    took = dict.fromkeys(MODES, 0.0)
    done = 0
    while done < args.questions:
        done = min(done + args.batch, args.questions)
        order = MODES if (done // args.batch) % 2 else MODES[::-1]
        for mode in order:
            start = time.perf_counter()
            run_kalma(
                out / f"{model}-{mode}",
                config(mode, model, args.max_tokens),
                runtime=Runtime(cache=False, limit=done, concurrency=1),
                data_dir=args.data_dir,
                model=chat,
            )
            took[mode] += time.perf_counter() - start
        print(f"  {model}: {done}/{args.questions} questions", flush=True)
    return took


def row(run: Path, label: str, cpu_s: float | None) -> str:
    """One table row from a run directory's metrics.json and samples.jsonl."""
    m = json.loads((run / "metrics.json").read_text())
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    gens = [r["generation"] for r in records if r.get("generation")]
    tokens = sum(g["usage"]["completion_tokens"] or 0 for g in gens)
    latency = sum(g.get("latency_s") or 0.0 for g in gens)
    cited = sum(
        1
        for r in records
        if any(c["kind"] == "kg" for s in r["parsed"]["sentences"] for c in s["citations"])
    )
    n = m["n_answers"]
    speed = f"{tokens / latency:5.1f}" if latency else "    -"
    cpu = f"{tokens / cpu_s:9.1f}" if cpu_s else "        -"
    share, per_token = "      -", "     -"
    grammar = m.get("constraint") or {}
    if grammar.get("grammar_share") is not None:
        share = f"{100 * grammar['grammar_share']:6.2f}%"
        per_token = f"{1000 * grammar['grammar_s'] / tokens:6.2f}"
    return (
        f"| {label:<19} | {n:>3} | {cited:>3} | {m['n_citations'] / n:5.2f} | "
        f"{_pct(m, 'correctness')} | {_pct(m, 'precision')} | {_pct(m, 'recall')} | "
        f"{_pct(m, 'f1')} | {m['n_na_markers']:>4} | {m['n_parse_issues']:>9} | {speed} | "
        f"{cpu} | {share} | {per_token} |"
    )


def _pct(metrics: dict[str, Any], name: str) -> str:
    value = metrics[name]["micro"]
    return "    -" if value is None else f"{100 * value:5.1f}"


HEADER = (
    "| model / citations   |   n | cit | cit/a | corr% |   P % |   R % |  F1 % | [NA] | malformed "
    "| tok/s | tok/cpu-s | grammar | ms/tok |\n"
    "|---------------------|----:|----:|------:|------:|------:|------:|------:|-----:|----------:"
    "|------:|----------:|--------:|-------:|"
)


def compile_times(samples: Sequence[BioKaLMASample], chat: HFChat) -> None:
    """Print the grammar's making per question: choices + grammar, and the matcher compile."""
    tokenizer = chat._live()[1]
    start = time.perf_counter()
    ll = hf_tokenizer(tokenizer)
    print(f"llguidance tokenizer import (once per model): {time.perf_counter() - start:.2f} s")
    made, compiled = [], []
    for s in samples:
        start = time.perf_counter()
        grammar = citation_grammar(CitationChoices(s.graphs))
        middle = time.perf_counter()
        compile_grammar(ll, grammar)
        made.append(middle - start)
        compiled.append(time.perf_counter() - middle)
    both = [a + b for a, b in zip(made, compiled, strict=True)]
    print(
        f"grammar per question ({len(samples)}): choices + grammar {_ms(made)}, "
        f"llguidance compile {_ms(compiled)}, total {_ms(both)}"
    )


def _ms(values: Sequence[float]) -> str:
    return f"mean {1000 * statistics.fmean(values):.1f} ms (max {1000 * max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument(
        "--batch", type=int, default=10, help="Questions per free/constrained turn."
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the mock's noisy script.")
    parser.add_argument("--no-local", action="store_true", help="Mock only (fast).")
    parser.add_argument("--out", default=None, help="Keep the run directories here.")
    args = parser.parse_args()
    began = time.perf_counter()
    samples = list(load_biokalma("specific", args.data_dir))[: args.questions]  # type: ignore[arg-type]
    print(
        f"BioKaLMA specific, first {len(samples)} questions ({sum(s.has_graph for s in samples)} "
        f"with a graph); paper mode, lexical NLI, gold question-match (a labelled approximation: "
        f"BioKaLMA released no gold), temperature 0, max_tokens {args.max_tokens}, response "
        f"cache off, free/constrained alternating every {args.batch} questions"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        rows = []
        run_cells(out, "mock", noisy_mock(samples, args.seed), args)
        rows += [row(out / f"mock-{mode}", f"mock {mode}", None) for mode in MODES]
        if not args.no_local:
            start = time.perf_counter()
            chat = local_chat()
            print(f"local model load: {time.perf_counter() - start:.1f} s, threads={chat.threads}")
            compile_times(samples, chat)
            timed = CpuTimed(chat)
            took = run_cells(out, "local", timed, args)
            walls = ", ".join(f"{mode} {seconds:.0f}" for mode, seconds in took.items())
            print(f"local wall seconds per mode: {walls}")
            rows += [row(out / f"local-{m}", f"local {m}", timed.cpu_s[m]) for m in MODES]
            asyncio.run(chat.aclose())
    print(HEADER)
    print("\n".join(rows))
    print(f"total {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
