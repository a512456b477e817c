"""``fetch_datasets`` against an injected mock transport (never the internet)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx2
import pytest

from citegraph.datasets import SOURCES, fetch_datasets
from citegraph.datasets._fetch import derive_codex_names
from citegraph.errors import ConfigError, DataError


def _transport(bodies: dict[str, bytes], seen: list[str]) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        for suffix, body in bodies.items():
            if str(request.url).endswith(suffix):
                return httpx2.Response(200, content=body)
        return httpx2.Response(404)

    return httpx2.MockTransport(handler)


def test_sources_are_pinned_to_commits() -> None:
    for files in SOURCES.values():
        for remote in files:
            assert remote.url.startswith("https://raw.githubusercontent.com/")
            assert any(len(part) == 40 for part in remote.url.split("/"))


def test_hash_mismatch_is_refused_and_nothing_written(tmp_path: Path) -> None:
    seen: list[str] = []
    bodies = {".json": b"[]"}  # not the real BioKaLMA bytes
    with pytest.raises(DataError, match="SHA-256 mismatch"):
        fetch_datasets(["biokalma"], tmp_path, transport=_transport(bodies, seen))
    assert not (tmp_path / "biokalma" / "complex_question_graph.json").exists()
    assert seen and seen[0].endswith("dataset/complex_question_graph.json")


def test_http_error_is_reported(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="HTTP 404"):
        fetch_datasets(["codex-s"], tmp_path, transport=_transport({}, []))


def test_real_bytes_are_written_once(tmp_path: Path, data_dir: Path) -> None:
    bodies = {
        f.url.split("/", 6)[-1].split("/", 1)[-1]: (data_dir / f.dest).read_bytes()
        for f in SOURCES["biokalma"]
    }
    seen: list[str] = []
    paths = fetch_datasets(["biokalma"], tmp_path, transport=_transport(bodies, seen))
    assert len(paths) == len(SOURCES["biokalma"])
    written = (tmp_path / "biokalma" / "complex_question_graph.json").read_bytes()
    assert hashlib.sha256(written).hexdigest().startswith("fe5f40fe")
    first = len(seen)
    fetch_datasets(["biokalma"], tmp_path, transport=_transport(bodies, seen))
    # Files with a known hash are not downloaded again; prompts (no pinned hash) exist: skipped.
    assert len(seen) == first


def test_unknown_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown dataset"):
        fetch_datasets(["wikidata"], tmp_path)


def test_codex_names_are_derived_from_entities_json(tmp_path: Path) -> None:
    codex = tmp_path / "codex_s"
    (codex / "triples").mkdir(parents=True)
    (codex / "triples" / "train.txt").write_text("Q1\tP27\tQ142\nQ2\tP19\tQ90\n")
    (codex / "triples" / "valid.txt").write_text("")
    (codex / "triples" / "test.txt").write_text("")
    (codex / "entities_en.json").write_text(
        '{"Q1": {"label": "Gaspard  Monge", "description": "French mathematician"},'
        ' "Q142": {"label": "France", "description": ""}, "Q90": {"label": "Paris"},'
        ' "Q999": {"label": "Not in CoDEx-S"}}'
    )
    derive_codex_names(codex)
    names = (codex / "entity2name.txt").read_text().splitlines()
    # Q2 has no entry: no name line; Q999 is not used by any triple; spaces are collapsed.
    assert names == ["Q1\tGaspard Monge", "Q90\tParis", "Q142\tFrance"]
    descriptions = (codex / "entity2des.txt").read_text().splitlines()
    assert descriptions == ["Q1\tFrench mathematician"]
    (codex / "entities_en.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="expected a JSON object"):
        derive_codex_names(codex)
