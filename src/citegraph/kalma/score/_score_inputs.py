"""What ``kalma score`` reads before scoring: the answers, the split or your own KG's
questions, the gold, the human text-quality scores, each checked once, with the files' hashes
and the warnings the checks gave; and a batch's gold read again when it is scored."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import AnswerRecord, GoldRecord, KalmaSplit, index_answers, index_gold
from citegraph.io import JsonlIndex
from citegraph.kalma.score._config import KalmaScoreConfig
from citegraph.kalma.score._inputs import (
    InputWarnings,
    SubjectMap,
    check_dataset_answers,
    check_gold_ids,
    resolve_dataset_gold,
    with_subjects,
)
from citegraph.kalma.score._judge_answers import judged_ids
from citegraph.kalma.score._own_kg import OwnKG, check_questions
from citegraph.kalma.score._text_quality_agreement import (
    HumanScores,
    check_human_ids,
    read_human_scores,
)
from citegraph.runs import sha256_file


class ScoreInputs(BaseModel):
    """Where the answers, their questions and their gold are in their files (checked once; a
    batch's are read again when it is scored), the files' hashes, the warnings the checks gave,
    and (dataset mode) the gold subjects given as names with the ids they stand for."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    answers: JsonlIndex[AnswerRecord]
    split: KalmaSplit | None = Field(description="The dataset split; None over your own KG.")
    gold: JsonlIndex[GoldRecord] | None
    data: dict[str, str]
    warnings: InputWarnings
    gold_subjects: SubjectMap
    judged: set[str] | None = Field(default=None, description="Answers judged (None: all).")
    human: HumanScores = Field(default={}, description="Human text-quality scores by id.")


def read_score_inputs(
    config: KalmaScoreConfig,
    answers_path: Path,
    gold_path: str | Path | None,
    data_dir: str | Path | None,
    max_answer_chars: int,
) -> ScoreInputs:
    """The answers, the split and the gold, checked, and their hashes.

    Raises:
        DataError: an input file is malformed or names an id the split does not have (see
            :mod:`._inputs` for what is checked).
    """
    warnings = InputWarnings()
    answers = index_answers(answers_path, max_answer_chars=max_answer_chars)
    gold = index_gold(gold_path) if gold_path is not None else None
    data = {"answers": sha256_file(answers_path)}
    split, subjects = None, {}
    if config.kg is None:
        split = KalmaSplit(config.dataset, config.split, data_dir)
        check_dataset_answers(answers, split, warnings)
        data["dataset"] = sha256_file(split.path)
    else:
        check_questions(answers)
    if gold is not None:
        check_gold_ids(gold, answers, warnings)
        if split is not None:
            subjects = resolve_dataset_gold(gold, split, warnings)
        data["gold"] = sha256_file(gold.path)
    human: HumanScores = {}
    if config.text_quality_human is not None:
        human = read_human_scores(config.text_quality_human)
        check_human_ids(human, answers.ids, config.text_quality_human)
        data["text_quality_human"] = sha256_file(config.text_quality_human)
    has_graph = split.has_graph if split is not None else None
    return ScoreInputs(
        answers=answers,
        split=split,
        gold=gold,
        data=data,
        warnings=warnings,
        gold_subjects=subjects,
        judged=judged_ids(config, answers.ids, has_graph),
        human=human,
    )


def gold_of(inputs: ScoreInputs, own: OwnKG | None, ids: Sequence[str]) -> dict[str, GoldRecord]:
    """The gold records of ``ids`` that the gold file has (none without a gold file), their
    subjects given as names or short ids replaced by entity ids."""
    if inputs.gold is None:
        return {}
    subjects = own.gold_subjects if own is not None else inputs.gold_subjects
    positions = [p for p in map(inputs.gold.position, ids) if p is not None]
    return {
        record.id: with_subjects(record, subjects.get(record.id))
        for record in inputs.gold.read(positions)
    }
