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
    biokalma_path,
    load_biokalma,
    read_answers,
    read_gold,
)
from citegraph.errors import DataError
from citegraph.kalma._alignment import AnswerAlignment, score_alignment_many
from citegraph.kalma._citation_metrics import AnswerCitationScores, score_citations
from citegraph.kalma._na_metrics import AnswerNAScores, score_na
from citegraph.kalma._parse import parse_answer
from citegraph.kalma._parse_reference import parse_answer_reference
from citegraph.kalma._score_report import build_metrics
from citegraph.kalma._types import ParsedAnswer
from citegraph.kg import Subgraph
from citegraph.models import NLIModel, nli_model
from citegraph.runs import RunDir, sha256_file

Mode = Literal["paper", "reference"]
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each batch."""

NO_ABSENT = "no absent-knowledge set (gold 'absent' field) for this answer"
NO_GOLD_ENTRY = "no entry for this id in the gold file"


class ScoreConfig(BaseModel):
    """How answers are scored. Written verbatim into ``run.json`` and ``metrics.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: Literal["biokalma"] = Field(
        default="biokalma", description="The benchmark the answers were generated for."
    )
    split: Literal["general", "specific"] = Field(
        default="specific", description="BioKaLMA split: 'general' or 'specific' questions."
    )
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
    batch_size: int = Field(default=32, ge=1, description="Answers scored per batch.")
    bootstrap: int = Field(
        default=0, ge=0, description="Bootstrap resamples for confidence intervals (0: none)."
    )
    seed: int = Field(default=0, description="Seed of the bootstrap.")

    @property
    def effective_parser(self) -> Mode:
        """The parser actually used."""
        return self.parser or self.mode


class ScoreResult(BaseModel):
    """What :func:`score_answers` produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path
    metrics: dict[str, Any]
    n_scored_now: int = Field(description="Answers scored in this call (the rest were resumed).")
    n_resumed: int = Field(description="Answers found already scored in the run directory.")


def _parse(answer: str, graphs: Sequence[Subgraph], parser: Mode) -> ParsedAnswer:
    if parser == "reference":
        return parse_answer_reference(answer)
    return parse_answer(answer, graphs)


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
    samples = load_biokalma(config.split, data_dir)
    _check_ids(answers, samples, answers_path, config.split)
    by_id = {s.id: s for s in samples}

    data = {
        "answers": sha256_file(answers_path),
        "dataset": sha256_file(biokalma_path(config.split, data_dir)),
    }
    if gold_path is not None:
        data["gold"] = sha256_file(gold_path)
    model = nli or nli_model(config.nli)
    run_config = config.model_dump(mode="json") | {"nli_name": model.name}
    run = RunDir.open(out, run_config, data=data, command=command, overwrite=overwrite)
    n_resumed = len(run.done)
    todo = [a for a in answers if a.id not in run.done]
    try:
        for start in range(0, len(todo), config.batch_size):
            batch = todo[start : start + config.batch_size]
            for record in await _score_batch(batch, by_id, gold, config, model):
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


async def _score_batch(
    batch: Sequence[AnswerRecord],
    by_id: dict[str, BioKaLMASample],
    gold: dict[str, GoldRecord] | None,
    config: ScoreConfig,
    model: NLIModel,
) -> list[dict[str, Any]]:
    parsed: list[ParsedAnswer] = []
    for record in batch:
        sample = by_id[record.id]
        parsed.append(_parse(record.answer or "", sample.graphs, config.effective_parser))
    skip_alignment = [
        config.mode == "reference"
        and (not (record.answer or "").strip() or not by_id[record.id].has_graph)
        for record in batch
    ]
    alignments = await score_alignment_many(
        [None if skip else p for p, skip in zip(parsed, skip_alignment, strict=True)],
        model,
        mode=config.mode,
        hypothesis=config.hypothesis,
    )
    out = []
    for record, answer, alignment in zip(batch, parsed, alignments, strict=True):
        sample = by_id[record.id]
        entry = gold.get(record.id) if gold is not None else None
        citations = score_citations(
            answer,
            sample.graphs,
            entry.knowledge if entry is not None else None,
            mode=config.mode,
            normalize=config.normalize,
        )
        na = await _score_na(answer, entry, config, model)
        out.append(_record(record, sample, answer, citations, alignment, na, gold, entry))
    return out


async def _score_na(
    answer: ParsedAnswer, entry: GoldRecord | None, config: ScoreConfig, model: NLIModel
) -> AnswerNAScores | None:
    if entry is None:
        return None
    if config.mode == "reference":
        # The authors' eval_NA.py: absent = gold (no_round1) facts the answer does not cite.
        absent = entry.knowledge
    elif entry.absent is None:
        return None
    else:
        absent = entry.absent
    return await score_na(answer, absent, model, mode=config.mode, hypothesis=config.hypothesis)


def _record(
    record: AnswerRecord,
    sample: BioKaLMASample,
    answer: ParsedAnswer,
    citations: AnswerCitationScores,
    alignment: AnswerAlignment | None,
    na: AnswerNAScores | None,
    gold: dict[str, GoldRecord] | None,
    entry: GoldRecord | None,
) -> dict[str, Any]:
    unmeasured: dict[str, str] = dict(citations.unmeasured)
    if gold is not None and entry is None:
        unmeasured |= {"precision": NO_GOLD_ENTRY, "recall": NO_GOLD_ENTRY}
    if alignment is None:
        unmeasured["alignment"] = "answer skipped (reference mode: empty answer or no KG graph)"
    elif alignment.unmeasured_reason:
        unmeasured["alignment"] = alignment.unmeasured_reason
    if na is None:
        reason = NO_GOLD_ENTRY if gold is not None and entry is None else NO_ABSENT
        unmeasured |= {"na_precision": reason, "na_recall": reason}
    else:
        unmeasured |= {f"na_{k}": v for k, v in na.unmeasured.items()}
    return {
        "id": record.id,
        "question": record.question or sample.question,
        "answer": record.answer,
        "empty_answer": not (record.answer or "").strip(),
        "has_graph": sample.has_graph,
        "parsed": answer.model_dump(mode="json"),
        "citations": citations.model_dump(mode="json"),
        "alignment": alignment.model_dump(mode="json") if alignment is not None else None,
        "na": na.model_dump(mode="json") if na is not None else None,
        "scores": {
            "correctness": citations.correctness,
            "precision": citations.precision,
            "recall": citations.recall,
            "alignment": alignment.score if alignment is not None else None,
            "na_precision": na.precision if na is not None else None,
            "na_recall": na.recall if na is not None else None,
        },
        "unmeasured": unmeasured,
        "parse_issues": len(answer.issues),
    }
