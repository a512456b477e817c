"""What ``kalma run`` reads before answering: the split (or your own questions file), its gold,
the KG context per question, and the questions the text-quality judge sees. All of it is chosen
over the whole split (never over one shard's share), so that shards of one run answer exactly
what the whole run would.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import (
    BioKaLMASample,
    GoldRecord,
    KalmaSplit,
    QuestionRecord,
    QuestionsFile,
    index_gold,
    read_gold,
)
from citegraph.errors import ConfigError, DataError
from citegraph.kalma.run._ablations import corrupt_retrieval
from citegraph.kalma.run._approx_gold import APPROX_GOLD, question_match_gold
from citegraph.kalma.run._config import KalmaRunConfig, gold_source
from citegraph.kalma.score import Reference, judged_ids, resolve_in_kg_async, with_subjects
from citegraph.kg import KnowledgeGraph, Subgraph
from citegraph.runs import sha256_file


class RunInputs(BaseModel):
    """The inputs of one ``kalma run``, read once: the split checked (its questions are read
    when they are answered), and all that is chosen over the whole split."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    split: KalmaSplit | QuestionsFile = Field(
        description="The split or your own questions, checked; read again when answered."
    )
    gold: dict[str, GoldRecord] | None = Field(description="Gold knowledge by id (None: none).")
    data: dict[str, str] = Field(description="Input files and their SHA-256 (run identity).")
    graphs: dict[str, tuple[Subgraph, ...]] | None = Field(
        description="The KG context per question when the retrieval ablation changed it (None: "
        "each question's own graphs)."
    )
    judged: set[str] | None = Field(description="Questions the judge sees (None: all).")
    gold_origin: dict[str, tuple[Path, int, bool]] = Field(
        default_factory=dict,
        description="Your own questions: where each gold record was read (file, line, whether "
        "it is the questions file's own 'gold'), for the errors of resolving its subjects.",
    )

    def context(self, sample: BioKaLMASample | QuestionRecord) -> tuple[Subgraph, ...]:
        """The KG context the model is given for ``sample``."""
        return tuple(sample.graphs) if self.graphs is None else self.graphs[sample.id]


def read_inputs(config: KalmaRunConfig, data_dir: str | Path | None) -> RunInputs:
    """Check the split and decide everything that is chosen over the whole split. Every graph
    is built here only when that choice needs them all (approximate gold, the retrieval
    ablation); otherwise a question's graphs are built when it is answered.

    Raises:
        ConfigError: ``--remove-knowledge`` without gold.
        DataError: the split or the gold file is malformed, or the gold names ids the split
            does not have.
    """
    if config.questions is not None:
        return _own_questions(config)
    split = KalmaSplit(config.dataset, config.split, data_dir)
    whole: list[BioKaLMASample] | None = None
    if gold_source(config) == APPROX_GOLD or config.retrieval_accuracy < 100:
        whole = split.samples(split.ids)
    gold, data = _gold(config, split, whole)
    return RunInputs(
        split=split,
        gold=gold,
        data=data,
        graphs=None if whole is None else _context_graphs(config, whole),
        judged=_judged_ids(config, split),
    )


def _gold(
    config: KalmaRunConfig, split: KalmaSplit, whole: Sequence[BioKaLMASample] | None
) -> tuple[dict[str, GoldRecord] | None, dict[str, str]]:
    data = {"dataset": sha256_file(split.path)}
    source = gold_source(config)
    if source is None:
        if config.remove_knowledge:
            raise ConfigError(
                f"--remove-knowledge needs gold: {config.dataset} has no gold.jsonl; give --gold"
            )
        return None, data
    if source == APPROX_GOLD:
        gold = {
            s.id: GoldRecord(id=s.id, knowledge=tuple(question_match_gold(s.question, s.graphs)))
            for s in whole or ()
        }
        return gold, data
    path = Path(source)
    # A gold file may cover both splits (kalma build writes one): keep this split's ids.
    other = "general-" if config.split == "specific" else "specific-"
    gold = {k: v for k, v in read_gold(path).items() if not k.startswith(other)}
    for gid in gold:
        if split.index_of(gid) is None:
            raise DataError(
                f"id {gid!r} is not in the {config.split} split of {config.dataset}",
                path=path,
                field="id",
            )
    data["gold"] = sha256_file(path)
    return gold, data


def _own_questions(config: KalmaRunConfig) -> RunInputs:
    """Your own questions (``--questions``) with their gold: each line's ``gold`` / ``absent``
    and ``--gold FILE`` together (its subjects are resolved in the KG when the run opens).

    Raises:
        ConfigError: ``--remove-knowledge`` without any gold.
        DataError: the questions or gold file is malformed, the gold file names an id the
            questions file does not have, or gives gold for a question that has its own.
    """
    assert config.questions is not None
    questions = QuestionsFile(config.questions)
    data = {"questions": sha256_file(questions.path)}
    gold: dict[str, GoldRecord] = {}
    origin: dict[str, tuple[Path, int, bool]] = {}
    for record in questions.samples(questions.ids):
        if record.gold is not None:
            gold[record.id] = record.gold
            origin[record.id] = (questions.path, record.line, True)
    inline = set(gold)
    if config.gold is not None:
        path = Path(config.gold)
        index = index_gold(path)
        for position, entry in enumerate(index.read(range(len(index)))):
            gid = entry.id
            if questions.index_of(gid) is None:
                raise DataError(
                    f"id {gid!r} is not a question of {questions.path}", path=path, field="id"
                )
            if gid in inline:
                raise DataError(
                    f"id {gid!r} has gold in the questions file already (its 'gold' field); "
                    "give each question's gold in one place",
                    path=path,
                    field="id",
                )
            gold[gid] = entry
            origin[gid] = (path, index.line(position), False)
        data["gold"] = sha256_file(path)
    if config.remove_knowledge and not gold:
        raise ConfigError(
            "--remove-knowledge needs gold minimum knowledge sets to remove facts from: give "
            "each question a 'gold' list in the questions file, or --gold FILE"
        )
    return RunInputs(
        split=questions,
        gold=gold if (gold or config.gold is not None) else None,
        data=data,
        graphs=None,
        judged=_judged_ids(config, questions),
        gold_origin=origin,
    )


async def resolve_questions(
    kg: KnowledgeGraph, inputs: RunInputs
) -> tuple[dict[str, str], dict[str, GoldRecord] | None]:
    """Your own questions' ``entities`` and gold subjects resolved in ``kg`` (ids, IRIs, short
    ids or labels -> entity ids), before any question is answered: the entity ids by reference,
    and the gold with its subjects replaced by ids.

    Raises:
        DataError: a reference names no entity of the KG, or several (names file, line, field).
    """
    questions = inputs.split
    assert isinstance(questions, QuestionsFile)
    records = questions.samples(questions.ids)
    entity_ids = await resolve_in_kg_async(
        kg,
        (
            Reference(
                text=text,
                path=questions.path,
                line=record.line,
                field="entities",
                what="entity",
            )
            for record in records
            for text in record.entities or ()
        ),
    )
    if inputs.gold is None:
        return entity_ids, None
    refs = [
        (gid, Reference(text=triple.subject, path=path, line=line, field=name, what=what))
        for gid, entry in inputs.gold.items()
        for path, line, inline in [inputs.gold_origin[gid]]
        for field, name in (("knowledge", "gold" if inline else "knowledge"), ("absent", "absent"))
        for k, triple in enumerate(getattr(entry, field) or ())
        for what in [f"gold item {k} subject"]
    ]
    subjects = await resolve_in_kg_async(kg, (ref for _, ref in refs))
    named: dict[str, dict[str, str]] = {}
    for gid, ref in refs:
        if subjects[ref.text] != ref.text:
            named.setdefault(gid, {})[ref.text] = subjects[ref.text]
    gold = {gid: with_subjects(entry, named.get(gid)) for gid, entry in inputs.gold.items()}
    return entity_ids, gold


def _judged_ids(config: KalmaRunConfig, split: KalmaSplit | QuestionsFile) -> set[str] | None:
    """The questions the text-quality judge sees (None: all), chosen over the whole split."""
    return judged_ids(config, split.ids, split.has_graph)


def _context_graphs(
    config: KalmaRunConfig, samples: Sequence[BioKaLMASample]
) -> dict[str, tuple[Subgraph, ...]]:
    """The dataset graphs, with the retrieval ablation applied over the whole split."""
    graphs = {s.id: tuple(s.graphs) for s in samples}
    if config.retrieval_accuracy >= 100:
        return graphs
    corruption = corrupt_retrieval(graphs, config.retrieval_accuracy, seed=config.seed)
    return {k: tuple(v) for k, v in corruption.graphs_by_id.items()}
