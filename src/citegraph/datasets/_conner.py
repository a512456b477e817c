"""CONNER's test sets: 500 Natural Questions items and 500 + 500 Wizard of Wikipedia items.

The files come from the CONNER authors' repository (``emnlp_data/``) and live in the data
directory under ``conner/``. Every row is four tab-separated fields:

- NQ (``nq/random_testset/nq_test_random_testset.txt``): ``topic``, ``question``, ``gold
  passage``, ``short answer``.
- WoW (``wow/random_testset/{seen,unseen}_random_testset.txt``): ``topic``, the dialogue history
  with ``" [SEP] "`` between turns, the gold knowledge sentence, the gold response.

Sample ids are ``nq:<i>``, ``wow-seen:<i>`` and ``wow-unseen:<i>`` (zero-based row). Fields and
dialogue turns are stripped of surrounding whitespace (the WoW files have responses and turns with
a leading space); inner text is kept as is. For WoW the query is the last turn and the history
all turns (the query included). Quirks of the real files, kept as they are:

- No NQ question ends with ``?`` (CONNER's ``info.py`` appends one; the prompts here do not).
- NQ gold passages are sometimes whole tables (up to ~26,000 words) and 5 passages appear twice.
- 30 WoW-seen and 34 WoW-unseen items have the gold knowledge :data:`NO_PASSAGE`
  (``"no_passages_used"``): the wizard used no knowledge for that turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, DataError
from citegraph.io import dataset_file, resolve_data_dir

__all__ = [
    "CONNER_FILES",
    "CONNER_TASKS",
    "NO_PASSAGE",
    "ConnerSample",
    "ConnerTask",
    "WowSplit",
    "conner_path",
    "load_conner",
    "read_conner",
]

#: CONNER's two knowledge-intensive tasks: Natural Questions and Wizard of Wikipedia.
ConnerTask = Literal["nq", "wow"]
CONNER_TASKS: tuple[ConnerTask, ...] = get_args(ConnerTask)
WowSplit = Literal["seen", "unseen"]


class ConnerSample(BaseModel):
    """One test item of a knowledge-intensive task (NQ: a question with a gold passage and a
    short answer; WoW: a dialogue history with gold knowledge and a response)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable id, e.g. 'nq:17' or 'wow-seen:3'.")
    task: ConnerTask
    topic: str = Field(description="The Wikipedia topic of the item.")
    query: str = Field(
        description="NQ: the question. WoW: the last utterance of the dialogue partner."
    )
    history: tuple[str, ...] = Field(
        default=(), description="WoW: the dialogue turns before the response (query is last)."
    )
    gold_knowledge: str = Field(description="The gold passage (NQ) or knowledge sentence (WoW).")
    gold_answer: str = Field(description="The short answer (NQ) or the gold response (WoW).")


#: The test file of each task / split, relative to the data directory.
CONNER_FILES: dict[str, tuple[str, ...]] = {
    "nq": ("conner", "nq", "random_testset", "nq_test_random_testset.txt"),
    "wow-seen": ("conner", "wow", "random_testset", "seen_random_testset.txt"),
    "wow-unseen": ("conner", "wow", "random_testset", "unseen_random_testset.txt"),
}
#: The WoW gold knowledge of turns where the wizard used no passage.
NO_PASSAGE = "no_passages_used"
#: The separator of dialogue turns in the WoW history field.
TURN_SEP = "[SEP]"
_FIELDS = ("topic", "query", "gold_knowledge", "gold_answer")


def _dataset_name(task: str, split: str | None) -> str:
    if task == "nq":
        if split is not None:
            raise ConfigError(f"NQ has no split (got split={split!r}); splits are for 'wow'")
        return "nq"
    if task == "wow":
        split = split or "seen"
        if split not in ("seen", "unseen"):
            raise ConfigError(f"unknown WoW split {split!r}; choose 'seen' or 'unseen'")
        return f"wow-{split}"
    raise ConfigError(f"unknown CONNER task {task!r}; choose 'nq' or 'wow'")


def conner_path(
    task: ConnerTask, data_dir: str | Path | None = None, *, split: WowSplit | None = None
) -> Path:
    """The test file of a CONNER task (and WoW split).

    Args:
        task: ``"nq"`` or ``"wow"``.
        data_dir: The data directory (see :func:`~citegraph.datasets.resolve_data_dir`).
        split: WoW only: ``"seen"`` (default) or ``"unseen"``.

    Raises:
        ConfigError: Unknown task or split, or a split given for NQ.
        DataNotFoundError: The data directory or the file does not exist.
    """
    name = _dataset_name(task, split)
    return dataset_file(resolve_data_dir(data_dir), *CONNER_FILES[name])


def load_conner(
    task: ConnerTask,
    data_dir: str | Path | None = None,
    *,
    split: WowSplit | None = None,
    limit: int | None = None,
) -> list[ConnerSample]:
    """Load CONNER's NQ or WoW test set.

    Args:
        task: ``"nq"`` or ``"wow"``.
        data_dir: The data directory (see :func:`~citegraph.datasets.resolve_data_dir`).
        split: WoW only: ``"seen"`` (default) or ``"unseen"``.
        limit: Load only the first ``limit`` items.

    Returns:
        The samples in file order, ids ``nq:<i>`` / ``wow-seen:<i>`` / ``wow-unseen:<i>``.

    Raises:
        ConfigError: Unknown task or split, a split given for NQ, or a negative limit.
        DataNotFoundError: The data directory or the file does not exist.
        DataError: A row is malformed (names the file and line).
    """
    name = _dataset_name(task, split)
    path = dataset_file(resolve_data_dir(data_dir), *CONNER_FILES[name])
    return read_conner(path, task, id_prefix=name, limit=limit)


def read_conner(
    path: str | Path, task: ConnerTask, *, id_prefix: str | None = None, limit: int | None = None
) -> list[ConnerSample]:
    """Read any file in CONNER's four-column format (e.g. your own test items).

    Args:
        path: The tab-separated file.
        task: ``"nq"`` (the second field is a question) or ``"wow"`` (a ``[SEP]`` history).
        id_prefix: Ids are ``<id_prefix>:<row>``; default the task name.
        limit: Read only the first ``limit`` rows.

    Raises:
        ConfigError: Unknown task or a negative limit.
        DataError: The file is not UTF-8, or a row does not have four non-empty fields, or a
            dialogue turn is empty (names the file and line). Blank lines at the end are ignored.
    """
    if task not in ("nq", "wow"):
        raise ConfigError(f"unknown CONNER task {task!r}; choose 'nq' or 'wow'")
    if limit is not None and limit < 0:
        raise ConfigError(f"limit must be >= 0, got {limit}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=path) from exc
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if limit is not None:
        lines = lines[:limit]
    prefix = id_prefix or task
    return [_row(task, f"{prefix}:{i}", line, path, i + 1) for i, line in enumerate(lines)]


def _row(task: ConnerTask, sample_id: str, line: str, path: Path, lineno: int) -> ConnerSample:
    parts = line.rstrip("\r").split("\t")
    if len(parts) != len(_FIELDS):
        raise DataError(
            f"expected 4 tab-separated fields (topic, query, knowledge, answer), found "
            f"{len(parts)}",
            path=path,
            line=lineno,
        )
    values = [p.strip() for p in parts]
    for field, value in zip(_FIELDS, values, strict=True):
        if not value:
            raise DataError("empty field", path=path, line=lineno, field=field)
    topic, query, knowledge, answer = values
    history: tuple[str, ...] = ()
    if task == "wow":
        history = tuple(turn.strip() for turn in query.split(TURN_SEP))
        if not all(history):
            raise DataError("empty dialogue turn", path=path, line=lineno, field="history")
        query = history[-1]
    return ConnerSample(
        id=sample_id,
        task=task,
        topic=topic,
        query=query,
        history=history,
        gold_knowledge=knowledge,
        gold_answer=answer,
    )
