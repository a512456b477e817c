"""Issue 27, items 3, 6 and 7 in the viewer and the report, each reproduced first:

- one bad run (a deeply nested line, a field of the wrong type, wrong types in metrics.json or
  run.json) made the index answer 500 for every run; its own pages answered 500;
- ``citegraph report`` gave a traceback on a binary, UTF-16 or deeply nested samples.jsonl, and
  the viewer skipped a line that is not an object without a word;
- a lone surrogate in a record or a name gave 500 (the page could not be encoded);
- a ``$`` in a model or run name was read as mathtext (``report`` crashed, /compare 500);
- any ``Host`` was answered (DNS rebinding) and no Content-Security-Policy was sent;
- refs like ``²/x`` or a name over 255 bytes gave 500; the index listed runs behind a symlink
  leading out of the root.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citegraph.cli import main
from citegraph.errors import DataError
from citegraph.viewer import Catalog, create_app, write_report

pytest.importorskip("starlette", reason="the viewer extra is not installed")

RECORD = {"id": "s0", "status": "ok", "question": "Who?", "answer": "A.", "scores": {"f1": 0.5}}
INFO = {"task": "kalma.score", "created": "2026-01-01", "config": {"mode": "paper"}}


def make_run(
    root: Path,
    name: str,
    lines: list[bytes] | None = None,
    info: Any = None,
    metrics: Any = None,
) -> Path:
    """A run directory ``root/name`` with these samples.jsonl lines, run.json and metrics.json."""
    run = root / name
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps(INFO if info is None else info), encoding="utf-8")
    if metrics is not None:
        (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    if lines is None:
        lines = [json.dumps(RECORD | {"id": f"s{i}"}).encode() for i in range(2)]
    (run / "samples.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    return run


def client(root: Path, **options: Any) -> Any:
    from starlette.testclient import TestClient

    app = create_app([root], warm=False, **options)
    return TestClient(app, base_url="http://127.0.0.1")


NESTED = b'{"id": "deep", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
BAD_RUNS: dict[str, dict[str, Any]] = {
    "metrics-of-wrong-types": {"metrics": {"f1": {"micro": "high"}, "progress": [1]}},
    "config-a-list": {"info": INFO | {"config": [1, 2]}},
    "runtime-text": {"info": INFO | {"runtime": "fast", "created": [1]}},
}


@pytest.mark.parametrize("bad", sorted(BAD_RUNS))
def test_one_bad_run_is_listed_as_unreadable_and_the_others_normally(
    tmp_path: Path, bad: str
) -> None:
    make_run(tmp_path, "good")
    make_run(tmp_path, "bad", **BAD_RUNS[bad])
    viewer = client(tmp_path)
    index = viewer.get("/")
    assert index.status_code == 200
    assert 'href="/run?run=0%2Fgood"' in index.text
    row = index.text[index.text.index('href="/run?run=0%2Fbad"') :].split("</tr>")[0]
    assert "unreadable: " in row
    assert "unreadable: " not in index.text.split('href="/run?run=0%2Fbad"')[0].split("<tr")[-1]
    for page in ("/run?run=0/bad", "/compare?run=0/bad", "/sample?run=0/bad&id=s0"):
        answer = viewer.get(page)
        assert answer.status_code in (200, 404, 422), page
        if answer.status_code == 422:
            assert "cannot be shown" in answer.text
    assert viewer.get("/run?run=0/good").status_code == 200


BAD_RECORDS = {
    "answer-a-list": (
        json.dumps(RECORD | {"id": "s1", "answer": [{"a": 1}]}).encode(),
        "a record this run's task cannot show",
    ),
    "nested": (NESTED.replace(b'"deep"', b'"s1"'), "not valid JSON (nested too deeply)"),
}


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_a_record_that_cannot_be_shown_hides_only_itself(tmp_path: Path, kind: str) -> None:
    bad, why = BAD_RECORDS[kind]
    run = make_run(tmp_path, "run", [json.dumps(RECORD).encode(), bad])
    viewer = client(tmp_path)
    index = viewer.get("/")
    assert index.status_code == 200 and "unreadable: " not in index.text
    note = f"1 line(s) of samples.jsonl not shown: {run / 'samples.jsonl'}:2: {why}"
    page = viewer.get("/run?run=0/run")
    assert page.status_code == 200 and note in html.unescape(page.text)
    assert "sample?run=0%2Frun&amp;id=s0" in page.text  # the good sample is listed as ever
    assert "unreadable" in page.text.split("id=s1")[1][:400]  # the bad one says so
    assert viewer.get("/sample?run=0/run&id=s0").status_code == 200
    shown = viewer.get("/sample?run=0/run&id=s1")
    assert shown.status_code == 422 and "cannot be shown" in shown.text


def test_a_line_that_is_not_a_record_is_named_not_skipped(tmp_path: Path) -> None:
    lines = [json.dumps(RECORD).encode(), b"[1, 2]", json.dumps(RECORD | {"id": "s1"}).encode()]
    run = make_run(tmp_path, "run", lines)
    viewer = client(tmp_path)
    note = f"1 line(s) of samples.jsonl not shown: {run / 'samples.jsonl'}:2"
    assert note in viewer.get("/").text
    page = viewer.get("/run?run=0/run")
    assert page.status_code == 200 and note in page.text and "2 of 2 samples" in page.text
    with pytest.raises(DataError, match=r"samples\.jsonl:2: expected a JSON object"):
        write_report([run], tmp_path / "r.html")


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (bytes(range(256)) * 2, r"samples\.jsonl:1: not valid JSON"),
        ("\n".join([json.dumps(RECORD)] * 2).encode("utf-16"), r"samples\.jsonl:1: not UTF-8"),
        (NESTED, r"samples\.jsonl:1: not valid JSON \(nested too deeply\)"),
    ],
    ids=["binary", "utf-16", "nested"],
)
def test_report_names_the_damaged_line(tmp_path: Path, damage: bytes, says: str) -> None:
    run = make_run(tmp_path, "run", [damage])
    result = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r.html")])
    assert result.exit_code != 0
    assert re.search(says, result.output), result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_report_names_a_record_its_task_cannot_show(tmp_path: Path) -> None:
    run = make_run(tmp_path, "run", [json.dumps(RECORD | {"answer": [1]}).encode()])
    with pytest.raises(DataError, match=r"samples\.jsonl:1: a record this run's task cannot"):
        write_report([run], tmp_path / "r.html")


def test_lone_surrogates_render_as_replacement_characters(tmp_path: Path) -> None:
    record = RECORD | {"question": "Who\ud800?", "answer": "A \udfff <b>x</b>."}
    info = INFO | {"config": {"mode": "paper", "model_name": "m\ud800<script>x</script>"}}
    from citegraph.io import json_text

    other = RECORD | {"id": "x\ud800", "question": "Which?"}
    lines = [json_text(record).encode(), json_text(other).encode()]
    run = make_run(tmp_path, "run", lines, info=info)
    viewer = client(tmp_path)
    for page in ("/", "/run?run=0/run", "/sample?run=0/run&id=s0", "/compare?run=0/run"):
        answer = viewer.get(page)
        assert answer.status_code == 200, page
        assert "<script>x" not in answer.text and "<b>x" not in answer.text
    assert "m\ufffd&lt;script&gt;" in viewer.get("/").text
    assert "Who\ufffd?" in viewer.get("/sample?run=0/run&id=s0").text
    # the run page links the sample whose id holds a surrogate as "x\ufffd", and the link works
    assert 'href="/sample?run=0%2Frun&amp;id=x%EF%BF%BD"' in viewer.get("/run?run=0/run").text
    assert "Which?" in viewer.get("/sample", params={"run": "0/run", "id": "x\ufffd"}).text
    html = write_report([run], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Who\ufffd?" in html


def test_compare_draws_runs_named_like_mathtext(tmp_path: Path) -> None:
    refs = []
    for number, name in enumerate(["$\\frac{$", "$x$"]):  # the first, bad mathtext
        for removed in (0, 1):
            config = {"mode": "paper", "model_name": name, "remove_knowledge": removed}
            metrics = {key: {"micro": 0.5} for key in ("precision", "recall", "na_precision")}
            make_run(
                tmp_path, f"m{number}-{removed}", info=INFO | {"config": config}, metrics=metrics
            )
            refs.append(f"0/m{number}-{removed}")
    answer = client(tmp_path).get("/compare", params={"run": refs})
    assert answer.status_code == 200
    assert answer.text.count('<figure class="chart">') >= 2  # Figure 4, Table 5: drawn


def test_a_host_the_viewer_does_not_serve_is_refused(tmp_path: Path) -> None:
    make_run(tmp_path, "run")
    viewer = client(tmp_path, host="127.0.0.1", port=7575, allow_hosts=["box.lan"])
    for host in ("evil.example", "evil.example:7575", "127.0.0.1.evil.example", "", "[::2]"):
        assert viewer.get("/", headers={"host": host}).status_code == 400, host
    assert viewer.get("/", headers={"host": "127.0.0.1:8080"}).status_code == 400  # another port
    for host in ("127.0.0.1:7575", "localhost:7575", "[::1]:7575", "BOX.lan:7575", "localhost"):
        assert viewer.get("/", headers={"host": host}).status_code == 200, host


def test_every_answer_carries_a_strict_policy(tmp_path: Path) -> None:
    make_run(tmp_path, "run")
    viewer = client(tmp_path)
    for page in ("/", "/run?run=0/run", "/run?run=0/nothing", "/static/viewer.css"):
        headers = viewer.get(page).headers
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert "unsafe-inline" not in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
    refused = viewer.get("/", headers={"host": "evil.example"}).headers
    assert "default-src 'none'" in refused["content-security-policy"]


@pytest.mark.parametrize(
    "ref", ["²/x", "0/" + "a" * 300, "0/" + "/".join(["b" * 200] * 30), "0/\x00", "0/../..", "/etc"]
)
def test_refs_that_name_no_run_are_404(tmp_path: Path, ref: str) -> None:
    make_run(tmp_path, "run")
    assert Catalog([tmp_path]).resolve(ref) is None
    viewer = client(tmp_path)
    assert viewer.get("/run", params={"run": ref}).status_code == 404
    assert viewer.get("/compare", params={"run": ref}).status_code == 404


def test_the_index_leaves_out_runs_behind_links_out_of_the_root(tmp_path: Path) -> None:
    outside = make_run(tmp_path, "outside")
    root = tmp_path / "root"
    make_run(root, "inside")
    (root / "link").symlink_to(outside)
    assert [e.ref for e in Catalog([root]).runs()] == ["0/inside"]
    viewer = client(root)
    assert "0/link" not in viewer.get("/").text
    assert viewer.get("/run?run=0/link").status_code == 404


def test_view_passes_allowed_hosts_to_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import citegraph.viewer as viewer

    served: dict[str, Any] = {}

    class Sock:
        def close(self) -> None:
            pass

    monkeypatch.setattr(viewer, "open_port", lambda host, port: Sock())
    monkeypatch.setattr(viewer, "serve", lambda roots, **kw: served.update(kw))
    args = ["view", "--host", "0.0.0.0", "--allow-host", "box.lan", "--allow-host", "10.0.0.2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert served["allow_hosts"] == ("box.lan", "10.0.0.2") and served["host"] == "0.0.0.0"
