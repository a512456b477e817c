"""Fuzz the viewer and the report with hostile run directories from a seeded generator (issue 27,
items 3, 6 and 7).

Real runs (kalma score, caqa build and judge, made through the CLI) and a hand-written CONNER
run are copied and damaged: deeply nested lines, lines that are arrays or numbers, binary
garbage, the file re-encoded as UTF-16, NUL bytes, fields of the wrong type, lone surrogates,
``$...$`` mathtext, HTML and ``<script>`` in records, names, run.json and metrics.json. All of
them are served by one viewer: the index, every run's page (filtered and paged), samples and
/compare (each run alone, and all runs of a task together) must answer below 500 with every
text escaped; hostile ``Host`` headers are refused; hostile refs are 404; ``citegraph report``
of each run writes a report or names the damage (a :class:`CitegraphError`), never a traceback,
and never succeeds silently over a line that is not a record. Every chart kind is drawn with
hostile labels.

The generator is seeded: a failure names its case; rerun with the same seed to reproduce it.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from _fuzz import fuzz_size
from citegraph.cli import main
from citegraph.errors import CitegraphError
from citegraph.io import encodable, json_text
from citegraph.runs import Chart, Series
from citegraph.viewer import chart_svg, create_app, write_report

pytest.importorskip("starlette", reason="the viewer extra is not installed")
pytest.importorskip("matplotlib", reason="the viewer extra is not installed")

SEED = 27
N_RUNS = fuzz_size(11, 48)  # hostile copies of the base runs (CI: one per kind of DAMAGE)
DEMO = resources.files("citegraph.kalma") / "demo"
SCRIPT = "<script>alert(1)</script>"
TEXTS = [
    "\ud800",
    "a\udfffb",
    "$\\frac{$",
    "$x$",
    "$\\frac{",
    "a$b$c$",
    SCRIPT,
    "<img src=x onerror=alert(1)>",
    "</pre><b>bold</b>",
    '"><svg onload=alert(1)>',
    "[link=http://x]y[/link]",
    "\u202eevil\u202c",
    "line\nbreak\u2028",
    "_hidden",
    "x" * 3000,
    "",
]
WRONG = [[{"a": 1}], {"b": [1]}, 12345, -1.5, True, None, [], {}, "text"]


def _hostile(rng: random.Random) -> Any:
    return rng.choice(TEXTS) + rng.choice(TEXTS) if rng.random() < 0.6 else rng.choice(WRONG)


def _cli(*args: str | Path) -> None:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output


CONNER_INFO = {
    "task": "conner.score",
    "created": "2026-01-01",
    "config": {"task": "nq", "knowledge": "gold", "nli": "lexical", "task_name": "conner.score",
               "metrics": ["factuality"], "models": {"nli": "lexical"}},
}  # fmt: skip
CONNER_METRICS = {
    "task": "nq",
    "metrics": {"factuality": {"mean": 0.5, "n": 2, "n_unmeasured": 0, "models": ["lexical"]}},
}


def _conner_run(path: Path) -> None:
    path.mkdir(parents=True)
    (path / "run.json").write_text(json.dumps(CONNER_INFO), encoding="utf-8")
    (path / "metrics.json").write_text(json.dumps(CONNER_METRICS), encoding="utf-8")
    records = [
        {"id": f"q{i}", "status": "ok", "query": f"question {i}?", "source": "nq",
         "knowledge": "Some knowledge.", "answer": "An answer.",
         "metrics": {"factuality": {"value": 0.5, "model": "lexical"}}}
        for i in range(4)
    ]  # fmt: skip
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Path]:
    """The runs the hostile ones are made from."""
    root = tmp_path_factory.mktemp("bases")
    _cli("kalma", "score", DEMO / "answers.jsonl", "--gold", DEMO / "gold.jsonl",
         "--data-dir", data_dir, "--out", root / "scored")  # fmt: skip
    _cli("caqa", "build", "--questions", "simplequestions-wd", "--limit", "24",
         "--splits", "0.2,0.2,0.6", "--data-dir", data_dir, "--out", root / "built")  # fmt: skip
    _cli("caqa", "judge", root / "built" / "test.jsonl", "--evaluator", "nli/lexical",
         "--bootstrap", "0", "--out", root / "judged")  # fmt: skip
    _conner_run(root / "conner")
    return {name: root / name for name in ("scored", "built", "judged", "conner")}


def _records(run: Path) -> list[dict[str, Any]]:
    lines = (run / "samples.jsonl").read_bytes().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _write_records(run: Path, records: list[dict[str, Any]], extra: list[bytes]) -> None:
    lines = [json_text(r).encode("utf-8") for r in records]
    for line in extra:
        lines.insert(len(lines) and random.Random(len(line)).randrange(len(lines) + 1), line)
    (run / "samples.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


def _edit_json(path: Path, rng: random.Random) -> None:
    value = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if not isinstance(value, dict) or not value:
        value = {"x": 1}
    target = value
    key = rng.choice(sorted(target))
    if isinstance(target[key], dict) and target[key] and rng.random() < 0.5:
        target = target[key]
        key = rng.choice(sorted(target))
    target[key] = _hostile(rng)
    path.write_text(json_text(value), encoding="utf-8")


#: How a run is damaged: (name, whether samples.jsonl then holds a line that is not a record).
DAMAGE = [
    ("nested line", True),
    ("array line", True),
    ("number line", True),
    ("binary garbage", True),
    ("utf-16 file", True),
    ("nul bytes", True),
    ("field of wrong type", False),
    ("hostile text fields", False),
    ("run.json field", False),
    ("metrics.json field", False),
    ("hostile model name", False),
]


def _damage(run: Path, how: str, rng: random.Random) -> None:
    records = _records(run)
    samples = run / "samples.jsonl"
    if how == "nested line":
        depth = rng.choice([2_000, 50_000, 200_000])
        _write_records(run, records, [b'{"id": "deep", "x": ' + b"[" * depth + b"]" * depth + b"}"])
    elif how == "array line":
        _write_records(run, records, [json.dumps([records[0]]).encode()])
    elif how == "number line":
        _write_records(run, records, [rng.choice([b"42", b'"text"', b"null", b"true"])])
    elif how == "binary garbage":
        _write_records(
            run, records, [bytes(rng.randrange(256) for _ in range(200)).replace(b"\n", b"")]
        )
    elif how == "utf-16 file":
        samples.write_bytes(samples.read_text(encoding="utf-8").encode("utf-16"))
    elif how == "nul bytes":
        _write_records(run, records, [b"\x00" * rng.randrange(1, 50)])
    elif how in ("field of wrong type", "hostile text fields"):
        for record in rng.sample(records, k=min(len(records), 3)):
            keys = (
                sorted(record)
                if how == "field of wrong type"
                else [k for k in sorted(record) if isinstance(record[k], str) and k != "id"]
            )
            for key in rng.sample(keys, k=min(len(keys), 2)):
                record[key] = (
                    _hostile(rng)
                    if how == "field of wrong type"
                    else (record[key] + rng.choice(TEXTS))
                )
        _write_records(run, records, [])
    elif how == "run.json field":
        _edit_json(run / "run.json", rng)
    elif how == "metrics.json field":
        _edit_json(run / "metrics.json", rng)
    elif how == "hostile model name":
        info = json.loads((run / "run.json").read_text(encoding="utf-8"))
        info["config"]["model_name"] = rng.choice(TEXTS) + SCRIPT
        info["config"]["evaluator_name"] = rng.choice(TEXTS)
        (run / "run.json").write_text(json_text(info), encoding="utf-8")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, bases: dict[str, Path]) -> dict[str, Any]:
    """``N_RUNS`` damaged copies of the base runs under one root, with how each was damaged."""
    rng = random.Random(SEED)
    root = tmp_path_factory.mktemp("hostile") / "runs"
    cases: dict[str, tuple[str, bool]] = {}
    for number in range(N_RUNS):
        base = rng.choice(sorted(bases))
        how, breaks_lines = DAMAGE[number % len(DAMAGE)]
        name = f"{number:02d}-{base}-{how.replace(' ', '-')}"
        shutil.copytree(bases[base], root / name)
        _damage(root / name, how, rng)
        cases[name] = (how, breaks_lines)
    for base, path in bases.items():  # the undamaged runs, served beside the damaged ones
        shutil.copytree(path, root / f"ok-{base}")
    return {"root": root, "cases": cases}


def _client(root: Path, **options: Any) -> Any:
    from starlette.testclient import TestClient

    app = create_app([root], warm=False, **options)
    return TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=True)


class Pages:
    """Requests through one client, counted by outcome."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []

    def get(self, url: str, **kw: Any) -> Any:
        try:
            answer = self.client.get(url, **kw)
        except Exception as exc:  # a traceback out of the app: what this fuzz looks for
            self.counts["tracebacks"] += 1
            self.failures.append(f"{url}: {type(exc).__name__}: {str(exc)[:200]}")
            return None
        self.counts[f"status {answer.status_code // 100}xx"] += 1
        self.counts["requests"] += 1
        if answer.status_code >= 500:
            self.failures.append(f"{url}: {answer.status_code}")
        lowered = answer.text.lower()
        if "<script>alert" in lowered or "<img src=x" in lowered or "<svg onload" in lowered:
            self.counts["unescaped"] += 1
            self.failures.append(f"{url}: unescaped markup")
        return answer


def test_every_page_of_every_hostile_run_answers_without_500(hostile: dict[str, Any]) -> None:
    pages = Pages(_client(hostile["root"]))
    index = pages.get("/")
    assert index is not None and index.status_code == 200
    runs = sorted(p.name for p in hostile["root"].iterdir())
    for name in runs:
        assert f"0/{name}" in index.text, f"{name} is not listed"
    by_task: dict[str, list[str]] = {}
    for name in runs:
        ref = f"0/{name}"
        by_task.setdefault(name.split("-")[1] if name[0].isdigit() else name[3:], []).append(ref)
        pages.get("/run", params={"run": ref})
        # a lone surrogate as a client sends it (its UTF-8-like bytes, percent-encoded)
        pages.get(f"/run?run={quote(ref)}&page=2&q=%ED%A0%80%24&status=failed")
        pages.get("/run", params={"run": ref, "metric": "f1", "min": "nan", "max": "1e400"})
        pages.get("/compare", params={"run": ref})
        ids = ["deep", SCRIPT]
        for line in (hostile["root"] / name / "samples.jsonl").read_bytes().splitlines()[:6]:
            try:
                ids.append(str(json.loads(line)["id"]))
            except (ValueError, KeyError, TypeError, RecursionError):
                continue
        for sample_id in ids:
            pages.get("/sample", params={"run": ref, "id": encodable(sample_id)})
    for refs in by_task.values():
        pages.get("/compare", params={"run": refs})
    print(f"pages of {len(runs)} runs: {dict(pages.counts)}")  # shown with -s
    assert pages.failures == [], pages.failures[:10]
    assert pages.counts["requests"] >= 10 * len(runs), pages.counts  # every page of every run
    assert pages.counts["tracebacks"] == 0 and pages.counts["status 5xx"] == 0
    assert pages.counts["status 4xx"] > 0  # the unreadable runs said so
    # the unreadable runs are listed as such, the undamaged ones are not
    assert index.text.count("unreadable: ") >= 1
    for base in ("scored", "built", "judged", "conner"):
        row = index.text.split(f'0%2Fok-{base}"')[1].split("</tr>")[0]
        assert "unreadable" not in row and "left out" not in row, base


def test_report_of_every_hostile_run_writes_or_names_the_damage(
    hostile: dict[str, Any], tmp_path: Path
) -> None:
    outcomes: Counter[str] = Counter()
    for name, (how, breaks_lines) in hostile["cases"].items():
        run = hostile["root"] / name
        try:
            html = write_report([run], tmp_path / f"{name}.html").read_text(encoding="utf-8")
        except CitegraphError:
            outcomes["named"] += 1
            continue
        except Exception as exc:  # counted: what this fuzz looks for
            outcomes["tracebacks"] += 1
            pytest.fail(f"{name} ({how}): {type(exc).__name__}: {exc}")
        outcomes["written"] += 1
        if breaks_lines:
            outcomes["silent"] += 1  # a line that is not a record, and no word of it
        assert "<script>alert" not in html.lower(), name
    print(f"reports of {N_RUNS} hostile runs: {dict(outcomes)}")  # shown with -s
    assert sum(outcomes.values()) == N_RUNS
    assert outcomes["tracebacks"] == 0 and outcomes["silent"] == 0, outcomes
    assert outcomes["named"] > 0 and outcomes["written"] > 0, outcomes


def test_report_through_the_cli_never_shows_a_traceback(
    hostile: dict[str, Any], tmp_path: Path
) -> None:
    codes: Counter[int] = Counter()
    for name in sorted(hostile["cases"])[::3]:
        result = CliRunner().invoke(
            main, ["report", str(hostile["root"] / name), "--out", str(tmp_path / "r.html")]
        )
        codes[result.exit_code] += 1
        assert "Traceback" not in result.output, name
        assert result.exception is None or isinstance(result.exception, SystemExit), name
    assert sum(codes.values()) == len(sorted(hostile["cases"])[::3])


HOSTS = [
    "evil.example", "evil.example:7575", "127.0.0.1.evil.example", "localhost.evil.example:7575",
    "127.0.0.2", "[::2]:7575", "0.0.0.0:7575", "", " ", "127.0.0.1:7576", "localhost:80",
    "127.0.0.1@evil.example", "evil.example#127.0.0.1", "[::1", "::1", "LOCALHOST.:7575",
    "xn--80ak6aa92e.com", "loc\u00e4lhost:7575", "127.0.0.1:7575:7575", "[::1]x",
]  # fmt: skip


def test_hostile_host_headers_are_refused(hostile: dict[str, Any]) -> None:
    rng = random.Random(SEED)
    pages = Pages(_client(hostile["root"], host="127.0.0.1", port=7575))
    hosts = HOSTS + [
        "".join(rng.choice("abcxyz.-:[]0123456789") for _ in range(rng.randrange(1, 30)))
        for _ in range(200)
    ]
    allowed = {"127.0.0.1", "127.0.0.1:7575", "localhost", "localhost:7575", "[::1]", "[::1]:7575"}
    tried = 0
    for host in hosts:
        if host.lower() in allowed:
            continue
        for url in ("/", "/run?run=0/ok-scored", "/static/viewer.css"):
            answer = pages.get(url, headers={"host": host.encode("latin-1")})
            tried += 1
            assert answer is not None and answer.status_code == 400, (host, url)
            assert "default-src 'none'" in answer.headers["content-security-policy"]
    for host in allowed:
        assert pages.get("/", headers={"host": host}).status_code == 200, host
    print(f"hostile Host headers: {tried} requests, {dict(pages.counts)}")  # shown with -s
    assert tried >= 600 and pages.failures == []


def test_hostile_refs_are_404(hostile: dict[str, Any]) -> None:
    rng = random.Random(SEED)
    pages = Pages(_client(hostile["root"]))
    refs = ["²/x", "٣/x", "0/" + "a" * 300, "0/" + "é" * 200, "0/\x00", "0/x\x00y", "0/..",
            "0/../..", "/etc", "0//etc", "0/ok-scored/../../..", "-1/x", "1/x", "9999999/x",
            "0/ok-scored/samples.jsonl", "0/%2e%2e", "0/\ud800", "0\\ok-scored",
            "0/" + "b/" * 600]  # fmt: skip
    refs += [
        "".join(rng.choice("0/.\\²x\x00é") for _ in range(rng.randrange(1, 40))) for _ in range(300)
    ]
    tried = 0
    for ref in refs:
        for page in ("/run", "/compare", "/sample"):
            answer = pages.get(page, params={"run": encodable(ref), "id": "s0"})
            tried += 1
            assert answer is not None and answer.status_code == 404, (page, ref)
    print(f"hostile refs: {tried} requests, {dict(pages.counts)}")  # shown with -s
    assert tried >= 900 and pages.failures == []


def test_every_chart_kind_draws_hostile_labels() -> None:
    rng = random.Random(SEED)
    drawn = 0
    for kind in ("line", "bar", "scatter", "hist", "heatmap"):
        for _ in range(12):
            names = [rng.choice(TEXTS)[:80] for _ in range(rng.randrange(1, 4))]
            groups = [rng.choice(TEXTS)[:40] or "g" for _ in range(3)]
            chart = Chart(
                kind=kind,
                title=rng.choice(TEXTS)[:200],
                x_label=rng.choice(TEXTS)[:80],
                y_label=rng.choice(TEXTS)[:80],
                series=[
                    Series(
                        name=name,
                        x=list(dict.fromkeys(groups)) if kind == "bar" else [1, 2, 3],
                        y=[rng.choice([0.0, 1.0, 2.5, None]) for _ in range(3)][
                            : len(dict.fromkeys(groups)) if kind == "bar" else 3
                        ],
                    )
                    for name in names
                ],
                matrix=[[1.0, 2.0], [3.0, 0.0]] if kind == "heatmap" else None,
                x_ticks=groups[:2] if kind == "heatmap" else None,
                y_ticks=groups[1:] if kind == "heatmap" else None,
            )
            svg = chart_svg(chart)
            svg.encode("utf-8")
            assert "<script" not in svg.lower() and "<img" not in svg.lower()
            drawn += 1
    assert drawn == 60
