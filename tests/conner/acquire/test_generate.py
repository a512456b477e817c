"""CONNER prompts (paper Tables 11-13), knowledge generation and answer generation with MockChat:
exact prompt texts, demonstrations that never show the item itself, seeds, recorded errors."""

from __future__ import annotations

import asyncio
import string

import pytest

from citegraph.conner import ConnerSample, Knowledge
from citegraph.conner.acquire import (
    DownstreamAnswer,
    GeneratedKnowledge,
    answer_prompt,
    clean_knowledge,
    default_template,
    extract_answer,
    generate_answers_async,
    generate_knowledge_async,
    get_template,
    knowledge_prompt,
    prompt_templates,
    select_demonstrations,
)
from citegraph.errors import ConfigError
from citegraph.models import ChatRequest, MockChat


def nq(i: int, knowledge: str | None = None) -> ConnerSample:
    return ConnerSample(
        id=f"nq:{i}",
        task="nq",
        topic=f"Topic {i}",
        query=f"question {i}",
        gold_knowledge=knowledge or f"knowledge {i}.",
        gold_answer=f"answer {i}",
    )


def wow(i: int, knowledge: str | None = None) -> ConnerSample:
    return ConnerSample(
        id=f"wow-seen:{i}",
        task="wow",
        topic=f"Topic {i}",
        query=f"utterance {i}",
        history=(f"opening {i}", f"reply {i}", f"utterance {i}"),
        gold_knowledge=knowledge or f"knowledge {i}.",
        gold_answer=f"response {i}",
    )


def last_user(request: ChatRequest) -> str:
    (message,) = request.messages
    assert message.role == "user"
    return message.content


ZS_NQ = (
    "Topic: Topic 0\nGenerate a Wikipedia to answer the given question.\n"
    "Question: question 0\nWikipedia:"
)


# ---------------------------------------------------------------- prompts


def test_all_paper_templates_are_there_with_the_best_as_defaults() -> None:
    assert len(prompt_templates("knowledge-zero-shot")) == 8  # Table 11: 4 NQ + 4 WoW
    assert len(prompt_templates("knowledge-few-shot")) == 10  # Table 12: 5 + 5
    # Table 13: 3 NQ + 5 WoW, plus the authors' helpfulness.py format for each task
    assert len(prompt_templates("answer-few-shot")) == 10
    best = {
        (kind, task): default_template(kind, task).id
        for kind in ("knowledge-zero-shot", "knowledge-few-shot", "answer-few-shot")
        for task in ("nq", "wow")
    }
    assert best == {
        ("knowledge-zero-shot", "nq"): "nq-zs-4",
        ("knowledge-zero-shot", "wow"): "wow-zs-4",
        ("knowledge-few-shot", "nq"): "nq-fs-5",
        ("knowledge-few-shot", "wow"): "wow-fs-5",
        ("answer-few-shot", "nq"): "nq-ans-1",
        ("answer-few-shot", "wow"): "wow-ans-5",
    }
    allowed = {"topic", "query", "utterance", "knowledge", "answer", "response"}
    for t in prompt_templates():
        fields = [f for _, f, _, _ in string.Formatter().parse(t.template) if f is not None]
        assert set(fields) <= allowed, t.id
        if t.target == "knowledge":
            assert t.template.endswith("{knowledge}") and fields.count("knowledge") == 1
        if t.target == "answer":
            assert t.template.endswith("{answer}" if t.task == "nq" else "{response}")
    assert get_template("nq-zs-4").version == "conner-v1/nq-zs-4"
    with pytest.raises(ConfigError, match="unknown CONNER prompt"):
        get_template("nq-zs-9")


def test_zero_shot_prompt_texts() -> None:
    assert knowledge_prompt(nq(0)) == ZS_NQ
    assert knowledge_prompt(wow(3)) == (
        "Topic: Topic 3\nGenerate a Wikipedia to answer the given question.\n"
        "Question: utterance 3\nWikipedia:"
    )
    assert knowledge_prompt(nq(0), template="nq-zs-2") == (
        "Topic: Topic 0\nGenerate a background document from Wikipedia to answer the given "
        "question.\nquestion 0\n"
    )
    assert knowledge_prompt(wow(1), template="wow-zs-1") == (
        "Topic: Topic 1\nQuery: utterance 1\nRelated Wikipedia knowledge:"
    )
    with pytest.raises(ConfigError, match="takes no demonstrations"):
        knowledge_prompt(nq(0), demonstrations=[nq(1)])
    with pytest.raises(ConfigError, match="for 'wow'"):
        knowledge_prompt(wow(0), template="nq-zs-1")


def test_few_shot_knowledge_prompt_text() -> None:
    text = knowledge_prompt(nq(0), template="nq-fs-5", demonstrations=[nq(2), nq(1)])
    instruction = "Generate a Wikipedia to answer the given question."
    assert text == (
        f"Topic: Topic 2\n{instruction}\nQuestion: question 2\nWikipedia: knowledge 2.\n"
        f"Topic: Topic 1\n{instruction}\nQuestion: question 1\nWikipedia: knowledge 1.\n"
        f"Topic: Topic 0\n{instruction}\nQuestion: question 0\nWikipedia:"
    )
    assert knowledge_prompt(wow(0), template="wow-fs-2", demonstrations=[wow(1)]) == (
        "Topic: Topic 1\nQuery: utterance 1\nKnowledge: knowledge 1.\n"
        "Topic: Topic 0\nQuery: utterance 0\nKnowledge:"
    )


def test_answer_prompt_texts() -> None:
    assert answer_prompt(nq(0), "Paris is big.", demonstrations=[nq(1)]) == (
        "Topic: Topic 1\nPassage: knowledge 1.\nQuery: question 1\nAnswer: answer 1\n"
        "Topic: Topic 0\nPassage: Paris is big.\nQuery: question 0\nAnswer:"
    )
    assert answer_prompt(wow(0), "K.") == (
        "Topic: Topic 0\nUsing the knowledge from the passage, complete the dialogue below: K.\n"
        "Speaker 1: utterance 0\nSpeaker 2:"
    )
    assert answer_prompt(wow(0), "K.", template="wow-ans-ref", demonstrations=[wow(1)]) == (
        "Passage: knowledge 1.\nQuery: utterance 1\nAnswer: response 1\n\n"
        "Passage: K.\nQuery: utterance 0\nAnswer:"
    )
    with pytest.raises(ConfigError, match="answer-few-shot"):
        answer_prompt(nq(0), "K", template="nq-fs-1")


def test_demonstrations_exclude_the_item_its_twins_and_empty_knowledge() -> None:
    target = nq(0, knowledge="shared passage.")
    twin = nq(1, knowledge="shared passage.")  # the same gold passage under another question
    long = nq(2, knowledge="word " * 351)
    others = [nq(i) for i in range(3, 8)]
    no_passage = wow(9, knowledge="no_passages_used")
    pool = [target, twin, long, *others, wow(8), no_passage]
    chosen = select_demonstrations(target, pool, shots=10)
    assert {s.id for s in chosen} == {s.id for s in others}  # all 5 eligible, fewer than 10
    with_long = select_demonstrations(target, pool, shots=10, max_words=None)
    assert {s.id for s in with_long} == {s.id for s in [long, *others]}
    # WoW items without knowledge are never shown
    wow_pool = [wow(i) for i in range(4)] + [no_passage]
    assert no_passage.id not in {s.id for s in select_demonstrations(wow(0), wow_pool, shots=9)}


def test_demonstration_draw_is_seeded_and_order_free() -> None:
    pool = [nq(i) for i in range(30)]
    first = [s.id for s in select_demonstrations(pool[5], pool, shots=4, seed=1)]
    again = [s.id for s in select_demonstrations(pool[5], list(reversed(pool)), shots=4, seed=1)]
    assert first == again
    assert len(first) == 4 and "nq:5" not in first
    draws = {
        tuple(s.id for s in select_demonstrations(pool[5], pool, shots=4, seed=s)) for s in range(5)
    }
    assert len(draws) > 1  # other seeds, other demonstrations
    assert select_demonstrations(pool[5], pool, shots=0) == []
    with pytest.raises(ConfigError, match="shots"):
        select_demonstrations(pool[5], pool, shots=-1)


# ---------------------------------------------------------------- knowledge generation


def test_zero_shot_generation_sends_the_paper_prompt_greedily() -> None:
    model = MockChat(lambda r: f"  Knowledge for: {last_user(r).splitlines()[2]}  ", name="echo")
    samples = [nq(0), nq(1), nq(2)]
    done: list[tuple[int, int]] = []
    results = asyncio.run(
        generate_knowledge_async(
            samples, model, concurrency=2, progress=lambda d, t: done.append((d, t))
        )
    )
    assert [r.id for r in results] == ["nq:0", "nq:1", "nq:2"]
    first = results[0]
    assert first.ok and first.knowledge is not None
    assert first.knowledge == Knowledge(
        id="nq:0",
        text="Knowledge for: Question: question 0",
        source="llm:mock/echo:conner-v1/nq-zs-4",
    )
    assert first.raw_text == "  Knowledge for: Question: question 0  "
    assert first.prompt_version == "conner-v1/nq-zs-4"
    assert first.demonstrations == ()
    assert last_user(model.requests[0]) == ZS_NQ
    config = model.requests[0].config
    assert (config.temperature, config.max_tokens, config.seed) == (0.0, 256, 0)
    assert sorted(done) == [(1, 3), (2, 3), (3, 3)]


def test_few_shot_generation_records_demonstrations_and_is_reproducible() -> None:
    samples = [nq(i) for i in range(12)]

    def run(items: list[ConnerSample], seed: int) -> tuple[list[GeneratedKnowledge], MockChat]:
        model = MockChat("generated.\nTopic: next example\nGenerate ...")
        out = asyncio.run(
            generate_knowledge_async(
                items, model, prompt="few-shot", shots=3, seed=seed, pool=samples
            )
        )
        return out, model

    results, model = run(samples, seed=7)
    for result, request, sample in zip(results, model.requests, samples, strict=True):
        assert result.prompt_version == "conner-v1/nq-fs-5/3shot-seed7"
        assert result.knowledge is not None
        assert result.knowledge.text == "generated."  # the invented next example is cut
        assert result.knowledge.source == "llm:mock/mock:conner-v1/nq-fs-5/3shot-seed7"
        assert len(result.demonstrations) == 3 and sample.id not in result.demonstrations
        text = last_user(request)
        assert sample.gold_knowledge not in text  # never the item's own knowledge
        for demo_id in result.demonstrations:
            assert f"Wikipedia: knowledge {demo_id.split(':')[1]}." in text
        assert text.endswith(f"Question: {sample.query}\nWikipedia:")
    assert model.requests[0].config.seed == 7
    # the same seed gives the same demonstrations, whatever else is generated
    subset, _ = run([samples[4], samples[0]], seed=7)
    assert [r.demonstrations for r in subset] == [
        results[4].demonstrations,
        results[0].demonstrations,
    ]


def test_failures_are_recorded_not_raised() -> None:
    model = MockChat(["first", "second"], fail_times=1)
    results = asyncio.run(generate_knowledge_async([nq(0), nq(1), nq(2)], model, concurrency=1))
    assert results[0].error is not None and results[0].error.startswith("ServerError")
    assert results[0].knowledge is None and not results[0].ok
    assert results[1].knowledge is not None and results[1].knowledge.text == "first"
    assert results[2].knowledge is not None and results[2].knowledge.text == "second"
    out_of_script = asyncio.run(generate_knowledge_async([nq(0)], MockChat([])))
    assert out_of_script[0].error is not None and "ModelError" in out_of_script[0].error
    empty = asyncio.run(generate_knowledge_async([nq(0)], MockChat("   ")))
    assert empty[0].knowledge is not None and empty[0].knowledge.text == ""


def test_bad_generation_options_raise_before_any_call() -> None:
    model = MockChat()
    with pytest.raises(ConfigError, match="mix tasks"):
        asyncio.run(generate_knowledge_async([nq(0), wow(0)], model))
    with pytest.raises(ConfigError, match="not a knowledge-few-shot"):
        asyncio.run(generate_knowledge_async([nq(0)], model, prompt="few-shot", template="nq-zs-1"))
    with pytest.raises(ConfigError, match="prompt must be"):
        asyncio.run(generate_knowledge_async([nq(0)], model, prompt="one-shot"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="concurrency"):
        asyncio.run(generate_knowledge_async([nq(0)], model, concurrency=0))
    assert model.calls == 0
    assert asyncio.run(generate_knowledge_async([], model)) == []


def test_clean_knowledge() -> None:
    assert clean_knowledge("  A.\nB.\n\nTopic: X\nmore") == "A.\nB."
    assert clean_knowledge("Topic: first line stays") == "Topic: first line stays"


# ---------------------------------------------------------------- answers


def test_answers_use_table_13_prompts_and_extract_the_first_line() -> None:
    samples = [nq(0), nq(1)]
    knowledge = [
        Knowledge(id="nq:1", text="K one.", source="gold"),
        Knowledge(id="nq:0", text="K zero.", source="gold"),
    ]
    model = MockChat(["Answer: Billy Hill\nTopic: more", "\n  Paris \n"], name="reader")
    answers = asyncio.run(generate_answers_async(samples, knowledge, model, shots=0, concurrency=1))
    assert [last_user(r) for r in model.requests] == [
        "Topic: Topic 0\nPassage: K zero.\nQuery: question 0\nAnswer:",
        "Topic: Topic 1\nPassage: K one.\nQuery: question 1\nAnswer:",
    ]
    assert answers[0] == DownstreamAnswer(
        id="nq:0",
        answer="Billy Hill",
        raw_text="Answer: Billy Hill\nTopic: more",
        model="mock/reader",
        knowledge_source="gold",
        prompt_version="conner-v1/nq-ans-1/0shot-seed0",
        finish_reason="stop",
    )
    assert answers[1].answer == "Paris"
    assert model.requests[0].config.max_tokens == 64


def test_wow_answers_with_demonstrations_from_other_items() -> None:
    samples = [wow(i) for i in range(6)]
    knowledge = [Knowledge(id=s.id, text=f"generated {s.id}", source="llm:x:v") for s in samples]
    model = MockChat(lambda r: "Speaker 2: sure!")
    answers = asyncio.run(generate_answers_async(samples, knowledge, model, shots=2, seed=3))
    for answer, request, sample in zip(answers, model.requests, samples, strict=True):
        assert answer.answer == "sure!"
        assert len(answer.demonstrations) == 2 and sample.id not in answer.demonstrations
        text = last_user(request)
        assert text.endswith(
            f"complete the dialogue below: generated {sample.id}\n"
            f"Speaker 1: {sample.query}\nSpeaker 2:"
        )
        assert sample.gold_answer not in text
        first_demo = int(answer.demonstrations[0].split(":")[1])
        assert text.startswith(f"Topic: Topic {first_demo}\n")


def test_missing_or_failed_knowledge_is_recorded() -> None:
    failed = GeneratedKnowledge(
        id="nq:0", knowledge=None, error="ServerError: 503", prompt_version="v"
    )
    model = MockChat("x")
    answers = asyncio.run(generate_answers_async([nq(0), nq(1)], [failed], model))
    assert answers[0].answer is None and answers[0].error == "no knowledge: ServerError: 503"
    assert answers[1].error == "no knowledge for this sample"
    assert model.calls == 0
    twice = [Knowledge(id="nq:0", text="a", source="s"), Knowledge(id="nq:0", text="b", source="s")]
    with pytest.raises(ConfigError, match="two knowledge texts"):
        asyncio.run(generate_answers_async([nq(0)], twice, model))


def test_extract_answer() -> None:
    assert extract_answer("\n\nAnswer:  1936 \nQuestion: next") == "1936"
    assert extract_answer("speaker 2: Hi there") == "Hi there"
    assert extract_answer("   \n") == ""
