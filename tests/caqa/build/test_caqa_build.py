"""``caqa build`` end to end: real KGQA sets and CoDEx-S, splits, statistics, resume, LLM text."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from citegraph.caqa import (
    CATEGORIES,
    COMPLEXITIES,
    CaqaBuildConfig,
    LogicalQuery,
    build_caqa,
    load_caqa_split,
)
from citegraph.caqa.queries import answers_over, supports
from citegraph.errors import ServerError
from citegraph.models import MockChat
from citegraph.runs import Runtime

#: One question at a time, so that a scripted model's replies come in question order.
ONE = Runtime(concurrency=1)


def _all_samples(out: Path) -> list:
    return [
        s for split in ("train", "dev", "test") for s in load_caqa_split(out / f"{split}.jsonl")
    ]


@pytest.fixture(scope="module")
def codex_build(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("caqa") / "codex"
    config = CaqaBuildConfig(
        questions="sample", kg="codex-s", sample=120, union_partners="same-type"
    )
    build_caqa(out, config, data_dir=data_dir)
    return out


def test_codex_build_has_every_category_and_complexity(codex_build: Path) -> None:
    samples = _all_samples(codex_build)
    assert set(Counter(s.label for s in samples)) == set(CATEGORIES)
    assert set(Counter(s.complexity for s in samples)) == set(COMPLEXITIES)
    stats = json.loads((codex_build / "stats.json").read_text())
    assert stats["total"]["samples"] == len(samples)
    for category in CATEGORIES:
        assert stats["total"]["categories"][category] == sum(s.label == category for s in samples)


def test_every_sample_keeps_its_construction_rule(codex_build: Path) -> None:
    """Re-check the categories from the stored subgraphs, independently of the builder."""
    by_group: dict[str, dict[str, object]] = {}
    for s in _all_samples(codex_build):
        by_group.setdefault(s.id.rsplit(":", 1)[0], {})[s.label] = s
    for group in by_group.values():
        support = group["supportive"]
        query = LogicalQuery.model_validate(support.query)  # type: ignore[attr-defined]
        answers = support.answer_entities  # type: ignore[attr-defined]
        facts = support.attribution.facts  # type: ignore[attr-defined]
        assert supports(query, facts, answers)
        if (ins := group.get("insufficient")) is not None:
            kept = ins.attribution.facts  # type: ignore[attr-defined]
            assert set(kept) < set(facts) and not supports(query, kept, answers)
        if (con := group.get("contradictory")) is not None:
            replaced = con.attribution.replaced  # type: ignore[attr-defined]
            derived = answers_over(query, con.attribution.facts)  # type: ignore[attr-defined]
            # every answer replaced, by distinct non-answers the evidence derives instead
            assert set(replaced) == set(answers) and not set(replaced.values()) & set(answers)
            assert len(set(replaced.values())) == len(replaced)
            assert set(replaced.values()) <= derived and not derived & set(answers)
        if (irr := group.get("irrelevant")) is not None:
            old_entities = {e for f in facts for e in (f.subject, f.object)}
            new_facts = irr.attribution.facts  # type: ignore[attr-defined]
            new_entities = {e for f in new_facts for e in (f.subject, f.object)}
            assert old_entities & new_entities <= set(query.entities)
            assert not {f.relation for f in new_facts} & {f.relation for f in facts}


def test_no_question_is_shared_across_splits(codex_build: Path) -> None:
    groups = {
        split: {s.group for s in load_caqa_split(codex_build / f"{split}.jsonl")}
        for split in ("train", "dev", "test")
    }
    assert not groups["train"] & groups["test"]
    assert not groups["train"] & groups["dev"] and not groups["dev"] & groups["test"]


def test_kgqa_sets_build_and_resume(tmp_path: Path, data_dir: Path) -> None:
    config = CaqaBuildConfig(questions="simplequestions-wd")
    first = build_caqa(tmp_path / "sq", config, data_dir=data_dir)
    # 96 questions: 43 have more than 5 answers in CoDEx-S (inverse relations such as
    # "who plays the guitar"), the other 53 each give a supportive sample
    assert first.metrics["records"] == {"ok": 53, "skipped": 43, "failed": 0}
    assert first.metrics["skipped"] == {"more than 5 answers": 43}
    samples = _all_samples(tmp_path / "sq")
    assert sum(s.label == "supportive" for s in samples) == 53
    again = build_caqa(tmp_path / "sq", config, data_dir=data_dir)
    assert again.n_resumed == 96 and again.n_samples == first.n_samples
    pq = build_caqa(
        tmp_path / "pq",
        CaqaBuildConfig(questions="pathquestion-2h"),
        data_dir=data_dir,
        runtime=Runtime(limit=40),
    )
    kinds = Counter(s.complexity for s in _all_samples(tmp_path / "pq"))
    assert set(kinds) <= {"concatenation", "intersection"} and kinds["concatenation"] > 0
    assert pq.metrics["records"]["ok"] == 40


def test_llm_text_uses_the_paper_prompts_and_failures_are_retried(
    tmp_path: Path, data_dir: Path
) -> None:
    replies = {
        "convert a specific subgraph": "Sentences: A citation sentence.",
        "generate an extended question": "Extended question: An extended question?",
        "comprehensive answer statement": "Answer statement: A statement.",
    }

    def reply(request) -> str:  # type: ignore[no-untyped-def]
        system = request.messages[0].content
        return next(v for k, v in replies.items() if k in system)

    config = CaqaBuildConfig(questions="wikiwebquestions", text="mock")
    flaky = MockChat(reply, fail_times=1, error=ServerError("down", status=503))
    first = build_caqa(tmp_path / "w", config, data_dir=data_dir, model=flaky, runtime=ONE)
    assert first.n_failed == 1
    lines = (tmp_path / "w" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    (failed,) = [r for r in map(json.loads, lines) if r["status"] == "failed"]
    assert failed["error_type"] == "citegraph.errors.ServerError"  # the exit status's type
    model = MockChat(reply)
    second = build_caqa(tmp_path / "w", config, data_dir=data_dir, model=model, runtime=ONE)
    assert second.n_failed == 0 and second.n_resumed == 21
    samples = _all_samples(tmp_path / "w")
    assert {s.citation for s in samples} == {"A citation sentence."}
    assert all(s.answer == "A statement." for s in samples)
    assert all(s.text_source == "llm:mock/mock:caqa-build-v1" for s in samples)
    # the retried question made one answer call, one citation call per category built and,
    # when its query was extended, one question call (original questions exist: no new_question)
    lines = [json.loads(x) for x in (tmp_path / "w" / "samples.jsonl").read_text().splitlines()]
    retried = lines[-1]
    assert retried["status"] == "ok"
    expected = 1 + len(retried["samples"]) + (retried["extension"] != "none")
    assert model.calls == expected
