"""The G-Eval text-quality judge with constrained replies (issue 38, item 1): a digit 1-5 by
grammar, so a reply the free parser cannot read becomes a score; free keeps today's records and
run ids; a model that cannot constrain is refused before its first call."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import ConfigError
from citegraph.kalma import KalmaRunConfig, KalmaScoreConfig
from citegraph.kalma.score._text_quality import (
    NO_SCORE,
    NON_INTEGER,
    CriterionScore,
    TextQuality,
    aggregate_text_quality,
    judge_text_quality_async,
    score_grammar,
)
from citegraph.models import ChatRequest, Generation, MockChat
from citegraph.runs import Runtime

pytest.importorskip("llguidance")

#: Per criterion: free, the first and last are unmeasured; under the grammar "1" | ... | "5"
#: the mock keeps each allowed byte and writes the lowest allowed one where its script is
#: refused: "Great..." -> "1", "4 out of 5" -> "4", "3.5" -> "3" (the reply ends at the ".").
SCRIPT = {
    "coherence": "Great answer, I'd say four.",
    "consistency": "4 out of 5",
    "fluency": "3.5",
    "relevance": "5",
}


def _scripted(request: ChatRequest) -> str:
    system = request.messages[0].content.lower()
    return next(SCRIPT[c] for c in SCRIPT if f"{c} (1-5)" in system)


def _judge(model: object, replies: str = "free") -> TextQuality:
    return asyncio.run(
        judge_text_quality_async("Who?", "{kg}", "Text.", model, replies=replies)  # type: ignore[arg-type]
    )


def test_score_grammar_forms() -> None:
    grammar = score_grammar()
    assert grammar.name == "kalma-geval-score-v1"
    assert grammar.lark == 'start: "1" | "2" | "3" | "4" | "5"'
    assert grammar.json_schema == {
        "type": "object",
        "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
        "required": ["score"],
        "additionalProperties": False,
    }


def test_mock_judge_free_unmeasured_constrained_always_scored() -> None:
    free = _judge(MockChat(_scripted))
    assert [s.score for s in free.scores.values()] == [None, 4, None, 5]
    assert [free.scores[c].reason for c in ("coherence", "fluency")] == [NO_SCORE, NON_INTEGER]
    assert "judge_replies" not in free.model_dump()
    constrained = _judge(MockChat(_scripted), "constrained")
    assert [s.score for s in constrained.scores.values()] == [1, 4, 3, 5]
    assert [s.reply for s in constrained.scores.values()] == ["1", "4", "3", "5"]
    assert constrained.model_dump()["judge_replies"] == "constrained"


class _JsonSchemaJudge:
    """A server that constrains only JSON."""

    name = "server/judge"
    grammar_mode = "json-schema"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> Generation:
        self.requests.append(request)
        return Generation(text='{"score": 2}', model=self.name)

    async def aclose(self) -> None:
        return None


def test_a_json_schema_reply_is_read_as_its_score() -> None:
    judge = _JsonSchemaJudge()
    result = _judge(judge, "constrained")
    assert [s.score for s in result.scores.values()] == [2, 2, 2, 2]
    assert all(r.grammar == score_grammar() for r in judge.requests)


class _NoGrammarJudge(_JsonSchemaJudge):
    grammar_mode = None  # type: ignore[assignment]


def test_a_judge_that_cannot_constrain_is_refused_before_any_call() -> None:
    judge = _NoGrammarJudge()
    with pytest.raises(ConfigError, match="cannot constrain"):
        _judge(judge, "constrained")
    assert judge.requests == []


def _verdicts(replies: str) -> TextQuality:
    return TextQuality(
        mode="paper",
        prompt_version="kalma-geval-v1",
        judge="mock/judge",
        scores={"fluency": CriterionScore(criterion="fluency", score=3, reply="3")},
        judge_replies=replies,  # type: ignore[arg-type]
    )


def test_aggregate_records_constrained_and_refuses_a_mix() -> None:
    summary = aggregate_text_quality([_verdicts("constrained")] * 2)["fluency"]
    assert summary.judge_replies == "constrained" and summary.mean == 3.0
    assert summary.model_dump()["judge_replies"] == "constrained"
    assert (
        "judge_replies" not in aggregate_text_quality([_verdicts("free")])["fluency"].model_dump()
    )
    with pytest.raises(ConfigError, match="judge replies"):
        aggregate_text_quality([_verdicts("free"), _verdicts("constrained")])


def test_identity_has_judge_replies_only_when_constrained() -> None:
    assert "judge_replies" not in KalmaRunConfig(model="mock").identity()
    assert (
        "judge_replies" not in KalmaRunConfig(model="mock", text_quality="openai/gpt-4o").identity()
    )
    free = KalmaRunConfig(model="mock", text_quality="mock", judge_replies="free")
    assert "judge_replies" not in free.identity()
    assert (
        KalmaRunConfig(model="mock", text_quality="local").identity()["judge_replies"]
        == "constrained"
    )
    explicit = KalmaRunConfig(model="mock", text_quality="mock", judge_replies="constrained")
    assert explicit.identity()["judge_replies"] == "constrained"
    assert "judge_replies" not in KalmaScoreConfig().model_dump()
    assert "judge_replies" not in KalmaScoreConfig(judge_replies="free").model_dump()


def test_kalma_run_with_a_constrained_mock_judge(data_dir: Path, tmp_path: Path) -> None:
    from citegraph.kalma import run_kalma

    judge = MockChat("Great answer.", name="mock/judge")
    config = KalmaRunConfig(model="mock", text_quality="mock/judge", judge_replies="constrained")
    result = run_kalma(
        tmp_path / "tq",
        config,
        runtime=Runtime(limit=2, cache=False),
        data_dir=data_dir,
        model=MockChat("An answer [NA]."),
        judge=judge,
    )
    quality = result.metrics["text_quality"]
    for criterion in ("coherence", "consistency", "fluency", "relevance"):
        assert quality[criterion]["mean"] == 1.0 and quality[criterion]["n_unmeasured"] == 0
        assert quality[criterion]["judge_replies"] == "constrained"
    with pytest.raises(ConfigError, match="cannot constrain"):
        run_kalma(
            tmp_path / "refused",
            config,
            runtime=Runtime(limit=2, cache=False),
            data_dir=data_dir,
            model=MockChat("An answer [NA]."),
            judge=_NoGrammarJudge(),  # type: ignore[arg-type]
        )
    assert not (tmp_path / "refused" / "samples.jsonl").exists()


@pytest.mark.parametrize("command", [["kalma", "run"], ["kalma", "score"]])
def test_cli_takes_judge_replies(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0 and "--judge-replies" in result.output


def test_kalma_score_refuses_a_judge_that_cannot_constrain_before_any_answer(
    tmp_path: Path, data_dir: Path
) -> None:
    from citegraph.kalma import KalmaScoreConfig, score_answers

    demo = Path(__file__).resolve().parents[3] / "src" / "citegraph" / "kalma" / "demo"
    judge = _NoGrammarJudge()
    config = KalmaScoreConfig(text_quality="mock/judge", judge_replies="constrained")
    with pytest.raises(ConfigError, match="cannot constrain"):
        score_answers(
            demo / "answers.jsonl", tmp_path / "run", config, data_dir=data_dir, judge=judge
        )
    assert judge.requests == []
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_the_viewer_rows_say_how_the_judge_replied() -> None:
    from citegraph.kalma.view._presenter import _text_quality_rows

    summary = {"mean": 3.0, "n_measured": 2, "mode": "paper", "prompt_version": "kalma-geval-v1"}
    metrics = {
        "text_quality": {
            "fluency": summary | {"judge_replies": "constrained"},
            "coherence": summary,
        }
    }
    rows = {row.name: row.how for row in _text_quality_rows(metrics, {})}
    assert rows["text quality: fluency"].endswith("· constrained judge replies")
    assert rows["text quality: coherence"].endswith("· free judge replies")
