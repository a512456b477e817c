"""Named KGQA sets (:data:`KGQA_SETS`): which reader reads which files of the data directory
for which KG; :func:`load_kgqa` reads one and :func:`ground_set` keeps its samples that have
answers in a local KG."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from citegraph.caqa.queries._graph import CaqaKG
from citegraph.caqa.queries._kgqa import (
    PQ_FILES,
    KGQASample,
    KGQASet,
    read_grailqa,
    read_pathquestion,
    read_simplequestions_wd,
)
from citegraph.caqa.queries._kgqa_sparql import read_wikiwebquestions
from citegraph.errors import ConfigError, DataNotFoundError, KGQueryError
from citegraph.io import resolve_data_dir

NOT_GROUNDED = "not grounded in the local KG"
ANSWERS_NOT_GROUNDED = "listed answers not among the local answers"

# ---------------------------------------------------------------------------- named sets
#: name -> (reader, files under the data directory, KG spec).
KGQA_SETS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "grailqa": ("grailqa", ("kgqa_tog/grailqa.json",), "grailqa-mini"),
    "simplequestions-wd": (
        "simplequestions-wd",
        ("derived/simplequestions_wd_grounded_in_codex_s.tsv",),
        "codex-s",
    ),
    "wikiwebquestions": (
        "wikiwebquestions",
        ("derived/wikiwebquestions_dev_grounded_in_codex_s.json",),
        "codex-s",
    ),
    "wikiwebquestions-raw": (
        "wikiwebquestions",
        ("wikiwebquestions/dev.json", "wikiwebquestions/train.json"),
        "wikidata",
    ),
    **{
        f"pathquestion-{tag}": (
            "pathquestion",
            (f"pathquestion/{stem}.txt",),
            f"pathquestion-{tag}",
        )
        for stem, tag in PQ_FILES.items()
    },
}


_READERS: dict[str, Callable[..., KGQASet]] = {
    "grailqa": read_grailqa,
    "simplequestions-wd": read_simplequestions_wd,
    "wikiwebquestions": read_wikiwebquestions,
    "pathquestion": read_pathquestion,
}


def load_kgqa(
    name: str, data_dir: str | Path | None = None, *, limit: int | None = None
) -> KGQASet:
    """Read a named KGQA set (see :data:`KGQA_SETS`) from the data directory.

    Args:
        name: ``grailqa``, ``simplequestions-wd``, ``wikiwebquestions`` (the dev questions
            grounded in CoDEx-S), ``wikiwebquestions-raw`` (dev + train, Wikidata),
            ``pathquestion-2h``, ``-3h``, ``-pql2``, ``-pql3``.
        data_dir: The data directory (default: ``citegraph.io.resolve_data_dir``).
        limit: Keep the first ``limit`` samples (skip counts still cover the whole files).

    Raises:
        ConfigError: an unknown name.
        DataNotFoundError: a file is missing.
    """
    if name not in KGQA_SETS:
        raise ConfigError(f"unknown KGQA set {name!r}; expected one of {sorted(KGQA_SETS)}")
    kind, files, kg = KGQA_SETS[name]
    reader = _READERS[kind]
    root = resolve_data_dir(data_dir)
    samples: list[KGQASample] = []
    skipped: Counter[str] = Counter()
    for file in files:
        path = root / file
        if not path.is_file():
            raise DataNotFoundError("KGQA file not found (is the data directory right?)", path=path)
        part = reader(path, kg=kg)
        samples.extend(part.samples)
        skipped.update(part.skipped)
    if limit is not None:
        samples = samples[: max(limit, 0)]
    return KGQASet(name=name, kg=kg, samples=samples, skipped=dict(skipped))


def ground_set(kgqa_set: KGQASet, kg: CaqaKG) -> tuple[list[KGQASample], dict[str, int]]:
    """Keep the samples whose query has answers in ``kg``.

    A sample that lists answers keeps those among the local answers (dropped under
    ``"listed answers not among the local answers"`` when none is); a sample without answers
    takes the local answers. Queries without a local answer, or that the store rejects, are
    dropped under ``"not grounded in the local KG"``.

    Returns:
        The kept samples (answers replaced as above) and ``reason -> count`` of dropped ones.
    """
    kept: list[KGQASample] = []
    dropped: Counter[str] = Counter()
    for sample in kgqa_set.samples:
        try:
            local = kg.ground(sample.query).answers
        except KGQueryError:
            local = ()
        if not local:
            dropped[NOT_GROUNDED] += 1
            continue
        answers = tuple(a for a in sample.answers if a in set(local)) if sample.answers else local
        if not answers:
            dropped[ANSWERS_NOT_GROUNDED] += 1
            continue
        kept.append(
            sample if answers == sample.answers else sample.model_copy(update={"answers": answers})
        )
    return kept, dict(dropped)
