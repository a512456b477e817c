"""Where ``citegraph ask`` spends its time on the embedded model (SmolLM2-135M-Instruct).

Prints, in one run so the numbers share the machine's load:

1. load: the KG + spaCy retrieval, and the model (converted folder from the cache);
2. prefill (the ~940-token KaLMA prompt, one forward pass) and decode (forced 32 new tokens,
   greedy, KV cache) tokens/s with 1 and 2 torch threads;
3. ``ask`` end to end (retrieval + generation + parsing + citation check) with the old CLI
   settings (512 tokens, no stop, no penalty, 2 threads) and the new defaults
   (:data:`~citegraph.models.LOCAL_GENERATE_DEFAULTS`, one thread), on ``--questions`` BioKaLMA
   questions (from complex_question_graph.json): wall and process CPU seconds (CPU time is
   steadier on a shared machine), tokens, finish reason, citations parsed / in the KG,
   unreadable brackets, and how often the most frequent 4-word phrase occurs (degenerate loops
   show as large numbers);
4. with ``llama-cpp-python`` importable (``--llama-cpp``), the same prompt through llama.cpp on
   the package's GGUF (Q4_1, no dequantisation) for comparison.

    python benchmarks/ask_local.py --data-dir ../shared/data --questions 3 --old 1
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from collections import Counter
from typing import Any

import torch

from citegraph.kalma import ask_async
from citegraph.kalma.generate._prompt import build_messages
from citegraph.kalma.retrieve._retrieve import Retriever
from citegraph.kg import open_kg
from citegraph.models import GenerateConfig
from citegraph.models.chat import local_chat, local_generate_config
from citegraph.models.chat._local import locate_smollm2_gguf

QUESTIONS = (
    "Who was Stephen Crane and what shaped his writing?",
    "Who was Ernst Hanfstaengl, what were some significant events in his life, and how was he "
    "involved with both Hitler and FDR?",
    "Who is Enda Kenny, what is his background, and what notable roles has he played in his "
    "political career and representation of Ireland?",
)


def worst_repeat(text: str, n: int = 4) -> int:
    """How often the most frequent ``n``-word phrase occurs in ``text`` (1: no repeats)."""
    words = re.findall(r"\w+", text.lower())
    grams = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return max(grams.values(), default=0)


def prefill_decode(
    chat: Any, messages: Any, threads: int, new: int = 32
) -> tuple[int, float, float]:
    """Prompt tokens, prefill tokens/s and decode tokens/s of ``chat``'s model."""
    model, tokenizer = chat._live()
    ids = tokenizer(chat.format_prompt(messages), return_tensors="pt", add_special_tokens=False)
    n = int(ids["input_ids"].shape[1])
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with torch.inference_mode():
            start = time.perf_counter()
            model(**ids, use_cache=True)
            prefill = time.perf_counter() - start
            start = time.perf_counter()
            model.generate(
                **ids,
                max_new_tokens=new,
                min_new_tokens=new,
                do_sample=False,
                pad_token_id=tokenizer.eos_token_id,
            )
            total = time.perf_counter() - start
    finally:
        torch.set_num_threads(before)
    return n, n / prefill, (new - 1) / max(total - prefill, 1e-6)


def run_ask(question: str, kg: Any, chat: Any, config: GenerateConfig, label: str) -> None:
    """One ``ask`` call and its line of the table."""
    start, cpu = time.perf_counter(), time.process_time()
    result = asyncio.run(ask_async(question, kg, chat, config=config))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    gen = result.answer.generation
    tokens = gen.usage.completion_tokens if gen else 0
    finish = gen.finish_reason if gen else result.answer.error
    print(
        f"{label:>6} {question[:34]:<34} {wall:>7.1f} {cpu:>6.1f} {tokens:>6} {finish!s:>6} "
        f"{result.citations.n_citations:>5} {result.citations.n_correct:>5} "
        f"{len(result.parsed.issues):>5} {worst_repeat(result.answer.text):>6}",
        flush=True,
    )


def llama_cpp_rates(prompt: str, threads: int, new: int = 32) -> None:
    """Load, prefill and decode rates of llama.cpp on the packaged GGUF (if installed)."""
    try:
        from llama_cpp import Llama
    except ImportError:
        print("llama-cpp-python is not installed: skipped")
        return
    start = time.perf_counter()
    llm = Llama(str(locate_smollm2_gguf()), n_ctx=2048, n_threads=threads, verbose=False)
    load = time.perf_counter() - start
    tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
    start = time.perf_counter()
    llm.eval(tokens)
    prefill = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(new):
        llm.eval([int(llm.sample(temp=0.0))])
    decode = time.perf_counter() - start
    print(
        f"llama.cpp threads={threads}: load {load:.2f} s, prompt {len(tokens)} tokens, "
        f"prefill {len(tokens) / prefill:.0f} tokens/s, decode {new / decode:.1f} tokens/s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument(
        "--old", type=int, default=1, help="Questions also asked with the old settings (slow)."
    )
    parser.add_argument("--llama-cpp", action="store_true", help="Also time llama-cpp-python.")
    args = parser.parse_args()
    start = time.perf_counter()
    kg = open_kg("biokalma", data_dir=args.data_dir).kg
    retrieval = asyncio.run(Retriever()(QUESTIONS[0], kg))
    print(f"KG + spaCy + first retrieval: {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    chat = local_chat()
    print(f"model load (converted folder): {time.perf_counter() - start:.1f} s")
    messages = build_messages(QUESTIONS[0], retrieval.graphs)
    for threads in (1, 2):
        n, prefill, decode = prefill_decode(chat, messages, threads)
        print(
            f"transformers threads={threads}: prompt {n} tokens, prefill {prefill:.0f} tokens/s, "
            f"decode {decode:.1f} tokens/s",
            flush=True,
        )
    if args.llama_cpp:
        for threads in (1, 2):
            llama_cpp_rates(chat.format_prompt(messages), threads)
    print(
        f"\n{'set':>6} {'question':<34} {'wall s':>7} {'cpu s':>6} {'tokens':>6} {'finish':>6} "
        f"{'cites':>5} {'in KG':>5} {'bad':>5} {'repeat':>6}"
    )
    old = GenerateConfig(temperature=0.5, max_tokens=512, seed=0)
    new = local_generate_config()
    for i, question in enumerate(QUESTIONS[: args.questions]):
        if i < args.old:
            chat.threads = 2
            run_ask(question, kg, chat, old, "old")
        chat.threads = 1
        run_ask(question, kg, chat, new, "new")
    asyncio.run(chat.aclose())


if __name__ == "__main__":
    main()
