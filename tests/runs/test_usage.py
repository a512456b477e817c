"""Token totals per model role in metrics.json (cached replies apart), and the dry run: on a
small task whose chat calls are counted by hand (the mock's usage is whitespace words)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from citegraph.io import SQLiteCache
from citegraph.models import ChatModel, ChatRequest, MockChat, chat_model
from citegraph.models.chat import CachedChatModel
from citegraph.runs import (
    USAGE_FILE,
    DryRunFinished,
    Record,
    Runtime,
    Task,
    finalize,
    merge_runs,
    register_task,
    run_task,
    task_type,
    token_table,
    tokens_line,
)

#: The items' prompts: 3 and 2 whitespace words (the mock counts words), 8 and 4 characters.
PROMPTS = {"q-0": "aa bb cc", "q-1": "dd e"}


class AskConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "mock"
    judged: bool = True


@dataclass
class AskModels:
    answerer: ChatModel
    judge: ChatModel | None


@register_task
class AskTask(Task[str, AskModels]):
    """Asks each prompt; the judge (when there is one) is asked ``judge <answer>``."""

    name: ClassVar[str] = "testing.usage_ask"

    def __init__(self, config: AskConfig, cache: SQLiteCache | None = None) -> None:
        self.config = config
        self.cache = cache

    def items(self) -> Sequence[tuple[str, str]]:
        return list(PROMPTS.items())

    @asynccontextmanager
    async def open(self, runtime: Runtime) -> AsyncIterator[AskModels]:
        if self.config.model == "mock":  # answers 'x y' (2 words), the judge 'ok' (1 word)
            answerer: ChatModel = MockChat("x y")
            judge: ChatModel = MockChat("ok", name="mock/judge")
        else:  # a real provider (the dry run replaces it)
            answerer = chat_model(self.config.model)
            judge = chat_model(self.config.model)
        if self.cache is not None:
            answerer = CachedChatModel(answerer, self.cache)
        yield AskModels(answerer, judge if self.config.judged else None)

    async def work(self, batch: Sequence[str], models: AskModels) -> list[Record]:
        out = []
        for prompt in batch:
            reply = await models.answerer.generate(
                ChatRequest.of([{"role": "user", "content": prompt}])
            )
            if models.judge is not None:
                await models.judge.generate(
                    ChatRequest.of([{"role": "user", "content": f"judge {reply.text}"}])
                )
            key = next(k for k, v in PROMPTS.items() if v == prompt)
            out.append({"id": key, "answer": reply.text})
        return out

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(records)}


def _tokens(out: Path) -> dict[str, Any]:
    return json.loads((out / "metrics.json").read_text())["tokens"]


def _row(calls: int, prompt: int, completion: int, cached: tuple[int, int, int] = (0, 0, 0)):
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cached_calls": cached[0],
        "cached_prompt_tokens": cached[1],
        "cached_completion_tokens": cached[2],
        "calls_without_usage": 0,
    }


def test_tokens_per_role_in_metrics_and_cached_replies_apart(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "cache.sqlite", namespace="chat")
    run_task(AskTask(AskConfig(), cache), tmp_path / "a")
    tokens = _tokens(tmp_path / "a")
    # answerer: prompts of 3 + 2 words, replies 'x y' (2 words) twice
    assert tokens["answerer"] == _row(2, 5, 4)
    # judge: 'judge x y' (3 words) twice, replies 'ok' (1 word) twice
    assert tokens["judge"] == _row(2, 6, 2)
    assert "cached_" in tokens["counted"]
    # the same requests again: the answerer's replies come from the cache, counted apart
    run_task(AskTask(AskConfig(), cache), tmp_path / "b")
    tokens = _tokens(tmp_path / "b")
    assert tokens["answerer"] == _row(0, 0, 0, cached=(2, 5, 4))
    assert tokens["judge"] == _row(2, 6, 2)
    cache.close()


def test_a_resumed_run_adds_to_its_totals_and_runs_report_keeps_them(tmp_path: Path) -> None:
    config = AskConfig(judged=False)
    run_task(AskTask(config), tmp_path / "r", Runtime(limit=1))
    assert _tokens(tmp_path / "r")["answerer"] == _row(1, 3, 2)  # 'aa bb cc' -> 'x y'
    run_task(AskTask(config), tmp_path / "r")  # resumes: only q-1 ('dd e') is asked
    assert _tokens(tmp_path / "r")["answerer"] == _row(2, 5, 4)
    assert json.loads((tmp_path / "r" / USAGE_FILE).read_text())["answerer"]["calls"] == 2
    from citegraph.runs import RunDir

    metrics = finalize(task_type("testing.usage_ask"), RunDir.read(tmp_path / "r"))
    assert metrics["tokens"]["answerer"]["prompt_tokens"] == 5
    # started afresh (--overwrite of another config): the totals start again at zero
    run_task(AskTask(AskConfig()), tmp_path / "r", Runtime(overwrite=True, limit=1))
    assert _tokens(tmp_path / "r")["answerer"] == _row(1, 3, 2)


def test_merged_shards_sum_their_tokens(tmp_path: Path) -> None:
    for i in range(2):
        run_task(AskTask(AskConfig()), tmp_path / f"s{i}", Runtime(shard=f"{i}/2"))
    assert _tokens(tmp_path / "s1")["answerer"] == _row(1, 2, 2)  # 'dd e' only
    merged = merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "m")
    metrics = finalize(task_type("testing.usage_ask"), merged)
    assert metrics["tokens"]["answerer"] == _row(2, 5, 4)
    assert metrics["tokens"]["judge"] == _row(2, 6, 2)


def test_dry_run_counts_calls_and_estimated_tokens_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # building the real model would fail
    task = AskTask(AskConfig(model="openai/gpt-4o-mini"))
    runtime = Runtime(dry_run=True, price_in=1.5, price_out=2.0)
    with pytest.raises(DryRunFinished) as caught:
        run_task(task, tmp_path / "out", runtime)
    assert not (tmp_path / "out").exists()
    report = caught.value.report
    # characters / 4, rounded up: 'aa bb cc' 8 -> 2, 'dd e' 4 -> 1; judge 'judge ' 6 -> 2 each
    assert report.tokens["answerer"]["calls"] == 2
    assert report.tokens["answerer"]["prompt_tokens"] == 3
    assert report.tokens["judge"]["prompt_tokens"] == 4
    assert report.tokens["answerer"]["max_completion_tokens"] == 2 * 512  # GenerateConfig's
    prompt_cost, most_cost = report.cost()
    assert prompt_cost == pytest.approx(7 * 1.5 / 1e6)
    assert most_cost == pytest.approx(4 * 512 * 2.0 / 1e6)
    text = "\n".join(report.lines())
    assert "answerer: 2 calls, 3 prompt tokens" in text
    assert "characters / 4" in text
    assert "at most $0.0041" in text  # 7 * 1.5e-6 + 2048 * 2e-6 = 0.0041065


def test_tokens_line_and_table_show_the_totals() -> None:
    metrics = {
        "tokens": {
            "answerer": _row(2, 5, 4, cached=(1, 3, 2)),
            "counted": "how",
        }
    }
    assert tokens_line(metrics) == (
        "tokens: answerer: 2 calls, 5 prompt + 4 completion tokens (1 cached: 3 + 2)"
    )
    table = token_table(metrics)
    assert table is not None and table.note == "how"
    assert [cell.text for cell in table.rows[0]] == ["answerer", "2", "5", "4", "1", "3", "2"]
    assert token_table({"n": 1}) is None and tokens_line({"n": 1}) is None
