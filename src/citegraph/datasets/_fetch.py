"""``citegraph data fetch``: download the public originals of the datasets.

Files come from the authors' public repositories at pinned commits and are checked against the
SHA-256 of the copies citegraph is tested on (where known). A file already present with the right
hash is not downloaded again; a download is written to a temporary name and renamed only when
complete, so an interrupted fetch leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import httpx2
from pydantic import BaseModel, ConfigDict

from citegraph.errors import ConfigError, DataError
from citegraph.io import atomic_write, load_json

_GH = "https://raw.githubusercontent.com"
_KALMA = f"{_GH}/lixinze777/Knowledge-aware-Language-Model-Attribution"
_CODEX = f"{_GH}/tsafavi/codex"


class RemoteFile(BaseModel):
    """One downloadable file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    dest: str
    sha256: str | None = None


def _kalma(path: str, dest: str, commit: str, sha: str | None = None) -> RemoteFile:
    return RemoteFile(url=f"{_KALMA}/{commit}/{path}", dest=dest, sha256=sha)


def _codex(path: str, dest: str, sha: str | None = None) -> RemoteFile:
    commit = "e805ea2f512d7f0f8e44f213bc4db51dac0de118"
    if not path.startswith("data/triples"):
        commit = "a481ad254b87a4210cdf2493e0b2ba394808770f"
    return RemoteFile(url=f"{_CODEX}/{commit}/{path}", dest=dest, sha256=sha)


_DATA_COMMIT = "c88d2230610e40140c6a8fcaa933648efb9764f7"
_PROMPT_COMMIT = "c72e09c78b6925c4839cd5c932ff9f0f58b0b7bb"
_PROMPTS = (
    "answer_question_complex_prompt",
    "answer_question_simple_prompt",
    "extend_prompt",
    "generated_question_prompt",
    "gpteval_prompt",
)

#: What each dataset name downloads.
SOURCES: dict[str, tuple[RemoteFile, ...]] = {
    "biokalma": (
        _kalma(
            "dataset/complex_question_graph.json",
            "biokalma/complex_question_graph.json",
            _DATA_COMMIT,
            "fe5f40fedfc0a24a386ca07d16775ff209efe45e72d4668003e2f3aef2eb884d",
        ),
        _kalma(
            "dataset/simple_question_graph.json",
            "biokalma/simple_question_graph.json",
            _DATA_COMMIT,
            "a4c42a7cba6fd9f67da27d7434898d8b818edea8b4a5ea95a062f5368aa89cc1",
        ),
        *(
            _kalma(f"prompt/{p}.json", f"biokalma/prompts/{p}.json", _PROMPT_COMMIT)
            for p in _PROMPTS
        ),
    ),
    "codex-s": (
        _codex(
            "data/triples/codex-s/train.txt",
            "codex_s/triples/train.txt",
            "64f93b7f314f3936a6f65739721429db3f6a7c8f5a1e1104ec3bb544f7434f59",
        ),
        _codex(
            "data/triples/codex-s/valid.txt",
            "codex_s/triples/valid.txt",
            "3831c0e57daef03c3a18cdd1a72e370b496f696c5218883d35c7d2ab8a6a772c",
        ),
        _codex(
            "data/triples/codex-s/test.txt",
            "codex_s/triples/test.txt",
            "27127fcb34688c4778e88a39ef3c9b540807da846021e9d9685660ac1838aca1",
        ),
        _codex("data/relations/en/relations.json", "codex_s/relations_en.json"),
        _codex("data/types/en/types.json", "codex_s/types_en.json"),
        _codex("data/types/entity2types.json", "codex_s/entity2types_all_codex.json"),
        _codex("data/entities/en/entities.json", "codex_s/entities_en.json"),
    ),
}

Progress = Callable[[str, int, int], None]
"""Called as ``progress(dest, done_files, total_files)``."""


def fetch_datasets(
    names: list[str],
    dest: Path,
    *,
    transport: httpx2.BaseTransport | None = None,
    base_url: str | None = None,
    progress: Progress | None = None,
) -> list[Path]:
    """Download datasets into ``dest``.

    Args:
        names: Keys of :data:`SOURCES`.
        dest: The data directory to fill (created if needed).
        transport: An httpx2 transport (tests inject a mock or point at a local server).
        base_url: Replace ``https://raw.githubusercontent.com`` (a mirror, or a test server).
        progress: Optional callback.

    Returns:
        The paths of the files now present.

    Raises:
        ConfigError: an unknown dataset name.
        DataError: a download failed or its SHA-256 differs from the expected one.
    """
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ConfigError(f"unknown dataset(s) {unknown}; known: {sorted(SOURCES)}")
    files = [f for n in names for f in SOURCES[n]]
    out: list[Path] = []
    with httpx2.Client(transport=transport, follow_redirects=True, timeout=60.0) as client:
        for done, remote in enumerate(files, start=1):
            url = remote.url if base_url is None else remote.url.replace(_GH, base_url, 1)
            out.append(_fetch_one(client, url, dest / remote.dest, remote.sha256))
            if progress is not None:
                progress(remote.dest, done, len(files))
    if "codex-s" in names:
        out += derive_codex_names(dest / "codex_s")
    return out


def derive_codex_names(codex_dir: Path) -> list[Path]:
    """Write ``entity2name.txt`` and ``entity2des.txt`` for the entities of CoDEx-S's triples.

    CoDEx ships labels and Wikidata descriptions for all its sizes in ``entities/en/entities.json``
    (``{QID: {"label": ..., "description": ...}}``); the KG loader reads two tab-separated files.
    (The copies in ``../shared/data`` carry Wikipedia extracts as descriptions instead.)

    Raises:
        DataError: ``entities_en.json`` is not the expected JSON object.
    """
    source = codex_dir / "entities_en.json"
    entities = load_json(source)
    if not isinstance(entities, dict):
        raise DataError("expected a JSON object {QID: {label, description}}", path=source)
    used: set[str] = set()
    for split in ("train", "valid", "test"):
        for line in (codex_dir / "triples" / f"{split}.txt").read_text().splitlines():
            parts = line.split("\t")
            if len(parts) == 3:
                used.update((parts[0], parts[2]))
    names, descriptions = [], []
    for qid in sorted(used, key=lambda q: (len(q), q)):
        info = entities.get(qid) or {}
        if info.get("label"):
            names.append(f"{qid}\t{_one_line(info['label'])}\n")
        if info.get("description"):
            descriptions.append(f"{qid}\t{_one_line(info['description'])}\n")
    written = []
    for name, lines in (("entity2name.txt", names), ("entity2des.txt", descriptions)):
        target = codex_dir / name
        atomic_write(target, "".join(lines))
        written.append(target)
    return written


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fetch_one(client: httpx2.Client, url: str, path: Path, sha256: str | None) -> Path:
    if path.exists() and (sha256 is None or _sha256(path.read_bytes()) == sha256):
        return path
    try:
        response = client.get(url)
    except httpx2.HTTPError as exc:
        raise DataError(f"download failed: {url}: {exc}", path=path) from exc
    if response.status_code != 200:
        raise DataError(f"download failed: {url}: HTTP {response.status_code}", path=path)
    body = response.content
    if sha256 is not None and _sha256(body) != sha256:
        raise DataError(
            f"SHA-256 mismatch for {url}: expected {sha256}, got {_sha256(body)}", path=path
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, body)
    return path


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
