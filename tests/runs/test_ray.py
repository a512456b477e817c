"""``--engine ray`` on a real local Ray instance (started once for the module): the same records
and metrics as the local engine on real tasks, resume after a killed driver with no id lost or
written twice, an actor killed with ``ray.kill`` survived, a poisoned item one failed record.

Real tasks run with the lexical NLI matcher (kalma score) and the lexical NLI evaluator (caqa
judge); the small ``EchoTask`` (``_ray_tasks.py``) stands for a model that is slow, raises for
one item or loses its worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from citegraph.errors import ConfigError, MissingDependency
from citegraph.runs import Runtime, run_task_async, samples_fingerprint

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'citegraph[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'citegraph[ray]')")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _ray_tasks  # noqa: E402
from _ray_tasks import EchoConfig, EchoTask  # noqa: E402

DEMO = resources.files("citegraph.kalma") / "demo"


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[str]:
    """One local Ray instance (2 CPUs, no dashboard) for the module; yields its address."""
    ray.cloudpickle.register_pickle_by_value(_ray_tasks)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def ids_in(run_dir: Path) -> Counter[str]:
    """How many lines of samples.jsonl each id has."""
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return Counter(json.loads(line)["id"] for line in lines if line.strip())


def records(run_dir: Path) -> dict[str, dict]:
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


RAY = Runtime(engine="ray", ray_actors=2)


def test_kalma_score_on_ray_equals_local(tmp_path: Path, data_dir: Path) -> None:
    from citegraph.kalma import KalmaScoreConfig
    from citegraph.kalma.score import KalmaScoreTask

    def task() -> KalmaScoreTask:
        return KalmaScoreTask(KalmaScoreConfig(), DEMO / "answers.jsonl",
                              gold_path=DEMO / "gold.jsonl", data_dir=data_dir)  # fmt: skip

    local = asyncio.run(run_task_async(task(), tmp_path / "local", Runtime(batch_size=1)))
    on_ray = asyncio.run(
        run_task_async(task(), tmp_path / "ray", RAY.model_copy(update={"batch_size": 1}))
    )
    assert records(tmp_path / "ray") == records(tmp_path / "local")
    assert on_ray.metrics == local.metrics
    runtime = on_ray.info["runtime"]
    assert runtime["engine"] == "ray" and runtime["ray"]["actors"] == 2
    assert runtime["ray"]["cluster"]["CPU"] == 2.0
    assert on_ray.info["run_id"] == local.info["run_id"]  # the engine is runtime, not identity


def test_token_totals_on_ray_equal_local(tmp_path: Path, data_dir: Path) -> None:
    """The actors' chat calls (a mock text-quality judge: 4 answers x 4 criteria) come back
    with their batches and are counted in metrics.json as the local engine counts them."""
    from citegraph.kalma import KalmaScoreConfig
    from citegraph.kalma.score import KalmaScoreTask

    def task() -> KalmaScoreTask:
        config = KalmaScoreConfig(text_quality="mock")
        return KalmaScoreTask(config, DEMO / "answers.jsonl", data_dir=data_dir)

    runtime = Runtime(batch_size=1, cache=False)
    local = asyncio.run(run_task_async(task(), tmp_path / "local", runtime))
    on_ray = asyncio.run(
        run_task_async(
            task(), tmp_path / "ray", RAY.model_copy(update={"batch_size": 1, "cache": False})
        )
    )
    assert local.metrics["tokens"]["judge"]["calls"] == 16
    assert on_ray.metrics["tokens"] == local.metrics["tokens"]


def test_caqa_judge_on_ray_equals_local(tmp_path: Path, data_dir: Path) -> None:
    from click.testing import CliRunner

    from citegraph.cli import main

    def cli(*args: object) -> None:
        result = CliRunner().invoke(main, [str(a) for a in args])
        assert result.exit_code == 0, result.output

    cli("caqa", "build", "--questions", "simplequestions-wd", "--limit", "8",
        "--splits", "0,0,1", "--data-dir", data_dir, "--out", tmp_path / "b")  # fmt: skip
    test = tmp_path / "b" / "test.jsonl"
    judge = ("caqa", "judge", test, "--evaluator", "nli/lexical", "--bootstrap", "20")
    cli(*judge, "--out", tmp_path / "local")
    cli(*judge, "--engine", "ray", "--ray-actors", "2", "--batch-size", "4", "--out",
        tmp_path / "ray")  # fmt: skip
    assert records(tmp_path / "ray") == records(tmp_path / "local")
    local = json.loads((tmp_path / "local" / "metrics.json").read_text())
    on_ray = json.loads((tmp_path / "ray" / "metrics.json").read_text())
    assert on_ray == local


def test_a_poisoned_item_is_one_failed_record(tmp_path: Path) -> None:
    outcome = asyncio.run(run_task_async(EchoTask(EchoConfig(n=10, poison="e-3")), tmp_path, RAY))
    by_id = records(tmp_path)
    assert set(by_id) == {f"e-{i}" for i in range(10)}
    failed = [k for k, r in by_id.items() if r.get("status") == "failed"]
    assert failed == ["e-3"]
    assert "ValueError: poisoned item e-3" in by_id["e-3"]["error"]
    assert by_id["e-3"]["error_type"] == "builtins.ValueError"  # a model failure: exit 3
    assert by_id["e-2"]["double"] == 4  # its batch partner, worked again alone
    progress = {"n_done": 9, "n_failed": 1, "n_asked": 10, "n_total": 10, "limit": None}
    progress |= {"shard": None, "partial": True}
    assert outcome.metrics == {
        "n": 10,
        "sum": 2 * (45 - 3),
        "n_failed": 1,
        "progress": progress | {"torn_lines_dropped": 0},
        "samples_file": samples_fingerprint(tmp_path / "samples.jsonl"),
    }
    assert outcome.n_failed == 1


def test_a_killed_actor_is_survived(tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    config = EchoConfig(n=12, delay=0.2, kill_at="e-5", marker=str(marker))
    outcome = asyncio.run(run_task_async(EchoTask(config), tmp_path / "run", RAY))
    assert marker.exists(), "the actor was never killed"
    assert ids_in(tmp_path / "run") == Counter({f"e-{i}": 1 for i in range(12)})
    assert outcome.n_failed == 0 and outcome.metrics["sum"] == 2 * sum(range(12))


def test_a_worker_that_always_dies_ends_as_failed_records_not_a_dead_run(
    tmp_path: Path,
) -> None:
    outcome = asyncio.run(run_task_async(EchoTask(EchoConfig(n=6, die_at="e-4")), tmp_path, RAY))
    by_id = records(tmp_path)
    assert ids_in(tmp_path) == Counter({f"e-{i}": 1 for i in range(6)})
    assert by_id["e-4"]["status"] == "failed"
    assert "the Ray worker kept dying" in by_id["e-4"]["error"]
    done = [k for k, r in by_id.items() if r.get("status") != "failed"]
    assert all(by_id[k]["double"] == 2 * int(k[2:]) for k in done)
    assert outcome.n_failed == 6 - len(done)


_DRIVER = """
import asyncio, sys
sys.path.insert(0, {here!r})
import ray, _ray_tasks
ray.cloudpickle.register_pickle_by_value(_ray_tasks)
from _ray_tasks import EchoConfig, EchoTask
from citegraph.runs import Runtime, run_task_async
runtime = Runtime(engine="ray", ray_address={address!r}, ray_actors=2, batch_size=1)
asyncio.run(run_task_async(EchoTask(EchoConfig(n=40, delay=0.3)), {out!r}, runtime))
"""


def test_a_killed_driver_loses_nothing_and_writes_nothing_twice(
    tmp_path: Path, ray_cluster: str
) -> None:
    out = tmp_path / "run"
    script = _DRIVER.format(here=str(HERE), address=ray_cluster, out=str(out))
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    driver = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], env=env)
    samples = out / "samples.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if samples.exists() and len(samples.read_text().splitlines()) >= 6:
            break
        if driver.poll() is not None:
            pytest.fail(f"the driver ended before it could be killed (exit {driver.returncode})")
        time.sleep(0.1)
    else:
        driver.kill()
        pytest.fail("the driver wrote fewer than 6 records in 120 s")
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    before = ids_in(out)
    assert 6 <= sum(before.values()) < 40 and max(before.values()) == 1
    outcome = asyncio.run(run_task_async(EchoTask(EchoConfig(n=40, delay=0.3)), out, RAY))
    assert outcome.n_resumed == len(before)
    assert ids_in(out) == Counter({f"e-{i}": 1 for i in range(40)})


def test_a_run_started_locally_resumes_on_ray(tmp_path: Path) -> None:
    task = EchoTask(EchoConfig(n=8))
    asyncio.run(run_task_async(task, tmp_path, Runtime(limit=3)))
    outcome = asyncio.run(run_task_async(task, tmp_path, RAY))
    assert outcome.n_resumed == 3 and outcome.n_done_now == 5
    assert ids_in(tmp_path) == Counter({f"e-{i}": 1 for i in range(8)})


def test_ray_options_need_the_ray_engine() -> None:
    with pytest.raises(ConfigError, match="need --engine ray"):
        Runtime(ray_actors=2)


def test_without_ray_the_extra_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r"pip install 'citegraph\[ray\]'"):
        asyncio.run(run_task_async(EchoTask(EchoConfig(n=2)), tmp_path, Runtime(engine="ray")))


def test_every_task_command_takes_the_ray_options() -> None:
    from click.testing import CliRunner

    from citegraph.cli import main

    for command in (("kalma", "score"), ("kalma", "run"), ("kalma", "build"), ("caqa", "build"),
                    ("caqa", "judge"), ("conner", "score"), ("conner", "generate"),
                    ("conner", "select")):  # fmt: skip
        help_text = CliRunner().invoke(main, [*command, "--help"]).output
        for flag in ("--engine", "--ray-address", "--ray-actors", "--ray-gpus-per-actor"):
            assert flag in help_text, (command, flag)
