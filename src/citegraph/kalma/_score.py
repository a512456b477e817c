"""``kalma score``: score a file of attributed answers the way the KaLMA paper does (§4).

One answer flows through parse -> citation scores (correctness, precision, recall) -> alignment
(NLI on every sentence-citation pair) -> [NA] precision / recall (when an absent-knowledge set is
given). Each answer becomes one line of ``samples.jsonl`` as soon as it is scored, so a killed run
resumes where it stopped; ``metrics.json`` is aggregated from every line of ``samples.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import (
    AnswerRecord,
    BioKaLMASample,
    GoldRecord,
    kalma_dataset_path,
    load_kalma_dataset,
    read_answers,
    read_gold,
)
from citegraph.errors import DataError
from citegraph.kalma._score_item import ScoreItem, score_items
from citegraph.kalma._score_report import build_metrics
from citegraph.models import NLIModel, nli_model
from citegraph.runs import RunDir, sha256_file

Mode = Literal["paper", "reference"]
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each batch."""


class ScoringOptions(BaseModel):
    """How attributed answers are scored; shared by ``kalma score`` and ``kalma run``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = Field(
        default="paper",
        description="'paper': the paper's definitions. 'reference': what the authors' scripts "
        "compute (see REFERENCE_NOTES.md).",
    )
    parser: Mode | None = Field(
        default=None,
        description="Citation parser: 'paper' (robust) or 'reference' (the authors' regex). "
        "Default: the same as mode.",
    )
    nli: str = Field(
        default="lexical",
        description="Entailment model for alignment and [NA]: 'lexical', 'hf:<model>', "
        "'t5:<model>' or 'lexical+hf:<model>'.",
    )
    hypothesis: Literal["relation_value", "natural"] = Field(
        default="relation_value",
        description="How a cited fact becomes the NLI hypothesis: 'place of birth: Newark' "
        "(the authors' code) or 'Stephen Crane place of birth Newark'.",
    )
    normalize: bool = Field(
        default=False,
        description="Compare citations after case, accent and whitespace folding (the paper "
        "compares exactly).",
    )
    bootstrap: int = Field(
        default=0, ge=0, description="Bootstrap resamples for confidence intervals (0: none)."
    )

    @property
    def effective_parser(self) -> Mode:
        """The parser actually used."""
        return self.parser or self.mode


class ScoreConfig(ScoringOptions):
    """How a file of answers is scored. Written verbatim into ``run.json`` and ``metrics.json``."""

    dataset: str = Field(
        default="biokalma",
        description="The benchmark the answers were generated for: 'biokalma', or a dataset "
        "directory written by kalma build.",
    )
    split: Literal["general", "specific"] = Field(
        default="specific", description="BioKaLMA split: 'general' or 'specific' questions."
    )
    batch_size: int = Field(default=32, ge=1, description="Answers scored per batch.")
    seed: int = Field(default=0, description="Seed of the bootstrap.")


class ScoreResult(BaseModel):
    """What :func:`score_answers` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_scored_now: int = Field(description="Answers scored in this call (the rest were resumed).")
    n_resumed: int = Field(description="Answers found already scored in the run directory.")


def _check_ids(
    answers: Sequence[AnswerRecord], samples: Sequence[BioKaLMASample], path: Path, split: str
) -> None:
    known = {s.id for s in samples}
    for record in answers:
        if record.id not in known:
            hint = f"ids of this split run from {split}-0 to {split}-{len(samples) - 1}"
            raise DataError(
                f"id {record.id!r} is not in BioKaLMA's {split} split ({hint})",
                path=path,
                line=record.line,
                field="id",
            )


def score_answers(
    answers_path: str | Path, out: str | Path, config: ScoreConfig | None = None, **options: Any
) -> ScoreResult:
    """Score a file of attributed answers and write a run directory (blocking form).

    Takes the same arguments as :func:`score_answers_async` and runs it to completion.
    """
    import asyncio

    return asyncio.run(score_answers_async(answers_path, out, config, **options))


async def score_answers_async(
    answers_path: str | Path,
    out: str | Path,
    config: ScoreConfig | None = None,
    *,
    gold_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    nli: NLIModel | None = None,
    overwrite: bool = False,
    command: str | None = None,
    progress: Progress | None = None,
) -> ScoreResult:
    """Score a file of attributed answers and write a run directory.

    Args:
        answers_path: ``answers.jsonl`` (``{"id", "answer"}`` per line).
        out: The run directory (created; resumed if it holds the same run).
        config: Scoring options; defaults to the paper's definitions with the lexical matcher.
        gold_path: ``gold.jsonl`` with minimum knowledge sets (and optional absent sets).
        data_dir: Where the datasets are (see :func:`citegraph.datasets.resolve_data_dir`).
        nli: An entailment model to use instead of building ``config.nli`` (tests, reuse).
        overwrite: Replace a run with a different configuration in ``out``.
        command: The command line, recorded in ``run.json``.
        progress: Optional callback ``(done, total)``.

    Returns:
        The metrics and counts.

    Raises:
        DataError: an input file is malformed or names an id the split does not have.
        ConfigError: ``out`` holds a run with another configuration (and not ``overwrite``).
    """
    config = config or ScoreConfig()
    answers_path = Path(answers_path)
    answers = read_answers(answers_path)
    gold = read_gold(gold_path) if gold_path is not None else None
    samples = load_kalma_dataset(config.dataset, config.split, data_dir)
    _check_ids(answers, samples, answers_path, config.split)
    by_id = {s.id: s for s in samples}

    data = {
        "answers": sha256_file(answers_path),
        "dataset": sha256_file(kalma_dataset_path(config.dataset, config.split, data_dir)),
    }
    if gold_path is not None:
        data["gold"] = sha256_file(gold_path)
    model = nli or nli_model(config.nli)
    run_config = config.model_dump(mode="json") | {"nli_name": model.name}
    run = RunDir.open(out, run_config, data=data, command=command, overwrite=overwrite)
    done = run.done
    n_resumed = len(done)
    todo = [a for a in answers if a.id not in done]
    try:
        for start in range(0, len(todo), config.batch_size):
            batch = todo[start : start + config.batch_size]
            for record in await score_items(_items(batch, by_id, gold), config, model):
                run.append(record)
            if progress is not None:
                progress(n_resumed + start + len(batch), len(answers))
    finally:
        run.close()
    order = {a.id: i for i, a in enumerate(answers)}
    records = sorted(run.records, key=lambda r: order.get(str(r["id"]), len(order)))
    metrics = build_metrics(records, config, model.name, gold_given=gold is not None)
    run.write_metrics(metrics)
    return ScoreResult(out=Path(out), metrics=metrics, n_scored_now=len(todo), n_resumed=n_resumed)


def _items(
    batch: Sequence[AnswerRecord],
    by_id: dict[str, BioKaLMASample],
    gold: dict[str, GoldRecord] | None,
) -> list[ScoreItem]:
    out = []
    for record in batch:
        sample = by_id[record.id]
        out.append(
            ScoreItem(
                id=record.id,
                question=record.question or sample.question,
                answer=record.answer,
                graphs=tuple(sample.graphs),
                gold=gold.get(record.id) if gold is not None else None,
                gold_given=gold is not None,
            )
        )
    return out
