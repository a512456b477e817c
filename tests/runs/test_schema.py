"""Issue 39 item 7: ``run.json`` records ``schema_version``; a reader migrates each older layout
to the current one step by step (the run id unchanged), and refuses a layout written by a newer
citegraph, naming the file and the versions. Runs on disk without ``schema_version`` keep
working: resume, report, compare, view."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from citegraph.cli import main
from citegraph.errors import DataError
from citegraph.runs import (
    SCHEMA_VERSION,
    Completion,
    Record,
    RunDir,
    Runtime,
    Task,
    check_run_identity,
    merge_runs,
    migrate_run_info,
    opened,
    read_run_info,
    register_task,
    run_task,
    sha256_json,
    task_of_run,
)
from citegraph.runs._schema import MIGRATIONS, UNVERSIONED
from citegraph.viewer._site import Site, run_info


class _Options(BaseModel):
    n: int = 4
    offset: int = 0


@register_task
class CountingTask(Task[int, None]):
    """Items 0..n-1; each record holds its value plus the offset."""

    name: ClassVar[str] = "testing.schema"

    def __init__(self, config: _Options) -> None:
        self.config = config

    def items(self) -> Sequence[tuple[str, int]]:
        return [(f"i-{i}", i) for i in range(self.config.n)]

    def open(self, runtime: Runtime) -> Any:
        return opened(None)

    async def work(self, batch: Sequence[int], models: None) -> list[Record]:
        return [{"id": f"i-{i}", "value": i + self.config.offset} for i in batch]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {"total": sum(r["value"] for r in records), "n": len(records)}


CONFIG = {"n": 4, "offset": 0, "task": "testing.schema"}
DATA: dict[str, str] = {}
RUN_ID = sha256_json({"config": CONFIG, "data": DATA})

#: run.json as each version wrote it (the volatile fields fixed).
V1 = {
    "run_id": RUN_ID,
    "created": "2026-01-01T00:00:00+0000",
    "command": "citegraph testing schema",
    "config": CONFIG,
    "data": DATA,
    "versions": {"python": "3.11"},
}
V2 = V1 | {"runtime": {"limit": None, "shard": None, "concurrency": 8, "n_items": 4}}
V3 = {"run_id": RUN_ID, "task": "testing.schema"} | {k: v for k, v in V2.items() if k != "run_id"}
V4 = V3 | {"runtime": V3["runtime"] | {"n_total": 4}}
CURRENT = {"schema_version": SCHEMA_VERSION} | V4
LIMITED = {"limit": 2, "n_items": 2}


def _write(out: Path, info: dict[str, Any], *, records: int = 2) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(json.dumps(info, indent=2))
    lines = [json.dumps({"id": f"i-{i}", "value": i}) + "\n" for i in range(records)]
    (out / "samples.jsonl").write_text("".join(lines))


def test_the_current_layout_is_version_4_with_a_step_from_each_older_one() -> None:
    assert SCHEMA_VERSION == 4 and UNVERSIONED == 1
    assert sorted(MIGRATIONS) == list(range(UNVERSIONED, SCHEMA_VERSION))


@pytest.mark.parametrize(
    ("old", "expected"),
    [
        (V1, CURRENT | {"runtime": {}}),  # nothing recorded: no count to fill
        (V2, CURRENT),
        (V3, CURRENT),
        (V4, CURRENT),
        (V3 | {"runtime": LIMITED}, CURRENT | {"runtime": LIMITED}),  # a limit: total unknown
    ],
    ids=["v1", "v2", "v3", "v4-unversioned", "v3-limited"],
)
def test_each_old_layout_migrates_to_the_current_one(
    old: dict[str, Any], expected: dict[str, Any]
) -> None:
    before = json.loads(json.dumps(old))
    migrated = migrate_run_info(old)
    assert migrated == expected
    assert next(iter(migrated)) == "schema_version"
    assert old == before  # the input is not changed
    assert migrate_run_info(migrated) is migrated  # current: nothing to do
    check_run_identity(migrated, Path("run.json"))  # the run id still matches
    assert migrated["run_id"] == RUN_ID


def test_a_run_without_a_limit_gets_its_total_and_a_count_out_of_shape_is_left() -> None:
    assert migrate_run_info(V3)["runtime"]["n_total"] == 4
    damaged = V3 | {"runtime": {"limit": None, "n_items": "4"}}
    assert "n_total" not in migrate_run_info(damaged)["runtime"]  # unknown, as before


def test_the_task_comes_from_the_config_only_when_it_names_one() -> None:
    assert (
        migrate_run_info(V2 | {"config": {"task_name": "kalma.run", "task": "nq"}})["task"]
        == "kalma.run"
    )
    assert "task" not in migrate_run_info(V2 | {"config": {"m": 1}})
    edited = migrate_run_info(V2 | {"task": "caqa.judge"})  # an edit is left for the check
    assert edited["task"] == "caqa.judge"


def test_a_layout_from_a_newer_citegraph_is_refused_naming_the_file_and_versions(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    _write(out, CURRENT | {"schema_version": SCHEMA_VERSION + 1})
    message = (
        rf"{out / 'run.json'}: was written by a newer citegraph \(run.json layout version "
        rf"{SCHEMA_VERSION + 1}; this citegraph reads versions up to {SCHEMA_VERSION}\)"
    )
    with pytest.raises(DataError, match=message):
        read_run_info(out)
    with pytest.raises(DataError, match=message):
        RunDir.read(out)
    with pytest.raises(DataError, match=message):
        run_info(out)  # the viewer
    with pytest.raises(DataError, match=message):
        run_task(CountingTask(_Options()), out)  # a resume
    assert json.loads((out / "run.json").read_text())["schema_version"] == SCHEMA_VERSION + 1
    report = CliRunner().invoke(main, ["runs", "report", str(out)])
    assert report.exit_code == 2, report.output
    assert "was written by a newer citegraph" in " ".join(report.stderr.split())


@pytest.mark.parametrize("version", ["4", 0, -1, True, 2.0, None])
def test_a_version_that_is_not_one_is_refused(tmp_path: Path, version: object) -> None:
    _write(tmp_path, CURRENT | {"schema_version": version})
    with pytest.raises(DataError, match=r"run.json, field 'schema_version': is not a layout"):
        read_run_info(tmp_path)


def test_a_new_run_records_the_current_version_and_the_same_run_id(tmp_path: Path) -> None:
    outcome = run_task(CountingTask(_Options()), tmp_path / "run")
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["schema_version"] == SCHEMA_VERSION
    assert next(iter(info)) == "schema_version"
    assert info["run_id"] == RUN_ID == outcome.info["run_id"]  # not hashed with the version
    assert info["task"] == "testing.schema" and info["runtime"]["n_total"] == 4
    direct = RunDir.open(tmp_path / "direct", {"task_name": "testing.schema", "m": 1})
    direct.close()
    assert direct.info["schema_version"] == SCHEMA_VERSION
    assert direct.info["task"] == "testing.schema"  # the config's, when not given


@pytest.mark.parametrize("old", [V1, V2, V3, V4], ids=["v1", "v2", "v3", "v4-unversioned"])
def test_an_old_run_on_disk_shows_reports_compares_and_resumes(
    tmp_path: Path, old: dict[str, Any]
) -> None:
    out = tmp_path / "old"
    _write(out, old, records=2)
    assert task_of_run(read_run_info(out)).name == "testing.schema"
    (row,) = Site([tmp_path]).overviews()  # the viewer's run list
    assert (row.task, row.problem, row.n_samples) == ("testing.schema", None, 2)
    info = run_info(out)  # the viewer reads the current layout
    assert info["schema_version"] == SCHEMA_VERSION and info["task"] == "testing.schema"
    runner = CliRunner()
    report = runner.invoke(main, ["runs", "report", str(out)])
    assert report.exit_code == 0, report.output
    assert json.loads((out / "metrics.json").read_text())["total"] == 0 + 1
    other = tmp_path / "other"
    run_task(CountingTask(_Options(offset=1)), other)
    compare = runner.invoke(main, ["runs", "compare", str(out), str(other), "--format", "json"])
    assert compare.exit_code == 0, compare.output
    rows = json.loads(compare.stdout)
    assert [(r["task"], r["settings"], r["n"]) for r in rows] == [
        ("testing.schema", {"offset": "0"}, 2),
        ("testing.schema", {"offset": "1"}, 4),
    ]
    outcome = run_task(CountingTask(_Options()), out)  # resumes: the same run
    assert (outcome.n_resumed, outcome.n_done_now) == (2, 2)
    assert outcome.info["run_id"] == RUN_ID
    assert outcome.metrics["total"] == 0 + 1 + 2 + 3
    written = json.loads((out / "run.json").read_text())  # rewritten by the resume
    assert written["run_id"] == RUN_ID and written["config"] == CONFIG
    assert written["schema_version"] == SCHEMA_VERSION and written["task"] == "testing.schema"


def test_an_unversioned_run_is_not_rewritten_by_reading_it(tmp_path: Path) -> None:
    out = tmp_path / "old"
    _write(out, V3, records=4)
    before = (out / "run.json").read_bytes()
    assert read_run_info(out)["schema_version"] == SCHEMA_VERSION
    RunDir.read(out)
    run_info(out)
    assert (out / "run.json").read_bytes() == before


def test_an_old_run_resumed_without_n_total_and_a_limit_stays_unknown(tmp_path: Path) -> None:
    out = tmp_path / "old"
    _write(out, V3 | {"runtime": {"limit": 2, "n_items": 2}}, records=2)
    info = read_run_info(out)
    completion = Completion.of_run(info["runtime"], 2, 0)
    assert (completion.n_asked, completion.n_total) == (2, None)


def test_shards_of_an_old_run_merge_into_the_current_layout(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, V2, records=2)
    _write(b, V2, records=0)
    (b / "samples.jsonl").write_text('{"id": "i-2", "value": 2}\n{"id": "i-3", "value": 3}\n')
    merged = merge_runs([a, b], tmp_path / "merged")
    merged.close()
    info = json.loads((tmp_path / "merged" / "run.json").read_text())
    assert info["schema_version"] == SCHEMA_VERSION and info["run_id"] == RUN_ID
    assert info["task"] == "testing.schema"
