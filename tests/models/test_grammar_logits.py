"""A tiny random causal LM generating under the citation grammar (llguidance logits processor):
over many seeds, every answer parses, every citation is a retrieved triple, and no fact is
cited twice in one answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from _fuzz import fuzz_size

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("llguidance")
tokenizers = pytest.importorskip("tokenizers")

from _kg_helpers import subgraph  # noqa: E402
from _tiny_models import build_byte_lm  # noqa: E402
from citegraph.datasets import load_biokalma  # noqa: E402
from citegraph.kalma.constrain import CitationChoices, citation_grammar  # noqa: E402
from citegraph.kalma.generate import generate_answer_async  # noqa: E402
from citegraph.kalma.parse import parse_answer  # noqa: E402
from citegraph.kg import Subgraph  # noqa: E402
from citegraph.models import ChatRequest, GenerateConfig  # noqa: E402
from citegraph.models.chat import HFChat  # noqa: E402
from citegraph.models.grammar import grammar_accepts  # noqa: E402

#: Seeds per question (6 questions): 2 by default, 5 under CITEGRAPH_FUZZ=full (tests/_fuzz.py).
SEEDS = fuzz_size(2, 5)
pytestmark = pytest.mark.fuzz


@pytest.fixture(scope="module")
def byte_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random Llama over bytes; '[' is favoured a little so citations are frequent
    (the prompts are ~3,500 bytes)."""
    return build_byte_lm(tmp_path_factory.mktemp("byte-lm"), max_positions=8192)


def test_random_model_under_the_grammar_always_parses(byte_lm: Path, data_dir: Path) -> None:
    torch.set_num_threads(1)
    chat = HFChat.load(byte_lm, device="cpu")
    samples = [s for s in load_biokalma("specific", data_dir)[:30] if s.graphs][:6]
    citations = answers = 0
    for sample in samples:
        held = {t.key for g in sample.graphs for t in g.triples}
        grammar = citation_grammar(CitationChoices(sample.graphs))
        for seed in range(SEEDS):
            config = GenerateConfig(temperature=1.0, top_p=1.0, max_tokens=160, seed=seed)
            answer = asyncio.run(
                generate_answer_async(
                    sample.question, sample.graphs, chat, config=config, citations="constrained"
                )
            )
            assert answer.error is None
            assert answer.constraint is not None and answer.constraint["mode"] == "logits"
            parsed = parse_answer(answer.text, sample.graphs)
            assert not parsed.issues, (answer.text, parsed.issues)
            for c in parsed.kg_citations:
                assert c.triple is not None and c.triple.key in held, (answer.text, c)
            ended = answer.generation is not None and answer.generation.finish_reason == "stop"
            if ended:  # it stopped where the grammar allows an end: a whole sentence of it
                assert grammar_accepts(grammar, answer.text), answer.text
            citations += len(parsed.citations)
            answers += 1
    assert answers == 6 * SEEDS
    assert citations >= 6 * SEEDS, citations  # not vacuous: the walks do cite


def test_the_same_model_free_writes_what_the_parser_cannot_read(byte_lm: Path) -> None:
    # without the grammar the random model's brackets are unreadable: the grammar is what makes
    # the test above pass
    chat = HFChat.load(byte_lm, device="cpu")
    texts = []
    for seed in range(5):
        config = GenerateConfig(temperature=1.0, max_tokens=200, seed=seed)
        request = ChatRequest.of([{"role": "user", "content": "Who?"}], config)
        texts.append(asyncio.run(chat.generate(request)).text)
    assert sum(t.count("[") for t in texts) >= 3
    assert sum(len(parse_answer(t).issues) for t in texts) >= 2


def _cited_twice(text: str, graphs: list[Subgraph]) -> int:
    keys = [c.triple.key for c in parse_answer(text, graphs).kg_citations if c.triple]
    return len(keys) - len(set(keys))


#: Three citable facts: a random walk that cites often soon runs out of new ones.
FEW_FACTS = [
    subgraph("Q1", "Ada", ("place of birth", "Rome"), ("occupation", "painter")),
    subgraph("Q2", "Bob", ("occupation", "engineer")),
]


def test_random_model_never_cites_a_fact_twice_under_the_grammar(byte_lm: Path) -> None:
    """The same random walks under the grammar as servers receive it (fixed: no update) repeat
    facts; under the local grammar, whose update drops each cited fact, none does."""
    torch.set_num_threads(1)
    chat = HFChat.load(byte_lm, device="cpu")
    grammar = citation_grammar(CitationChoices(FEW_FACTS))
    repeats = {"fixed": 0, "updated": 0}
    citations = 0
    for seed in range(2 * SEEDS):
        config = GenerateConfig(temperature=1.0, top_p=1.0, max_tokens=200, seed=seed)
        messages = [{"role": "user", "content": "Who were Ada and Bob?"}]
        for kind, g in (("fixed", grammar.model_copy(update={"update": None})),
                        ("updated", grammar)):  # fmt: skip
            request = ChatRequest.of(messages, config).model_copy(update={"grammar": g})
            generation = asyncio.run(chat.generate(request))
            repeats[kind] += _cited_twice(generation.text, FEW_FACTS)
            if kind == "updated":
                citations += len(parse_answer(generation.text, FEW_FACTS).kg_citations)
                assert generation.raw is not None
                assert "grammar_updates_refused" not in generation.raw
    assert repeats["updated"] == 0
    assert repeats["fixed"] >= 2 * SEEDS, repeats  # not vacuous: without the update they repeat
    assert citations >= 2 * SEEDS
