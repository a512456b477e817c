"""The paper packages' faces: a small documented core, and one naming scheme for their stages.

Each of ``citegraph.kalma``, ``citegraph.caqa`` and ``citegraph.conner`` exports its core only
(about 30-50 names), documented in a table in the package docstring; the table and ``__all__``
name the same names. Every registered task ``<paper>.<stage>`` is a class ``<Paper><Stage>Task``
with a ``<Paper><Stage>Config`` beside it on the paper's face.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType

import pytest

from citegraph.runs import registered_tasks, task_type

PAPERS = ("kalma", "caqa", "conner")


def documented_core(module: ModuleType) -> set[str]:
    """The names in the first column of the docstring's ``name / what it is`` table."""
    doc = module.__doc__ or ""
    rules = [m.start() for m in re.finditer(r"^=+ +=+$", doc, re.M)]
    assert len(rules) == 3, f"{module.__name__}: no name / what it is table in the docstring"
    body = doc[rules[1] : rules[2]].splitlines()[1:]
    width = len(doc[rules[0] :].split("  ", 1)[0])
    names: set[str] = set()
    for line in body:
        names.update(n for n in re.split(r"[\s,/]+", line[:width]) if n)
    return names


@pytest.mark.parametrize("paper", PAPERS)
def test_the_face_is_its_documented_core(paper: str) -> None:
    face = importlib.import_module(f"citegraph.{paper}")
    assert documented_core(face) == set(face.__all__)
    assert len(face.__all__) == len(set(face.__all__))
    assert 30 <= len(face.__all__) <= 50
    for name in face.__all__:
        assert hasattr(face, name), f"citegraph.{paper}.{name}"


def test_the_table_reader_sees_a_missing_name() -> None:
    kalma = importlib.import_module("citegraph.kalma")
    assert "ask_async" in documented_core(kalma)
    assert "find_brackets" not in documented_core(kalma)  # a stage's name, from its own face
    from citegraph.kalma.parse import find_brackets

    assert callable(find_brackets) and not hasattr(kalma, "find_brackets")


def _camel(word: str) -> str:
    return word[:1].upper() + word[1:]


def test_every_task_is_paper_stage_task_with_a_paper_stage_config() -> None:
    names = [n for n in registered_tasks() if n.split(".", 1)[0] in PAPERS]
    assert {"kalma.run", "kalma.score", "kalma.build", "caqa.judge", "conner.select"} <= set(names)
    for name in names:
        paper, stage = name.split(".", 1)
        prefix = _camel(paper) + _camel(stage)
        face = importlib.import_module(f"citegraph.{paper}")
        assert task_type(name).__name__ == f"{prefix}Task", name
        assert getattr(face, f"{prefix}Task") is task_type(name)
        assert f"{prefix}Config" in face.__all__, name


OLD_NAMES = [
    "RunConfig",
    "ScoreConfig",
    "BuildConfig",
    "RunResult",
    "ScoreResult",
    "BuildResult",
    "RunRuntime",
    "GenerateTask",
    "RetrieveTask",
    "ScoreTask",
    "SelectTask",
    "KnowledgeTask",
    "AcquireResult",
    "FinetuneConfig",
    "FinetuneResult",
]


@pytest.mark.parametrize("old", OLD_NAMES)
def test_the_old_names_are_gone(old: str) -> None:
    # renamed, never aliased: no face of a paper package still exports the old name
    for paper in PAPERS:
        face = importlib.import_module(f"citegraph.{paper}")
        assert old not in face.__all__
        for stage in ("build", "run", "score", "acquire", "select", "finetune", "judge"):
            try:
                module = importlib.import_module(f"citegraph.{paper}.{stage}")
            except ModuleNotFoundError:
                continue
            assert old not in module.__all__, f"citegraph.{paper}.{stage}.{old}"
