"""The public question set on the Hugging Face Hub, pulled once into a local cache.

``[benchmark] questions`` is a local file or ``hf://datasets/ORG/NAME@<commit sha>[/FILE]``.
:func:`pull` downloads that commit into ``[store] questions`` (resumable), checks every file
against the Hub's hashes (git blob sha1, or sha256 for LFS files) and writes a manifest last;
:func:`questions_file` then gives the local file without the network.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from gamut.config import PLACEHOLDER
from scoring.errors import GamutError
from scoring.storage import atomic_write_text

if TYPE_CHECKING:
    from gamut.hub import HubRef

DEFAULT_FILE = "questions.jsonl"
#: Written last, once every file is downloaded and verified: its presence means "complete".
MANIFEST = "gamut-manifest.json"
PULL_COMMAND = "gamut questions pull"
_RETRY = f"run `{PULL_COMMAND}` again: files already downloaded are kept"
#: Limits on what a dataset may hold (the real set: 1,813 questions and their images).
MAX_FILES = 50_000
MAX_BYTES = 20 * 1024**3
_CHUNK = 1 << 20


@dataclass(frozen=True)
class QuestionSet:
    """Where a Hub question set comes from and where its local copy lives."""

    ref: HubRef
    file: str
    folder: Path

    @property
    def uri(self) -> str:
        """The reference as written in the config (without the file when it is the default)."""
        tail = "" if self.file == DEFAULT_FILE else f"/{self.file}"
        return f"hf://datasets/{self.ref.repo_id}@{self.ref.revision}{tail}"


@dataclass(frozen=True)
class QuestionSource:
    """``[benchmark] questions`` as written (``value``) and resolved (``local``), the config
    file, and ``[store] questions`` (``store``)."""

    value: str
    config_file: Path
    local: Path
    store: Path


@dataclass(frozen=True)
class PullResult:
    """What :func:`pull` did."""

    folder: Path
    questions: Path
    files: int
    bytes: int
    already: bool


def question_set(source: QuestionSource) -> QuestionSet | None:
    """The Hub question set named by the config, or None for a local questions file."""
    value = source.value
    from gamut.hub import HubRef, check_published, is_hub_uri, parse_hub_uri

    if not is_hub_uri(value) and PLACEHOLDER not in value:
        return None

    check_published("benchmark.questions", value, source.config_file)
    ref = parse_hub_uri(value, key="benchmark.questions")
    file = ref.subfolder or DEFAULT_FILE
    org, name = ref.repo_id.split("/")
    folder = source.store / f"{org}--{name}" / ref.revision
    return QuestionSet(HubRef(ref.repo_id, ref.revision), file, folder)


def questions_file(source: QuestionSource) -> Path:
    """The local questions file: the configured path, or the pulled copy of a Hub set."""
    qs = question_set(source)
    if qs is None:
        return source.local
    if not (qs.folder / MANIFEST).is_file():
        raise GamutError(
            f"the public questions {qs.uri} are not in the local cache ({qs.folder}); fill it "
            f"once with `{PULL_COMMAND}` (it downloads them at the pinned revision)"
        )
    return qs.folder / qs.file


def file_hash(path: Path, algorithm: str) -> str:
    """The Hub's hash of a file: ``sha256`` (LFS files), else its git blob sha1."""
    if algorithm == "sha256":
        h = hashlib.sha256()
    else:
        h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class _Entry:
    path: str
    size: int
    algorithm: str  # "git-sha1" or "sha256"
    digest: str


def _safe_repo_path(name: str) -> bool:
    p = PurePosixPath(name)
    return not p.is_absolute() and ".." not in p.parts and "\\" not in name and bool(p.parts)


def _tree(ref: HubRef, where: str) -> list[_Entry]:
    from huggingface_hub.hf_api import RepoFile

    from gamut.hub import hub_api, hub_errors, hub_token

    api = hub_api(hub_token() or False)
    with hub_errors("public questions", where, "benchmark.questions", _RETRY):
        items = list(
            api.list_repo_tree(
                ref.repo_id, repo_type="dataset", revision=ref.revision, recursive=True
            )
        )
    entries: list[_Entry] = []
    for item in items:
        if not isinstance(item, RepoFile):
            continue
        if not _safe_repo_path(item.path):
            raise GamutError(f"public questions: {where} lists an unsafe file name {item.path!r}")
        if item.lfs is not None:
            entries.append(_Entry(item.path, item.lfs.size, "sha256", item.lfs.sha256))
        else:
            entries.append(_Entry(item.path, item.size, "git-sha1", item.blob_id))
    if len(entries) > MAX_FILES or sum(e.size for e in entries) > MAX_BYTES:
        raise GamutError(
            f"public questions: {where} holds {len(entries)} files of "
            f"{sum(e.size for e in entries):,} bytes, more than this tool accepts "
            f"({MAX_FILES} files, {MAX_BYTES:,} bytes); check benchmark.questions"
        )
    return entries


def _verify(folder: Path, entries: list[_Entry]) -> list[str]:
    """Files whose bytes differ from the Hub's hash; each is removed, to be fetched again."""
    bad: list[str] = []
    for e in entries:
        path = folder / e.path
        if not path.is_file():
            bad.append(f"{e.path} (missing)")
            continue
        digest = file_hash(path, e.algorithm)
        if digest != e.digest:
            bad.append(f"{e.path} ({e.algorithm} {digest[:12]}, expected {e.digest[:12]})")
            path.unlink()
    return bad


def pull(source: QuestionSource) -> PullResult:
    """Download the configured Hub question set once into ``[store] questions``, checksummed.

    A complete copy is not downloaded again; an interrupted one continues. A file whose hash
    does not match the Hub's is deleted and reported; the manifest, written last, records every
    file's hash once the questions file parses.
    """
    from huggingface_hub import snapshot_download

    from gamut.hub import hub_endpoint, hub_errors, hub_token

    qs = question_set(source)
    if qs is None:
        raise GamutError(
            f"{source.config_file}: benchmark.questions is the local file {source.value!r}; "
            "there is nothing to pull (it is read directly)"
        )
    manifest = qs.folder / MANIFEST
    if manifest.is_file():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        files = data.get("files", {})
        total = sum(int(f.get("size", 0)) for f in files.values())
        return PullResult(qs.folder, qs.folder / qs.file, len(files), total, already=True)
    where = f"{qs.ref.repo_id}@{qs.ref.revision[:12]} on {hub_endpoint()}"
    entries = _tree(qs.ref, where)
    if qs.file not in {e.path for e in entries}:
        raise GamutError(
            f"public questions: {where} has no file {qs.file!r}; check the path in "
            "benchmark.questions"
        )
    qs.folder.mkdir(parents=True, exist_ok=True)
    token = hub_token()
    with hub_errors("public questions", where, "benchmark.questions", _RETRY):
        snapshot_download(
            qs.ref.repo_id,
            repo_type="dataset",
            revision=qs.ref.revision,
            local_dir=qs.folder,
            token=token if token else False,
            endpoint=hub_endpoint(),
        )
    bad = _verify(qs.folder, entries)
    if bad:
        listed = "; ".join(bad[:20]) + (f"; and {len(bad) - 20} more" if len(bad) > 20 else "")
        raise GamutError(
            f"public questions: {len(bad)} file(s) of {where} do not match the Hub's checksums "
            f"and were removed: {listed}. Run `{PULL_COMMAND}` again to fetch them"
        )
    from scoring.questions import load_questions

    questions = load_questions(qs.folder / qs.file)
    record = {
        "repo_id": qs.ref.repo_id,
        "revision": qs.ref.revision,
        "file": qs.file,
        "questions": len(questions),
        "files": {e.path: {"size": e.size, e.algorithm: e.digest} for e in entries},
    }
    atomic_write_text(manifest, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return PullResult(
        qs.folder, qs.folder / qs.file, len(entries), sum(e.size for e in entries), already=False
    )
