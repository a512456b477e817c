"""``caqa judge``: hand-computed F1 tables with the mock provider, resume, human-labelled data,
the local SmolLM2 end to end, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.caqa import (
    CaqaJudgeConfig,
    CaqaSample,
    LLMJudge,
    judge_caqa,
    write_samples,
)
from citegraph.cli import main
from citegraph.errors import ServerError
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import Runtime

NO_CACHE = Runtime(cache=False)
#: One batch at a time, so that a scripted model's replies come in sample order.
ONE = Runtime(concurrency=1)

GOLD = [
    "supportive",
    "supportive",
    "insufficient",
    "insufficient",
    "contradictory",
    "contradictory",
    "irrelevant",
    "irrelevant",
]
COMPLEXITY = ["single", "union", "concatenation", "intersection"] * 2
# what the judge answers for each sample (citation "cite-<i>")
REPLIES = [
    "Supportive",
    "Relationship Category: Supportive\nThe citation confirms it.",
    "Irrelevant",  # insufficient judged irrelevant
    "The citation is not supportive; it is irrelevant.",  # negation, then irrelevant
    "Contradictory",
    "I cannot tell.",  # unparseable
    "Irrelevant",
    "Irrelevant",
]


def _samples() -> list[CaqaSample]:
    return [
        CaqaSample(
            id=f"s{i}",
            question=f"Question {i}?",
            answer=f"Answer {i}.",
            citation=f"cite-{i}",
            label=gold,  # type: ignore[arg-type]
            complexity=COMPLEXITY[i],  # type: ignore[arg-type]
            source="hand",
            group=f"g{i}",
        )
        for i, gold in enumerate(GOLD)
    ]


def _reply(request: ChatRequest) -> str:
    text = request.messages[-1].content
    index = int(text.split("cite-")[1].split()[0].rstrip("."))
    return REPLIES[index]


@pytest.fixture()
def split(tmp_path: Path) -> Path:
    path = tmp_path / "test.jsonl"
    write_samples(path, _samples())
    return path


def test_mock_judge_reproduces_a_hand_computed_table(tmp_path: Path, split: Path) -> None:
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0)
    judge = LLMJudge(MockChat(_reply))
    result = judge_caqa(tmp_path / "paper", config, evaluator=judge, runtime=NO_CACHE)
    report = result.report
    # predictions: sup sup | irr irr | con None | irr irr -> 5 of 8 right (None counts wrong)
    assert report.micro_f1 == pytest.approx(5 / 8)
    per = {row.label: row for row in report.per_label}
    # supportive: P 2/2, R 2/2 -> F1 1
    assert per["supportive"].f1 == pytest.approx(1.0)
    # insufficient: never predicted -> P undefined, R 0/2 -> F1 undefined
    assert per["insufficient"].precision is None and per["insufficient"].recall == 0.0
    # contradictory: P 1/1, R 1/2 -> F1 2/3
    assert per["contradictory"].f1 == pytest.approx(2 / 3)
    # irrelevant: P 2/4, R 2/2 -> F1 2/3
    assert per["irrelevant"].precision == pytest.approx(0.5)
    assert per["irrelevant"].f1 == pytest.approx(2 / 3)
    assert report.n_unparseable == 1
    # per complexity: single s0 s4 right; union s1 right, s5 None; concatenation s2 wrong,
    # s6 right; intersection s3 wrong, s7 right
    by_level = {c.complexity: c for c in report.per_complexity}
    assert by_level["single"].micro_f1 == pytest.approx(1.0)
    assert by_level["union"].micro_f1 == pytest.approx(0.5)
    assert by_level["concatenation"].micro_f1 == pytest.approx(0.5)
    assert by_level["intersection"].micro_f1 == pytest.approx(0.5)
    metrics = json.loads((tmp_path / "paper" / "metrics.json").read_text())
    assert metrics["setup"]["prompt"] == "zero-shot" and metrics["n_failed"] == 0
    assert (tmp_path / "paper" / "report.md").read_text().startswith("### CAQA evaluator report")

    ref = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0, extraction="reference")
    judge = LLMJudge(MockChat(_reply), extraction="reference")
    report = judge_caqa(tmp_path / "ref", ref, evaluator=judge, runtime=NO_CACHE).report
    # the authors' first-match regex reads s3 ("not supportive ... irrelevant") as Support and
    # drops s5: 7 scored, right: s0 s1 s4 s6 s7 -> 5 / 7
    assert report.micro_f1 == pytest.approx(5 / 7)


def test_failed_calls_are_retried_on_resume(tmp_path: Path, split: Path) -> None:
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0)
    flaky = MockChat(_reply, fail_times=1, error=ServerError("down", status=503))
    first = judge_caqa(tmp_path / "r", config, evaluator=LLMJudge(flaky), runtime=ONE)
    assert first.n_failed == 1 and first.report.n == 7
    again = MockChat(_reply)
    second = judge_caqa(tmp_path / "r", config, evaluator=LLMJudge(again), runtime=ONE)
    assert second.n_failed == 0 and second.n_resumed == 7 and again.calls == 1
    assert second.report.micro_f1 == pytest.approx(5 / 8)


def test_attributionbench_with_an_nli_evaluator(tmp_path: Path, data_dir: Path) -> None:
    config = CaqaJudgeConfig(data="attributionbench", evaluator="nli/lexical", bootstrap=50)
    result = judge_caqa(
        tmp_path / "ab", config, data_dir=data_dir, runtime=Runtime(limit=40, batch_size=16)
    )
    report = result.report
    assert result.n_samples == 40 and report.n == 40
    assert [row.label for row in report.per_label] == ["supportive", "unsupported"]
    assert sum(row.support for row in report.per_label) == 40


def test_local_smollm2_judges_end_to_end(tmp_path: Path, split: Path, smollm2_cache: Path) -> None:
    from citegraph.models.chat import local_chat

    config = CaqaJudgeConfig(data=str(split), evaluator="local", prompt="alpaca", max_tokens=8)
    judge = LLMJudge(local_chat(smollm2_cache), prompt="alpaca", max_tokens=8)
    result = judge_caqa(
        tmp_path / "local", config, evaluator=judge, runtime=Runtime(limit=3, cache=False)
    )
    assert result.n_samples == 3 and result.n_failed == 0 and result.report.n == 3
    records = [
        json.loads(x) for x in (tmp_path / "local" / "samples.jsonl").read_text().split("\n") if x
    ]
    assert all(r["raw"] for r in records)


def test_cli_build_then_judge(tmp_path: Path, data_dir: Path) -> None:
    runner = CliRunner()
    build = runner.invoke(
        main,
        ["caqa", "build", "--questions", "wikiwebquestions", "--data-dir", str(data_dir),
         "--out", str(tmp_path / "b")],
    )  # fmt: skip
    assert build.exit_code == 0, build.output
    assert "| supportive |" in build.output
    judge = runner.invoke(
        main,
        ["caqa", "judge", str(tmp_path / "b" / "test.jsonl"), "--evaluator", "nli/lexical",
         "--bootstrap", "0", "--out", str(tmp_path / "j")],
    )  # fmt: skip
    assert judge.exit_code == 0, judge.output
    assert "micro-F1" in judge.output
    bad = runner.invoke(
        main, ["caqa", "judge", str(tmp_path / "b" / "test.jsonl"), "--evaluator", "nope/x",
               "--out", str(tmp_path / "k")],
    )  # fmt: skip
    assert bad.exit_code == 2 and "error" in bad.output


def test_judge_over_http_respects_concurrency(tmp_path: Path, split: Path) -> None:
    from citegraph.testing import FakeOpenAIServer

    with FakeOpenAIServer(reply=lambda body: "Supportive", delay=0.05) as server:
        config = CaqaJudgeConfig(
            data=str(split), evaluator="vllm/judge", base_url=server.base_url, bootstrap=0
        )
        result = judge_caqa(
            tmp_path / "h", config, runtime=Runtime(batch_size=1, concurrency=3, cache=False)
        )
        bodies = server.requests
    assert result.n_failed == 0 and len(bodies) == 8
    assert 1 < server.max_in_flight <= 3
    assert {b["temperature"] for b in bodies} == {0.0} and bodies[0]["model"] == "judge"
    # supportive predicted for all: 2 right of 8
    assert result.report.micro_f1 == pytest.approx(2 / 8)


HUMAN = "id,label\ns0,supportive\ns1,supportive\ns2,irrelevant\ns3,insufficient\n" \
    "s4,contradictory\ns5,irrelevant\ns6,irrelevant\ns7,irrelevant\n"  # fmt: skip


def test_human_labels_kappa_and_pearson_across_evaluators(tmp_path: Path, split: Path) -> None:
    human = tmp_path / "human.csv"
    human.write_text(HUMAN)
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0, human=str(human))
    evaluators = {
        "e1": _reply,  # predictions sup sup irr irr con None irr irr
        "e2": lambda request: "Supportive",
        "e3": lambda request: GOLD[int(request.messages[-1].content.split("cite-")[1][0])],
    }
    for name, script in evaluators.items():
        judge = LLMJudge(MockChat(script, name=name))
        report = judge_caqa(tmp_path / name, config, evaluator=judge, runtime=NO_CACHE).report
        assert report.human is not None and report.human.n == 8
        # gold vs human agree on 6 of 8; marginals gold 2/2/2/2, human 2/1/1/4:
        # p_e = (4 + 2 + 2 + 8) / 64 = 1/4, kappa = (3/4 - 1/4) / (3/4) = 2/3
        assert report.human.kappa.value == pytest.approx(2 / 3)
    runner = CliRunner()
    out = runner.invoke(main, ["caqa", "compare", *(str(tmp_path / n) for n in evaluators)])
    assert out.exit_code == 0, out.output
    # micro-F1 auto [5/8, 2/8, 8/8], human [6/8, 2/8, 6/8]: r = sqrt(3)/2 = 0.866; n = 3, df 1,
    # t = r / sqrt(1 - r^2) = sqrt(3), p = 1 - (2 / pi) atan(sqrt(3)) = 1/3
    assert (
        "Pearson r, micro-F1 on automatic vs human labels: 0.866 (p = 0.333), n = 3" in out.output
    )
    as_json = json.loads(
        runner.invoke(main, ["caqa", "compare", "--json", str(tmp_path / "e1")]).output
    )
    assert as_json["reports"][0]["micro_f1"] == pytest.approx(5 / 8)
    bad = tmp_path / "bad.csv"
    bad.write_text("id,label\ns0,supportive\nzz,supportive\n")
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", human=str(bad))
    with pytest.raises(Exception, match="not among the samples"):
        judge_caqa(tmp_path / "bad", config, evaluator=LLMJudge(MockChat(_reply)))


def test_binary_scoring_of_a_four_way_evaluator(tmp_path: Path, split: Path) -> None:
    config = CaqaJudgeConfig(data=str(split), evaluator="mock", bootstrap=0, labels="binary")
    report = judge_caqa(tmp_path / "b", config, evaluator=LLMJudge(MockChat(_reply))).report
    # predictions S S U U U None U U against gold S S U U U U U U: 7 of 8 (None is wrong)
    assert report.labels == ("supportive", "unsupported")
    assert report.micro_f1 == pytest.approx(7 / 8)
    assert report.label("unsupported").recall == pytest.approx(5 / 6)


def test_a_judge_record_can_be_read_alone(tmp_path: Path) -> None:
    """Each record holds what was judged: question, answer statement, citation, and the
    citation subgraph with its labels (issue 17, item 11); a sample without a structured
    attribution (a human-labelled set) has no ``subgraph``."""
    from citegraph.caqa import Fact, StructuredAttribution

    attribution = StructuredAttribution(
        category="supportive",
        facts=(Fact.of("Q41309", "P136", "Q9730"), Fact.of("Q41309", "P136", "Q9734")),
        labels={"Q41309": "Franz Liszt", "P136": "genre", "Q9730": "classical music"},
    )
    built = CaqaSample(
        id="b",
        question="Which genre is franz liszt associated with?",
        answer="The answer is classical music and symphony.",
        citation="The genre of Franz Liszt is classical music and symphony.",
        label="supportive",
        complexity="single",
        source="hand",
        attribution=attribution,
    )
    plain = _samples()[0]
    path = tmp_path / "two.jsonl"
    write_samples(path, [built, plain])
    config = CaqaJudgeConfig(data=str(path), evaluator="mock", bootstrap=0)
    judge = LLMJudge(MockChat(lambda request: "Supportive"))
    judge_caqa(tmp_path / "r", config, evaluator=judge, runtime=NO_CACHE)
    lines = (tmp_path / "r" / "samples.jsonl").read_text().splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    one = records["b"]
    assert one["question"] == built.question and one["answer"] == built.answer
    assert one["citation"] == built.citation and one["gold"] == "supportive"
    assert one["subgraph"] == [
        {"subject": "Q41309", "relation": "P136", "object": "Q9730",
         "subject_label": "Franz Liszt", "relation_label": "genre",
         "object_label": "classical music"},
        {"subject": "Q41309", "relation": "P136", "object": "Q9734",
         "subject_label": "Franz Liszt", "relation_label": "genre",
         "object_label": "Q9734"},
    ]  # fmt: skip
    assert records["s0"]["question"] == "Question 0?" and "subgraph" not in records["s0"]
