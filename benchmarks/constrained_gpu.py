"""What does the citation grammar cost a local model on a GPU (or any device)? Free vs
constrained generation side by side, question by question, on BioKaLMA's specific split.

A randomly initialised causal LM of a real architecture (no hub: random weights, so only speed and
the grammar's guarantees are meaningful, not the answers) with the real SmolLM2 tokenizer
(49,152 tokens) answers each question twice, free and ``citations="constrained"``, alternating,
with the same seed. Printed: tokens/s of each, the grammar's own time per token and its share of
constrained generation time (``constraint.grammar_s`` / latency, measured inside the logits
processor), the per-question grammar build time (choices, grammar text, llguidance matcher), and
whether every constrained answer parses with every citation a retrieved triple.

``--arch`` ``smollm2-1.7b`` (24 layers, 2,048 wide, 1.7 B parameters; for a GPU), ``smollm2-360m``
or ``small`` (2 layers, 128 wide; a CPU dry run). ``--tokenizer`` is a folder with SmolLM2's
``tokenizer.json`` (default: the embedded model's converted folder).

    .venv/bin/python benchmarks/constrained_gpu.py --arch small --device cpu --questions 4
    python3 benchmarks/constrained_gpu.py --arch smollm2-1.7b --device cuda --dtype bf16
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

ARCHS: dict[str, dict[str, int]] = {
    "smollm2-1.7b": {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
                     "num_attention_heads": 32, "num_key_value_heads": 32},
    "smollm2-360m": {"hidden_size": 960, "intermediate_size": 2560, "num_hidden_layers": 32,
                     "num_attention_heads": 15, "num_key_value_heads": 5},
    "small": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2},
}  # fmt: skip


def build_chat(arch: str, tokenizer_dir: Path, device: str, dtype: str) -> Any:
    """An HFChat over a random model of ``arch`` with the SmolLM2 tokenizer."""
    import torch
    import transformers

    from citegraph.models.chat import HFChat

    tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_dir)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
        **ARCHS[arch],
    )
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
    torch.manual_seed(0)
    with torch.device(device):
        model = transformers.LlamaForCausalLM(config).to(torch_dtype).eval()
    return HFChat(
        model=model,
        tokenizer=tokenizer,
        torch=torch,
        name=f"random/{arch}",
        endpoint=f"random/{arch}#{dtype}",
        device=device,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=sorted(ARCHS), default="small")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="fp32")
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--tokenizer", type=Path, default=None)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()

    from citegraph.datasets import load_biokalma
    from citegraph.kalma.constrain import CitationChoices, citation_grammar
    from citegraph.kalma.generate import generate_answer_async
    from citegraph.kalma.parse import parse_answer
    from citegraph.models import GenerateConfig
    from citegraph.models.grammar._llg import compile_grammar, hf_tokenizer

    tokenizer_dir = args.tokenizer
    if tokenizer_dir is None:
        from citegraph.models.chat._local import converted_model_dir

        tokenizer_dir = converted_model_dir()
    started = time.perf_counter()
    chat = build_chat(args.arch, tokenizer_dir, args.device, args.dtype)
    print(f"model random {args.arch} on {args.device} {args.dtype}: built in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    samples = [s for s in load_biokalma("specific", args.data_dir) if s.graphs][: args.questions]
    ll_tok = hf_tokenizer(chat._tokenizer)
    builds = []
    for sample in samples:
        t0 = time.perf_counter()
        compile_grammar(ll_tok, citation_grammar(CitationChoices(sample.graphs)))
        builds.append(time.perf_counter() - t0)
    median, worst = 1000 * statistics.median(builds), 1000 * max(builds)
    print(f"grammar build per question (choices + grammar + matcher): median {median:.2f} ms, "
          f"max {worst:.2f} ms")  # fmt: skip

    rows: dict[str, list[tuple[int, float]]] = {"free": [], "constrained": []}
    grammar_s = 0.0
    bad, citations, cut = 0, 0, 0
    for n, sample in enumerate(samples):
        config = GenerateConfig(temperature=0.7, max_tokens=args.max_tokens, seed=n)
        for mode in ("free", "constrained") if n % 2 == 0 else ("constrained", "free"):
            answer = asyncio.run(
                generate_answer_async(
                    sample.question, sample.graphs, chat, config=config, citations=mode
                )
            )
            gen = answer.generation
            if gen is None:
                raise SystemExit(f"{sample.id} {mode}: {answer.error}")
            rows[mode].append((gen.usage.completion_tokens or 0, gen.latency_s or 0.0))
            if mode == "constrained" and answer.constraint is not None:
                grammar_s += answer.constraint.get("grammar_s", 0.0)
                cut += bool(answer.constraint["cut_open_citation"])
                parsed = parse_answer(answer.text, sample.graphs)
                held = {t.key for g in sample.graphs for t in g.triples}
                citations += len(parsed.citations)
                bad += len(parsed.issues) + sum(
                    1 for c in parsed.kg_citations if c.triple is None or c.triple.key not in held
                )
    print(f"{len(samples)} questions, max_tokens {args.max_tokens}, temperature 0.7")
    print(f"{'mode':<12} {'tokens':>7} {'seconds':>8} {'tokens/s':>9}")
    for mode, pairs in rows.items():
        tokens, seconds = sum(t for t, _ in pairs), sum(s for _, s in pairs)
        print(f"{mode:<12} {tokens:>7} {seconds:>8.2f} {tokens / seconds:>9.1f}")
    tokens_c = sum(t for t, _ in rows["constrained"])
    seconds_c = sum(s for _, s in rows["constrained"])
    print(f"grammar time {grammar_s:.3f} s = {1000 * grammar_s / max(tokens_c, 1):.3f} ms/token, "
          f"{100 * grammar_s / seconds_c:.2f}% of constrained generation time")  # fmt: skip
    print(f"constrained answers: {citations} citations, {bad} unreadable or outside the graphs, "
          f"{cut} cut inside a citation at max_tokens")  # fmt: skip


if __name__ == "__main__":
    main()
